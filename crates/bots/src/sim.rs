//! Playing a sampled deal to the end with the rule policy at every seat.
//!
//! Each simulated seat decides from its own cards and the public record
//! (bids, played cards, voids shown so far), exactly as the rule bot does at
//! a real table: the simulation never lets a seat peek at another's cards.

use spades_engine::{Action, Events, Hand, Legal, Seat};

use crate::know::{PlayCtx, observe};
use crate::rule::{rule_bid, rule_play};

/// Applies one action to a simulated hand, recording any void it shows.
/// False if the hand refused it (never expected; the caller stops).
#[inline]
pub(crate) fn step(h: &mut Hand, voids: &mut [u8; 4], seat: Seat, action: Action, ev: &mut Events) -> bool {
    if let Action::Play(card) = action {
        observe(voids, h.rules(), seat, card, h.trick().led_suit(), h.spades_broken());
    }
    ev.clear();
    h.apply(seat, action, ev).is_ok()
}

/// The rule policy's action for the seat on turn in a simulated hand.
#[inline]
pub(crate) fn policy(h: &Hand, seat: Seat, voids: &[u8; 4]) -> Option<Action> {
    match h.legal() {
        Legal::Bid { .. } => Some(Action::Bid(rule_bid(h.cards(seat), seat, &h.bids().0, h.rules()))),
        Legal::Play { cards } => {
            let bids = h.final_bids().map_or([1; 4], |b| b.0);
            let ctx = PlayCtx {
                me: seat,
                hand: h.cards(seat),
                legal: cards,
                trick: *h.trick(),
                played: h.played(),
                voids: *voids,
                bids,
                won: h.tricks_won().0,
                rules: *h.rules(),
            };
            rule_play(&ctx).map(Action::Play)
        }
        Legal::None => None,
    }
}

/// Plays the hand to its end (remaining bids included) with the rule policy.
pub(crate) fn rollout(h: &mut Hand, voids: &mut [u8; 4], ev: &mut Events) {
    while let Some(seat) = h.turn() {
        let Some(action) = policy(h, seat, voids) else { break };
        if !step(h, voids, seat, action, ev) {
            break;
        }
    }
}
