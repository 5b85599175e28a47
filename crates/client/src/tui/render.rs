//! The screens as lines of styled text.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use spades_engine::{Card, Legal, Outcome, Seat, Suit, Team};
use spades_protocol::{SeatStatus, TablePhase, TableView};

use super::{App, Link, Lobby, Screen, TableScreen, Tone, clock_left_ms, hand_cards, mmss, my_turn};

/// The lobby's width: it fits an 80-column terminal.
pub const LOBBY_WIDTH: usize = 80;

/// A card with its suit's symbol: `Q♥`, `10♠`.
pub fn card_text(card: Card) -> String {
    let text = card.to_string();
    let rank = &text[..text.len() - 1];
    let rank = if rank == "T" { "10" } else { rank };
    let suit = match card.suit() {
        Suit::Spades => '♠',
        Suit::Hearts => '♥',
        Suit::Diamonds => '♦',
        Suit::Clubs => '♣',
    };
    format!("{rank}{suit}")
}

/// Hearts and diamonds are red, spades and clubs the terminal's own colour.
pub fn card_style(card: Card) -> Style {
    match card.suit() {
        Suit::Hearts | Suit::Diamonds => Style::default().fg(Color::Red),
        Suit::Spades | Suit::Clubs => Style::default(),
    }
}

/// A signed number of points: `+41`, `−100`, `0`.
fn signed(n: i32) -> String {
    match n.cmp(&0) {
        std::cmp::Ordering::Greater => format!("+{n}"),
        std::cmp::Ordering::Less => format!("-{}", -i64::from(n)),
        std::cmp::Ordering::Equal => "0".to_owned(),
    }
}

/// The lines without their styles (for tests and logs).
pub fn plain(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect()).collect()
}

fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

fn dim() -> Style {
    Style::default().fg(Color::DarkGray)
}

pub(super) fn lines(app: &App) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    match &app.screen {
        Screen::Lobby(l) => lobby(app, l, &mut out),
        Screen::Table(t) => table(app, t, &mut out),
    }
    out.push(Line::default());
    if let Some((tone, text)) = &app.status {
        let style = match tone {
            Tone::Info => Style::default().fg(Color::Cyan),
            Tone::Error => Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        };
        let mark = if *tone == Tone::Error { "! " } else { "· " };
        out.push(Line::from(Span::styled(format!("{mark}{text}"), style)));
    }
    if app.help {
        out.push(Line::default());
        for h in help(app) {
            out.push(Line::from(Span::styled(h.to_owned(), dim())));
        }
    } else {
        out.push(Line::from(Span::styled("? for help, Ctrl-C quits".to_owned(), dim())));
    }
    out
}

fn help(app: &App) -> &'static [&'static str] {
    match app.screen {
        Screen::Lobby(_) => &[
            "↑/↓ or k/j   choose a table",
            "Enter        sit at the chosen table (first empty seat)",
            "w            watch the chosen table",
            "c            create a table (type its name, Enter)",
            "r            refresh the list (it also refreshes every 5 s)",
            "q or Esc     quit",
        ],
        Screen::Table(_) => &[
            "bidding      type a number (0 = nil) and Enter",
            "playing      ←/→ choose a card, Enter plays it; or type it (QS, 10H, 2C) and Enter",
            "b / s        owner, before the start: bots in the empty seats / start the match",
            "/takeover    play your seat again after the autopilot took it",
            "/leave       leave the match for good (a bot plays your seat)",
            "/lobby, Esc  back to the lobby (Esc twice during a match)",
        ],
    }
}

