//! Duplicate tournaments between bots: the library behind the `tournament`
//! binary (and the in-suite smoke tournament).
//!
//! **Format.** Deal `k` of a run comes from seed `first_seed + k`, exactly as
//! the engine deals hand 1 of a match with that seed. Each deal is played
//! twice, as a single hand from a 0–0 score: once as dealt, once rotated one
//! seat (every hand moves one seat left, and so does the dealer) with the bots
//! staying in their chairs. Each partnership therefore plays both sides of
//! the same cards from the same positions relative to the dealer, and the
//! luck of the deal cancels. (Rotating the cards instead of moving the bots
//! also makes the self-play control meaningful: a bot whose play depends on
//! which physical seat it sits in shows a non-zero margin against itself.)
//! Bot A sits North–South on even deals and East–West on odd ones.
//!
//! **Games.** Paired 500-point matches (the engine's default rules): match
//! `g` uses seed `game_seed + g`; the second match of the pair rotates every
//! deal one seat, as above.
//!
//! **Margin.** Per deal, the mean over its two games of A's hand points minus
//! B's, each bag charged its share of the default bag penalty (10 bags cost
//! 100, so each bag is worth +1 − 10). The raw SPEC §2 hand points (from
//! 0–0, where no penalty can fall) are reported too.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use spades_engine::{Action, HandResult, Match, MatchResult, Outcome, Rules, Seat, Team, first_dealer};

use crate::{Budget, Strength, decide_with, rng};

/// One side of a pairing: a strength and its search budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contestant {
    /// How it plays.
    pub strength: Strength,
    /// Its search budget (search only).
    pub budget: Budget,
}

impl Contestant {
    /// A contestant with the default budget.
    pub fn new(strength: Strength) -> Contestant {
        Contestant { strength, budget: Budget::DEFAULT }
    }

    /// The name used in reports: `random`, `rule`, `search` or
    /// `search:<play worlds>` for a non-default budget.
    pub fn label(&self) -> String {
        let d = Budget::DEFAULT;
        match self.strength {
            Strength::Search if self.budget.endgame != d.endgame => {
                format!("search:{}:{}", self.budget.play_worlds, self.budget.endgame)
            }
            Strength::Search if self.budget.play_worlds != d.play_worlds => {
                format!("search:{}", self.budget.play_worlds)
            }
            s => s.name().to_string(),
        }
    }
}

impl std::str::FromStr for Contestant {
    type Err = String;

    /// `random`, `rule`, `search`, `search:<worlds>` (play worlds; the bid
    /// worlds scale with them) or `search:<worlds>:<endgame>` (also the
    /// cards per seat from which simulated deals are solved exactly).
    fn from_str(s: &str) -> Result<Contestant, String> {
        let mut parts = s.split(':');
        let strength: Strength = parts.next().unwrap_or_default().parse()?;
        let mut c = Contestant::new(strength);
        let num = |p: &str| p.parse::<u32>().map_err(|e| format!("bad number {p:?} in {s:?}: {e}"));
        if let Some(w) = parts.next() {
            if strength != Strength::Search {
                return Err(format!("only the search bot takes a budget ({s:?})"));
            }
            let factor = f64::from(num(w)?.max(1)) / f64::from(Budget::DEFAULT.play_worlds);
            c.budget = Budget::DEFAULT.scaled(factor);
        }
        if let Some(e) = parts.next() {
            c.budget.endgame = num(e)?.min(13) as u8;
        }
        if parts.next().is_some() {
            return Err(format!("too many ':' in {s:?}"));
        }
        Ok(c)
    }
}

/// What to play.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Bot A.
    pub a: Contestant,
    /// Bot B.
    pub b: Contestant,
    /// Number of duplicate deals (each played twice).
    pub deals: u32,
    /// Deal `k` (0-based) uses seed `first_seed + k`.
    pub first_seed: u64,
    /// Number of paired 500-point matches (each played twice).
    pub games: u32,
    /// Match `g` (0-based) uses seed `game_seed + g`.
    pub game_seed: u64,
    /// Worker threads (each decision runs on one thread).
    pub threads: usize,
    /// The rules (the project's defaults unless testing options).
    pub rules: Rules,
    /// Print progress to stderr.
    pub progress: bool,
}

