//! The terminal client's state machine and driver against the real
//! server: create a table, fill it with bots, start, and play a whole hand
//! by key presses.

use std::time::Instant;

use spades_client::tui::{App, Driver, Effect, Input, Key, Screen, my_turn, plain};
use spades_client::{Client, SessionOptions};
use spades_engine::Legal;

use crate::helpers::*;

struct Harness {
    app: App,
    driver: Driver,
    started: Instant,
}

impl Harness {
    fn now(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    async fn feed(&mut self, input: Input) {
        let now = self.now();
        for effect in self.app.update(now, input) {
            assert_ne!(effect, Effect::Quit);
            self.driver.perform(effect).await;
        }
    }

    async fn keys(&mut self, keys: &[Key]) {
        for k in keys {
            self.feed(Input::Key(*k)).await;
        }
    }

    /// Feeds the driver's inputs until `done` holds.
    async fn until(&mut self, what: &str, mut done: impl FnMut(&App) -> bool) {
        while !done(&self.app) {
            let input = within(what, self.driver.next_input()).await;
            self.feed(input).await;
        }
    }

    fn screen(&self) -> String {
        plain(&self.app.lines()).join("\n")
    }
}

fn chars(s: &str) -> Vec<Key> {
    s.chars().map(Key::Char).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_creates_a_table_and_plays_a_hand_by_keys() {
    let server = spawn_server(test_config()).await;
    let client = Client::new(&server.url()).unwrap();
    let mut h = Harness {
        app: App::new(server.url(), "Ann"),
        driver: Driver::new(client, "Ann", SessionOptions::default()),
        started: Instant::now(),
    };
    h.feed(Input::Tick).await;
    h.until("the table list", |a| matches!(&a.screen, Screen::Lobby(l) if !l.loading)).await;
    assert!(h.screen().contains("no tables yet"), "{}", h.screen());

    h.keys(&[Key::Char('c')]).await;
    h.keys(&chars("Terminal test")).await;
    h.keys(&[Key::Enter]).await;
    // The options, one key each: 9 hands.
    assert!(h.screen().contains("match end"), "{}", h.screen());
    h.keys(&[Key::Char('m'), Key::Char('m'), Key::Char('m'), Key::Char('m'), Key::Char('m')]).await;
    assert!(h.screen().contains("9 hands"), "{}", h.screen());
    h.keys(&[Key::Enter]).await;
    h.until("sitting down", |a| a.table().is_some_and(|t| t.view.is_some())).await;
    assert!(h.screen().contains("Spades · Terminal test · lobby"), "{}", h.screen());
    let status = Client::new(&server.url()).unwrap().table(h.app.table().unwrap().table).await.unwrap();
    assert_eq!(
        status.summary.options.rules.match_end,
        spades_engine::MatchEnd::Hands(9),
        "the options chosen"
    );
    h.keys(&[Key::Char('b')]).await;
    h.until("the bots", |a| {
        a.table().and_then(|t| t.view.as_ref()).is_some_and(|v| v.seats.iter().all(|s| s.name.is_some()))
    })
    .await;
    h.keys(&[Key::Char('s')]).await;

    // Play by keys until the second hand is dealt: a bid typed, cards
    // chosen with the arrows (the first playable card is highlighted).
    let mut moves = 0;
    loop {
        let (hand, turn, legal) = {
            let t = h.app.table().unwrap();
            let g = t.view.as_ref().and_then(|v| v.game.as_ref());
            (g.map(|g| g.hand_number), my_turn(t) && !t.awaiting, g.map(|g| g.legal))
        };
        if hand.is_some_and(|n| n >= 2) {
            break;
        }
        if turn {
            assert!(h.screen().contains(" left"), "the clock is shown: {}", h.screen());
            match legal {
                Some(Legal::Bid { .. }) => {
                    h.keys(&chars("3")).await;
                    h.keys(&[Key::Enter]).await;
                }
                Some(Legal::Play { .. }) => {
                    assert!(h.screen().contains("Your card"), "{}", h.screen());
                    h.keys(&[Key::Enter]).await;
                }
                _ => {}
            }
            moves += 1;
            assert!(moves < 40, "too many moves for one hand");
        }
        // Wait for the next input (the ack, views).
        let input = within("the game to go on", h.driver.next_input()).await;
        h.feed(input).await;
        let screen = h.screen();
        assert!(!screen.contains("! "), "a move was refused: {screen}");
    }
    assert!(moves >= 14, "a bid and thirteen cards: {moves}");
    let screen = h.screen();
    assert!(screen.contains("hand 2"), "{screen}");
    assert!(screen.contains("Hand 1 "), "the last hand's scoring is shown: {screen}");

    // A bad card is explained, then the player leaves for the lobby.
    h.keys(&chars("zz")).await;
    h.keys(&[Key::Enter]).await;
    assert!(h.screen().contains("\"zz\" is not"), "{}", h.screen());
    h.keys(&chars("/lobby")).await;
    h.keys(&[Key::Enter]).await;
    h.until("the lobby", |a| matches!(&a.screen, Screen::Lobby(l) if !l.loading)).await;
    assert!(h.screen().contains("Terminal test"), "{}", h.screen());
    server.stop().await;
}
