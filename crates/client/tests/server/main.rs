//! The client library, the load generator and the terminal client against
//! the real server, started in-process on port 0.

mod fair;
mod helpers;
mod library;
mod load;
mod tls;
mod tui;