impl Config {
    /// A run of `deals` duplicate deals and `games` paired matches between
    /// `a` and `b` under the default rules, seeds from 1 and 1,000,001.
    pub fn new(a: Contestant, b: Contestant, deals: u32, games: u32) -> Config {
        Config {
            a,
            b,
            deals,
            first_seed: 1,
            games,
            game_seed: 1_000_001,
            threads: 1,
            rules: Rules::default(),
            progress: false,
        }
    }
}

/// The match from `seed` with every deal (and dealer) turned `rotation`
/// seats to the left: rotation 1 gives each partnership the other's cards.
fn rotated(rules: Rules, seed: u64, rotation: u8) -> Match {
    Match::with_first_dealer(rules, seed, first_dealer(seed).offset(rotation))
}

// ---------------------------------------------------------------------------
// Playing games
// ---------------------------------------------------------------------------

/// Decision times of one side, in nanoseconds: wall clock and the CPU time
/// of the deciding thread.
#[derive(Debug, Clone, Default)]
struct Times {
    bid: Vec<u64>,
    card: Vec<u64>,
    bid_cpu: Vec<u64>,
    card_cpu: Vec<u64>,
}

impl Times {
    fn extend(&mut self, other: Times) {
        self.bid.extend(other.bid);
        self.card.extend(other.card);
        self.bid_cpu.extend(other.bid_cpu);
        self.card_cpu.extend(other.card_cpu);
    }
}

/// One game's hands, from A's side.
#[derive(Debug, Clone)]
struct GameRecord {
    a_team: Team,
    hands: Vec<HandResult>,
    result: Option<MatchResult>,
}

/// Plays a table until `stop` says so; times each decision by side.
fn run_table(
    cfg: &Config,
    table: &mut Match,
    a_team: Team,
    seed: u64,
    times: &mut [Times; 2],
    stop: impl Fn(&Match) -> bool,
) -> Result<(), String> {
    let mut ply = 0u64;
    let mut hand_no = 0usize;
    while let Some(seat) = table.turn() {
        if stop(table) {
            break;
        }
        if table.results().len() != hand_no {
            hand_no = table.results().len();
            ply = 0;
        }
        let side = usize::from(seat.team() != a_team);
        let who = if side == 0 { &cfg.a } else { &cfg.b };
        let view = table.view(Some(seat));
        // The seed depends on the deal and the move number only, not on the
        // physical seat: rotated games see the same seeds at the same points.
        let dseed = rng::mix(rng::mix(seed, hand_no as u64), ply);
        let cpu = cpu_time::ThreadTime::try_now().ok();
        let started = Instant::now();
        let action = decide_with(who.strength, &who.budget, &view, dseed)
            .ok_or_else(|| format!("{} had no move for {seat} (seed {seed})", who.label()))?;
        let nanos = started.elapsed().as_nanos() as u64;
        // Without a thread clock (an exotic platform), CPU time = wall time.
        let cpu_nanos = cpu.map_or(nanos, |c| c.elapsed().as_nanos() as u64);
        let t = &mut times[side];
        match action {
            Action::Bid(_) => {
                t.bid.push(nanos);
                t.bid_cpu.push(cpu_nanos);
            }
            Action::Play(_) => {
                t.card.push(nanos);
                t.card_cpu.push(cpu_nanos);
            }
        }
        table.apply(seat, action).map_err(|e| {
            format!("ILLEGAL MOVE by {} at {seat}: {action:?}: {e} (seed {seed})", who.label())
        })?;
        ply += 1;
    }
    Ok(())
}

/// Bot A's team at deal or match number `k`: alternate the physical seats.
fn a_team(k: u64) -> Team {
    if k.is_multiple_of(2) { Team::NorthSouth } else { Team::EastWest }
}

/// One duplicate deal: the same cards played twice (rotated).
fn play_deal(cfg: &Config, k: u64, times: &mut [Times; 2]) -> Result<[GameRecord; 2], String> {
    let seed = cfg.first_seed + k;
    let team = a_team(k);
    let mut games = Vec::with_capacity(2);
    for rotation in 0..2u8 {
        let mut t = rotated(cfg.rules, seed, rotation);
        run_table(cfg, &mut t, team, seed, times, |t| !t.results().is_empty())?;
        games.push(GameRecord { a_team: team, hands: t.results().to_vec(), result: None });
    }
    let [g0, g1]: [GameRecord; 2] = games.try_into().map_err(|_| "two games".to_string())?;
    Ok([g0, g1])
}