fn lobby(app: &App, l: &Lobby, out: &mut Vec<Line<'static>>) {
    let title = format!(" · {} · playing as {}", app.server, app.name);
    out.push(Line::from(vec![
        Span::styled("Spades".to_owned(), bold()),
        Span::raw(truncate(&title, LOBBY_WIDTH - "Spades".len())),
    ]));
    out.push(Line::default());
    if let Some((name, options)) = &l.choosing {
        out.push(Line::from(vec![
            Span::raw("New table: ".to_owned()),
            Span::styled(truncate(name, LOBBY_WIDTH - 11), bold()),
        ]));
        for (key, what, value) in super::options::describe(options) {
            out.push(Line::from(vec![
                Span::styled(format!("  {key}  "), bold()),
                Span::raw(format!("{what:<20} {}", truncate(&value, LOBBY_WIDTH - 26))),
            ]));
        }
        out.push(Line::from(Span::styled(
            "  a key changes its option · Enter creates the table · Esc cancels".to_owned(),
            dim(),
        )));
        out.push(Line::default());
    }
    if let Some(name) = &l.naming {
        out.push(Line::from(vec![
            Span::raw("New table name: ".to_owned()),
            Span::styled(format!("{name}_"), bold()),
            Span::styled("   (Enter creates, Esc cancels)".to_owned(), dim()),
        ]));
        out.push(Line::default());
    }
    if l.tables.is_empty() {
        let text = if l.loading { "loading the tables…" } else { "no tables yet: press c to create one" };
        out.push(Line::from(Span::styled(text.to_owned(), dim())));
        return;
    }
    out.push(Line::from(Span::styled(
        format!(
            "  {:<22} {:<8} {:<4} {:>4} {:>11}  {}",
            "table", "phase", "open", "hand", "score", "players"
        ),
        bold(),
    )));
    for (i, t) in l.tables.iter().enumerate() {
        let phase = phase_name(t.phase);
        let players: Vec<String> = t.seats.iter().filter_map(|s| s.name.clone()).collect();
        let text = format!(
            "{} {:<22} {:<8} {:<4} {:>4} {:>11}  ",
            if i == l.selected { ">" } else { " " },
            truncate(&t.name, 22),
            phase,
            format!("{}/4", t.open_seats),
            t.hand_number,
            format!("{} : {}", t.scores[0], t.scores[1]),
        );
        // The players take what is left of the 80 columns.
        let room = LOBBY_WIDTH.saturating_sub(text.chars().count());
        let text = format!("{text}{}", truncate(&players.join(", "), room));
        let style = if i == l.selected {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        out.push(Line::from(Span::styled(text, style)));
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_owned() } else { s.chars().take(n - 1).chain(['…']).collect() }
}

fn phase_name(p: TablePhase) -> &'static str {
    match p {
        TablePhase::Lobby => "lobby",
        TablePhase::Bidding => "bidding",
        TablePhase::Playing => "playing",
        TablePhase::Finished => "finished",
    }
}

fn status_name(s: SeatStatus) -> &'static str {
    match s {
        SeatStatus::Empty => "empty",
        SeatStatus::Present => "present",
        SeatStatus::Away => "away",
        SeatStatus::Autopilot => "autopilot",
        SeatStatus::Bot => "bot",
        SeatStatus::Left => "left",
    }
}

