//! End-to-end tests: the real server on an ephemeral port, real WebSocket
//! and HTTP clients.

mod api_edges;
mod away;
mod clocks;
mod cluster;
mod connections;
mod crash;
mod defences;
mod friends;
mod hardening;
mod helpers;
mod match_play;
mod ops;
mod refusals;
mod rest;
mod turns;