/// One pair of full matches.
fn play_match_pair(cfg: &Config, g: u64, times: &mut [Times; 2]) -> Result<[GameRecord; 2], String> {
    let seed = cfg.game_seed + g;
    let team = a_team(g);
    let mut games = Vec::with_capacity(2);
    for rotation in 0..2u8 {
        let mut t = rotated(cfg.rules, seed, rotation);
        run_table(cfg, &mut t, team, seed, times, |_| false)?;
        games.push(GameRecord { a_team: team, hands: t.results().to_vec(), result: t.result().copied() });
    }
    let [g0, g1]: [GameRecord; 2] = games.try_into().map_err(|_| "two games".to_string())?;
    Ok([g0, g1])
}

/// Runs `count` jobs on `threads` workers; results come back in job order.
fn parallel<T: Send>(
    count: u64,
    threads: usize,
    progress: Option<&str>,
    job: impl Fn(u64, &mut [Times; 2]) -> Result<T, String> + Sync,
) -> Result<(Vec<T>, [Times; 2]), String> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let out: Mutex<Vec<(u64, T)>> = Mutex::new(Vec::new());
    let all_times: Mutex<[Times; 2]> = Mutex::new(Default::default());
    let error: Mutex<Option<String>> = Mutex::new(None);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let mut local = Vec::new();
                let mut times: [Times; 2] = Default::default();
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed) as u64;
                    if k >= count || error.lock().map(|e| e.is_some()).unwrap_or(true) {
                        break;
                    }
                    match job(k, &mut times) {
                        Ok(r) => local.push((k, r)),
                        Err(e) => {
                            if let Ok(mut slot) = error.lock() {
                                slot.get_or_insert(e);
                            }
                            break;
                        }
                    }
                    let d = done.fetch_add(1, Ordering::Relaxed) as u64 + 1;
                    if let Some(what) = progress {
                        let step = (count / 10).max(1);
                        if d.is_multiple_of(step) || d == count {
                            eprintln!("  {what}: {d}/{count} ({:.0} s)", started.elapsed().as_secs_f64());
                        }
                    }
                }
                if let Ok(mut o) = out.lock() {
                    o.extend(local);
                }
                if let Ok(mut t) = all_times.lock() {
                    let [a, b] = times;
                    t[0].extend(a);
                    t[1].extend(b);
                }
            });
        }
    });
    if let Some(e) = error.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut out = out.into_inner().map_err(|_| "worker panicked".to_string())?;
    out.sort_by_key(|(k, _)| *k);
    let times = all_times.into_inner().map_err(|_| "worker panicked".to_string())?;
    Ok((out.into_iter().map(|(_, r)| r).collect(), times))
}

// ---------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------

/// A mean with its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// Sample mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub sd: f64,
    /// Lower end of the 95% interval (normal approximation).
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Number of samples.
    pub n: usize,
}

impl Interval {
    /// The mean of `xs` with a 95% normal-approximation interval.
    pub fn of(xs: &[f64]) -> Interval {
        let n = xs.len();
        if n == 0 {
            return Interval { mean: 0.0, sd: 0.0, lo: 0.0, hi: 0.0, n };
        }
        let nf = n as f64;
        let mean = xs.iter().sum::<f64>() / nf;
        let var = if n > 1 { xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0) } else { 0.0 };
        let sd = var.sqrt();
        let half = 1.96 * sd / nf.sqrt();
        Interval { mean, sd, lo: mean - half, hi: mean + half, n }
    }
}

/// Percentiles of decision times, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct Latency {
    /// Decisions timed.
    pub count: usize,
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Slowest.
    pub max_us: f64,
    /// Mean.
    pub mean_us: f64,
}