fn table(app: &App, t: &TableScreen, out: &mut Vec<Line<'static>>) {
    let Some(v) = t.view.as_deref() else {
        out.push(Line::from(Span::styled("Spades".to_owned(), bold())));
        out.push(Line::from(Span::styled("waiting for the table…".to_owned(), dim())));
        return;
    };
    let game = v.game.as_ref();
    let mut title = vec![
        Span::styled(format!("Spades · {}", v.name), bold()),
        Span::raw(format!(" · {}", phase_name(v.phase))),
    ];
    if let Some(g) = game {
        title.push(Span::raw(format!(" · hand {}", g.hand_number)));
    }
    title.push(Span::raw(match v.you {
        Some(s) => format!(" · you are {s}"),
        None => " · watching".to_owned(),
    }));
    let (link, link_style) = match &t.link {
        Link::Up => ("connected".to_owned(), Style::default().fg(Color::Green)),
        Link::Reconnecting { attempt, at_ms, reason } => (
            format!(
                "connection lost ({reason}): reconnecting in {} (attempt {attempt})",
                mmss(at_ms.saturating_sub(app.now_ms))
            ),
            Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ),
        Link::Ended(_) => ("disconnected".to_owned(), Style::default().fg(Color::Red)),
    };
    title.push(Span::raw("   ".to_owned()));
    title.push(Span::styled(link, link_style));
    out.push(Line::from(title));
    out.push(Line::default());

    // The seats.
    out.push(Line::from(Span::styled(
        format!("  {:<6}   {:<22} {:>4} {:>6}  {}", "seat", "player", "bid", "tricks", "status"),
        bold(),
    )));
    let left = clock_left_ms(t, app.now_ms);
    for info in &v.seats {
        let seat = info.seat;
        let name = info.name.clone().unwrap_or_else(|| "—".to_owned());
        let name = if v.you == Some(seat) { format!("{name} (you)") } else { name };
        let dealer = game.is_some_and(|g| g.dealer == seat) && v.phase != TablePhase::Finished;
        let bid = game
            .and_then(|g| g.bids[seat])
            .map_or("".to_owned(), |b| if b == 0 { "nil".into() } else { b.to_string() });
        let tricks = game.map_or(String::new(), |g| g.tricks_won[seat].to_string());
        let mut status = status_name(info.status).to_owned();
        if info.status == SeatStatus::Away
            && let Some(until) = info.away_until
        {
            let ms =
                until.saturating_sub(v.server_time).saturating_sub(app.now_ms.saturating_sub(t.view_at_ms));
            status.push_str(&format!(" (seat held {})", mmss(ms)));
        }
        let on_turn = game.and_then(|g| g.turn) == Some(seat);
        let mut spans = vec![Span::raw(format!(
            "{} {:<6} {} {:<22} {:>4} {:>6}  {}",
            if on_turn { "▶" } else { " " },
            seat.name(),
            if dealer { "D" } else { " " },
            truncate(&name, 22),
            bid,
            tricks,
            status
        ))];
        if on_turn && v.phase != TablePhase::Finished {
            match (v.clock, left) {
                (Some(c), Some(ms)) if c.seat == seat => {
                    let style = if ms < 10_000 { Style::default().fg(Color::Red) } else { Style::default() };
                    spans.push(Span::styled(
                        format!("   ⏱ {} left", mmss(ms)),
                        style.add_modifier(Modifier::BOLD),
                    ));
                }
                _ => spans.push(Span::styled("   (thinking)".to_owned(), dim())),
            }
        }
        let style = if on_turn { bold() } else { Style::default() };
        out.push(Line::from(spans).style(style));
    }
    out.push(Line::default());

    let Some(g) = game else {
        out.push(Line::from(Span::styled(
            if t.owner_token.is_some() {
                "Waiting for players. You own the table: b puts bots in the empty seats, s starts."
            } else {
                "Waiting for the owner to start the match."
            }
            .to_owned(),
            dim(),
        )));
        return;
    };

    // Scores.
    let target = match g.rules.match_end {
        spades_engine::MatchEnd::Target(t) => format!("first to {t}"),
        spades_engine::MatchEnd::Hands(h) => format!("{h} hands"),
    };
    out.push(Line::from(vec![
        Span::styled("Score  ".to_owned(), bold()),
        Span::raw(format!(
            "North-South {} ({} bags)   East-West {} ({} bags)   · {target}",
            g.scores[Team::NorthSouth],
            g.bags[Team::NorthSouth],
            g.scores[Team::EastWest],
            g.bags[Team::EastWest]
        )),
    ]));
    if let Some(r) = &g.last_hand {
        out.push(Line::from(Span::styled(format!("Hand {} scored", r.hand_number), bold())));
        for tm in [Team::NorthSouth, Team::EastWest] {
            out.push(Line::from(Span::raw(breakdown(r, tm))));
        }
    }
    if let Some(result) = &g.result {
        let text = match result.outcome {
            Outcome::Win(team) => format!(
                "Match over: {} win, {} to {}, after {} hands.",
                team.name(),
                result.scores[team],
                result.scores[team.other()],
                result.hands_played
            ),
            Outcome::Draw => format!("Match over: a draw after {} hands.", result.hands_played),
        };
        out.push(Line::default());
        out.push(Line::from(Span::styled(text, bold().fg(Color::Green))));
        out.push(Line::from(Span::styled("Enter or Esc: back to the lobby".to_owned(), dim())));
        return;
    }
    out.push(Line::default());

    // The trick.
    let mut trick = vec![Span::styled("Trick  ".to_owned(), bold())];
    for (s, c) in g.trick.plays() {
        trick.push(Span::raw(format!("{}: ", short(s))));
        trick.push(Span::styled(card_text(c), card_style(c).add_modifier(Modifier::BOLD)));
        trick.push(Span::raw("  ".to_owned()));
    }
    if g.trick.plays().next().is_none() {
        trick.push(Span::raw("—".to_owned()));
    }
    trick.push(Span::styled(
        if g.spades_broken { "   spades broken".to_owned() } else { String::new() },
        dim(),
    ));
    out.push(Line::from(trick));
    if let Some(last) = &g.last_trick {
        let mut spans = vec![Span::styled("Last   ".to_owned(), dim())];
        for (s, c) in last.plays() {
            spans.push(Span::styled(format!("{}: ", short(s)), dim()));
            spans.push(Span::styled(card_text(c), card_style(c)));
            spans.push(Span::raw("  ".to_owned()));
        }
        if let Some(w) = last.winner() {
            spans.push(Span::styled(format!("→ {}", w.name()), dim()));
        }
        out.push(Line::from(spans));
    }
    out.push(Line::default());

    // The hand.
    if v.you.is_some() {
        let cards = hand_cards(t);
        let legal = match g.legal {
            Legal::Play { cards } => Some(cards),
            _ => None,
        };
        let mut spans = vec![Span::styled("Hand   ".to_owned(), bold())];
        let mut prev_suit = None;
        for (i, card) in cards.iter().enumerate() {
            if prev_suit.is_some_and(|s| s != card.suit()) {
                spans.push(Span::raw("  ".to_owned()));
            }
            prev_suit = Some(card.suit());
            let mut style = card_style(*card);
            if let Some(l) = legal {
                style = if l.contains(*card) {
                    style.add_modifier(Modifier::BOLD)
                } else {
                    style.add_modifier(Modifier::DIM)
                };
                if i == t.cursor {
                    style = style.add_modifier(Modifier::REVERSED);
                }
            }
            let shown = card_text(*card);
            let text =
                if legal.is_some() && i == t.cursor { format!("[{shown}]") } else { format!(" {shown} ") };
            spans.push(Span::styled(text, style));
        }
        out.push(Line::from(spans));
        out.push(Line::default());
        prompt(t, v, out);
    }
}