impl Latency {
    fn of(nanos: &[u64]) -> Latency {
        if nanos.is_empty() {
            return Latency::default();
        }
        let mut v = nanos.to_vec();
        v.sort_unstable();
        let pick = |q: f64| v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1] as f64 / 1000.0;
        Latency {
            count: v.len(),
            p50_us: pick(0.5),
            p99_us: pick(0.99),
            max_us: v[v.len() - 1] as f64 / 1000.0,
            mean_us: v.iter().sum::<u64>() as f64 / v.len() as f64 / 1000.0,
        }
    }
}

/// Per-side counts over the duplicate deals.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct SideReport {
    /// The contestant's label.
    pub bot: String,
    /// Team-hands played.
    pub team_hands: u32,
    /// Team-hands with a contract (some non-nil bid).
    pub contracts: u32,
    /// Contracts made.
    pub made: u32,
    /// Contracts made exactly (no overtrick).
    pub made_exactly: u32,
    /// Contracts set.
    pub set: u32,
    /// Bags taken (overtricks and a nil bidder's tricks).
    pub bags: u32,
    /// Bags per contract.
    pub bags_per_contract: f64,
    /// Nil bids.
    pub nils_bid: u32,
    /// Nil bids made.
    pub nils_made: u32,
    /// Opponents' nil bids.
    pub opponent_nils: u32,
    /// Opponents' nil bids this side broke.
    pub opponent_nils_broken: u32,
    /// Mean team contract (non-nil bids).
    pub mean_contract: f64,
    /// Bid decision times: CPU time of the deciding thread, i.e. the time
    /// a decision takes on one core of its own.
    pub bid_time: Latency,
    /// Card decision times (CPU time, as above).
    pub card_time: Latency,
    /// Bid decision times, wall clock (includes waiting for a shared CPU).
    pub bid_wall: Latency,
    /// Card decision times, wall clock.
    pub card_wall: Latency,
}

impl SideReport {
    fn pct(x: u32, of: u32) -> f64 {
        if of == 0 { 0.0 } else { 100.0 * f64::from(x) / f64::from(of) }
    }

    /// Percentage of contracts made.
    pub fn made_pct(&self) -> f64 {
        Self::pct(self.made, self.contracts)
    }

    /// Percentage of contracts made exactly.
    pub fn exact_pct(&self) -> f64 {
        Self::pct(self.made_exactly, self.contracts)
    }

    /// Percentage of contracts set.
    pub fn set_pct(&self) -> f64 {
        Self::pct(self.set, self.contracts)
    }

    /// Percentage of own nils made.
    pub fn nil_pct(&self) -> f64 {
        Self::pct(self.nils_made, self.nils_bid)
    }

    /// Percentage of the opponents' nils broken.
    pub fn broken_pct(&self) -> f64 {
        Self::pct(self.opponent_nils_broken, self.opponent_nils)
    }

    fn add_hand(&mut self, r: &HandResult, team: Team) {
        let s = &r.teams[team];
        self.team_hands += 1;
        if s.contract > 0 {
            self.contracts += 1;
            if s.made {
                self.made += 1;
                if s.counted_tricks == s.contract {
                    self.made_exactly += 1;
                }
            } else {
                self.set += 1;
            }
            self.mean_contract += f64::from(s.contract);
        }
        self.bags += u32::from(s.bags);
        for seat in Seat::ALL {
            if let Some(nil) = r.nils[seat] {
                let made = nil == spades_engine::NilResult::Made;
                if seat.team() == team {
                    self.nils_bid += 1;
                    self.nils_made += u32::from(made);
                } else {
                    self.opponent_nils += 1;
                    self.opponent_nils_broken += u32::from(!made);
                }
            }
        }
    }

    fn finish(&mut self, times: &Times) {
        self.bags_per_contract =
            if self.contracts == 0 { 0.0 } else { f64::from(self.bags) / f64::from(self.contracts) };
        if self.contracts > 0 {
            self.mean_contract /= f64::from(self.contracts);
        }
        self.bid_time = Latency::of(&times.bid_cpu);
        self.card_time = Latency::of(&times.card_cpu);
        self.bid_wall = Latency::of(&times.bid);
        self.card_wall = Latency::of(&times.card);
    }
}

/// The result of one pairing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Bot A.
    pub a: String,
    /// Bot B.
    pub b: String,
    /// Duplicate deals played (each twice).
    pub deals: u32,
    /// First deal seed (deals use `first_seed ..= first_seed + deals - 1`).
    pub first_seed: u64,
    /// A's margin per hand, bags charged at their share of the penalty.
    pub margin: Interval,
    /// A's margin per hand in raw SPEC §2 hand points from 0–0.
    pub margin_raw: Interval,
    /// Paired 500-point matches played (each twice).
    pub game_pairs: u32,
    /// First match seed.
    pub game_seed: u64,
    /// Matches won by A.
    pub a_wins: u32,
    /// Matches won by B.
    pub b_wins: u32,
    /// Matches drawn (99-hand cap).
    pub draws: u32,
    /// A's share of the matches (draws count half), in percent.
    pub a_win_pct: f64,
    /// 95% Wilson interval of that share.
    pub a_win_ci: (f64, f64),
    /// A's score margin per hand in the matches (real scores, bag penalties
    /// as they fell), per match pair.
    pub match_margin_per_hand: Interval,
    /// Mean hands per match.
    pub hands_per_match: f64,
    /// Table total bid (all four bids) per hand: mean.
    pub table_bid_mean: f64,
    /// Table total bid: standard deviation.
    pub table_bid_sd: f64,
    /// Side A's counts (duplicate deals only).
    pub side_a: SideReport,
    /// Side B's counts (duplicate deals only).
    pub side_b: SideReport,
    /// Decisions that took longer than the search time limit.
    pub over_time_limit: [usize; 2],
    /// Wall-clock seconds for the run.
    pub seconds: f64,
}

fn bagged_value(r: &HandResult, team: Team, rules: &Rules) -> f64 {
    let s = &r.teams[team];
    let per_bag = rules.bag_penalty.threshold().map_or(0.0, |(n, cost)| f64::from(cost) / f64::from(n));
    f64::from(s.hand_points - s.bag_penalty) - per_bag * f64::from(s.bags)
}

fn wilson(wins: f64, n: f64) -> (f64, f64) {
    if n == 0.0 {
        return (0.0, 0.0);
    }
    let z = 1.96f64;
    let p = wins / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / denom;
    (100.0 * (centre - half), 100.0 * (centre + half))
}