/// One team's whole scoring of a hand: the contract, bags, nils and the
/// bag penalty, adding up to the hand's points and the new score.
fn breakdown(r: &spades_engine::HandResult, tm: Team) -> String {
    let s = &r.teams[tm];
    let contract = if s.contract == 0 {
        "no contract".to_owned()
    } else {
        format!(
            "bid {} took {} {} {}",
            s.contract,
            s.counted_tricks,
            if s.made { "made" } else { "set" },
            signed(s.contract_points)
        )
    };
    let mut parts = vec![contract, format!("bags {} {}", s.bags, signed(s.bag_points))];
    if s.nil_points != 0 {
        parts.push(format!("nil {}", signed(s.nil_points)));
    }
    if s.bag_penalty != 0 {
        parts.push(format!("bag penalty {}", signed(s.bag_penalty)));
    }
    format!(
        "  {:<11} {} = {} → {} ({} bags)",
        tm.name(),
        parts.join(", "),
        signed(s.hand_points),
        s.score,
        s.bag_count
    )
}

fn prompt(t: &TableScreen, v: &TableView, out: &mut Vec<Line<'static>>) {
    let Some(g) = v.game.as_ref() else { return };
    let ask = if my_turn(t) {
        match g.legal {
            Legal::Bid { min, max } => {
                format!("Your bid ({min}–{max}{}): ", if min == 0 { ", 0 = nil" } else { "" })
            }
            Legal::Play { .. } => "Your card (←/→ and Enter, or type e.g. QS): ".to_owned(),
            Legal::None => "> ".to_owned(),
        }
    } else {
        let who = g.turn.map_or("—", Seat::name);
        format!("Waiting for {who}. > ")
    };
    out.push(Line::from(vec![
        Span::styled(ask, if my_turn(t) { bold().fg(Color::Yellow) } else { dim() }),
        Span::styled(format!("{}_", t.input), bold()),
    ]));
}

fn short(s: Seat) -> &'static str {
    match s {
        Seat::North => "N",
        Seat::East => "E",
        Seat::South => "S",
        Seat::West => "W",
    }
}