/// Plays a pairing and reports it.
///
/// # Errors
/// A bot made an illegal move or had no move (the message says where).
pub fn run(cfg: &Config) -> Result<Report, String> {
    let started = Instant::now();
    let threads = cfg.threads.max(1);
    let label = format!("{} vs {}", cfg.a.label(), cfg.b.label());
    let deal_note = format!("{label}: deals");
    let (deals, mut times) =
        parallel(u64::from(cfg.deals), threads, cfg.progress.then_some(deal_note.as_str()), |k, t| {
            play_deal(cfg, k, t)
        })?;
    let game_note = format!("{label}: match pairs");
    let (games, game_times) =
        parallel(u64::from(cfg.games), threads, cfg.progress.then_some(game_note.as_str()), |g, t| {
            play_match_pair(cfg, g, t)
        })?;
    let [ga, gb] = game_times;
    times[0].extend(ga);
    times[1].extend(gb);

    let mut side_a = SideReport { bot: cfg.a.label(), ..SideReport::default() };
    let mut side_b = SideReport { bot: cfg.b.label(), ..SideReport::default() };
    let mut margins = Vec::with_capacity(deals.len());
    let mut margins_raw = Vec::with_capacity(deals.len());
    let mut table_bids = Vec::with_capacity(deals.len() * 2);
    for pair in &deals {
        let (mut m, mut raw) = (0.0, 0.0);
        for g in pair {
            let Some(r) = g.hands.first() else { continue };
            let (ta, tb) = (g.a_team, g.a_team.other());
            m += bagged_value(r, ta, &cfg.rules) - bagged_value(r, tb, &cfg.rules);
            raw += f64::from(r.teams[ta].hand_points - r.teams[tb].hand_points);
            side_a.add_hand(r, ta);
            side_b.add_hand(r, tb);
            table_bids.push(f64::from(r.bids.0.iter().map(|&b| u32::from(b)).sum::<u32>()));
        }
        margins.push(m / 2.0);
        margins_raw.push(raw / 2.0);
    }
    side_a.finish(&times[0]);
    side_b.finish(&times[1]);

    let (mut a_wins, mut b_wins, mut draws) = (0u32, 0u32, 0u32);
    let mut per_hand = Vec::with_capacity(games.len());
    let mut hands = 0usize;
    for pair in &games {
        let (mut diff, mut n) = (0i64, 0usize);
        for g in pair {
            let Some(end) = g.result else { continue };
            match end.outcome {
                Outcome::Win(t) if t == g.a_team => a_wins += 1,
                Outcome::Win(_) => b_wins += 1,
                Outcome::Draw => draws += 1,
            }
            diff += i64::from(end.scores[g.a_team]) - i64::from(end.scores[g.a_team.other()]);
            n += g.hands.len();
        }
        hands += n;
        if n > 0 {
            per_hand.push(diff as f64 / n as f64);
        }
    }
    let played = f64::from(a_wins + b_wins + draws);
    let share = f64::from(a_wins) + 0.5 * f64::from(draws);
    let limit = |c: &Contestant| match (c.strength, c.budget.time_limit) {
        (Strength::Search, Some(l)) => l,
        _ => Duration::MAX,
    };
    let over = |t: &Times, l: Duration| {
        let l = l.as_nanos().min(u128::from(u64::MAX)) as u64;
        t.bid.iter().chain(&t.card).filter(|&&n| n > l).count()
    };
    let tb = Interval::of(&table_bids);
    Ok(Report {
        a: cfg.a.label(),
        b: cfg.b.label(),
        deals: cfg.deals,
        first_seed: cfg.first_seed,
        margin: Interval::of(&margins),
        margin_raw: Interval::of(&margins_raw),
        game_pairs: cfg.games,
        game_seed: cfg.game_seed,
        a_wins,
        b_wins,
        draws,
        a_win_pct: if played > 0.0 { 100.0 * share / played } else { 0.0 },
        a_win_ci: wilson(share, played),
        match_margin_per_hand: Interval::of(&per_hand),
        hands_per_match: if played > 0.0 { hands as f64 / played } else { 0.0 },
        table_bid_mean: tb.mean,
        table_bid_sd: tb.sd,
        side_a,
        side_b,
        over_time_limit: [over(&times[0], limit(&cfg.a)), over(&times[1], limit(&cfg.b))],
        seconds: started.elapsed().as_secs_f64(),
    })
}

impl Report {
    /// A human-readable table.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let (a, b) = (&self.side_a, &self.side_b);
        let _ = writeln!(s, "== {} vs {} ==", self.a, self.b);
        if self.deals > 0 {
            let _ = writeln!(
                s,
                "deals: {} (seeds {}..={}), each played twice with the partnerships swapped",
                self.deals,
                self.first_seed,
                self.first_seed + u64::from(self.deals) - 1
            );
            let m = &self.margin;
            let _ = writeln!(
                s,
                "margin per hand ({} - {}): {:+.2}  95% CI [{:+.2}, {:+.2}]  sd {:.1}  (bags at -10 each)",
                self.a, self.b, m.mean, m.lo, m.hi, m.sd
            );
            let r = &self.margin_raw;
            let _ = writeln!(
                s,
                "  raw SPEC hand points:        {:+.2}  95% CI [{:+.2}, {:+.2}]  sd {:.1}",
                r.mean, r.lo, r.hi, r.sd
            );
        }
        if self.game_pairs > 0 {
            let _ = writeln!(
                s,
                "500-point matches: {} pairs (seeds {}..={}): {} won {} / lost {} / drawn {}: {:.1}%  95% CI [{:.1}, {:.1}]",
                self.game_pairs,
                self.game_seed,
                self.game_seed + u64::from(self.game_pairs) - 1,
                self.a,
                self.a_wins,
                self.b_wins,
                self.draws,
                self.a_win_pct,
                self.a_win_ci.0,
                self.a_win_ci.1
            );
            let mm = &self.match_margin_per_hand;
            let _ = writeln!(
                s,
                "  match points per hand: {:+.2}  95% CI [{:+.2}, {:+.2}]  ({:.1} hands per match)",
                mm.mean, mm.lo, mm.hi, self.hands_per_match
            );
        }
        let _ = writeln!(s, "table total bid: {:.2} +- {:.2}", self.table_bid_mean, self.table_bid_sd);
        let _ = writeln!(s, "{:<30}{:>24}{:>24}", "", a.bot, b.bot);
        let row = |s: &mut String, name: &str, x: String, y: String| {
            let _ = writeln!(s, "{name:<30}{x:>24}{y:>24}");
        };
        row(&mut s, "contracts", a.contracts.to_string(), b.contracts.to_string());
        row(&mut s, "  made", format!("{:.1}%", a.made_pct()), format!("{:.1}%", b.made_pct()));
        row(&mut s, "  made exactly", format!("{:.1}%", a.exact_pct()), format!("{:.1}%", b.exact_pct()));
        row(&mut s, "  set", format!("{:.1}%", a.set_pct()), format!("{:.1}%", b.set_pct()));
        row(&mut s, "  mean contract", format!("{:.2}", a.mean_contract), format!("{:.2}", b.mean_contract));
        row(
            &mut s,
            "bags per contract",
            format!("{:.2}", a.bags_per_contract),
            format!("{:.2}", b.bags_per_contract),
        );
        let nil = |x: &SideReport| format!("{}/{} ({:.0}%)", x.nils_made, x.nils_bid, x.nil_pct());
        row(&mut s, "nils made/bid", nil(a), nil(b));
        let broken = |x: &SideReport| {
            format!("{}/{} ({:.0}%)", x.opponent_nils_broken, x.opponent_nils, x.broken_pct())
        };
        row(&mut s, "opp. nils broken", broken(a), broken(b));
        let lat = |l: &Latency| {
            if l.count == 0 {
                "-".to_string()
            } else {
                format!("{}/{}/{}", fmt_us(l.p50_us), fmt_us(l.p99_us), fmt_us(l.max_us))
            }
        };
        row(&mut s, "bid time p50/p99/max (cpu)", lat(&a.bid_time), lat(&b.bid_time));
        row(&mut s, "card time p50/p99/max (cpu)", lat(&a.card_time), lat(&b.card_time));
        row(&mut s, "bid time p50/p99/max (wall)", lat(&a.bid_wall), lat(&b.bid_wall));
        row(&mut s, "card time p50/p99/max (wall)", lat(&a.card_wall), lat(&b.card_wall));
        row(
            &mut s,
            "mean bid / card time (cpu)",
            format!("{}/{}", fmt_us(a.bid_time.mean_us), fmt_us(a.card_time.mean_us)),
            format!("{}/{}", fmt_us(b.bid_time.mean_us), fmt_us(b.card_time.mean_us)),
        );
        row(
            &mut s,
            "decisions over time limit (wall)",
            self.over_time_limit[0].to_string(),
            self.over_time_limit[1].to_string(),
        );
        let _ = writeln!(s, "({:.0} s)", self.seconds);
        s
    }
}

/// Formats microseconds with a sensible unit.
fn fmt_us(us: f64) -> String {
    if us >= 1000.0 {
        format!("{:.1}ms", us / 1000.0)
    } else if us >= 10.0 {
        format!("{us:.0}us")
    } else {
        format!("{us:.1}us")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contestants_parse() {
        assert_eq!("rule".parse::<Contestant>().unwrap().label(), "rule");
        assert_eq!("search:64".parse::<Contestant>().unwrap().budget.play_worlds, 64);
        assert_eq!("search:64".parse::<Contestant>().unwrap().label(), "search:64");
        assert!("rule:5".parse::<Contestant>().is_err());
        assert!("smart".parse::<Contestant>().is_err());
    }

    #[test]
    fn intervals_and_latency() {
        let i = Interval::of(&[1.0, 2.0, 3.0]);
        assert!((i.mean - 2.0).abs() < 1e-12 && (i.sd - 1.0).abs() < 1e-12);
        assert!(i.lo < 2.0 && i.hi > 2.0);
        let l = Latency::of(&(1..=100).map(|x| x * 1000).collect::<Vec<u64>>());
        assert_eq!((l.p50_us, l.p99_us, l.max_us), (50.0, 99.0, 100.0));
        let (lo, hi) = wilson(75.0, 100.0);
        assert!(lo < 75.0 && hi > 75.0 && lo > 60.0 && hi < 85.0);
    }
}
