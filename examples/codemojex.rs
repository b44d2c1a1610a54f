//! codemojex: a room-based guessing game whose every action lands in one event feed.
//!
//! Players join rooms, each round hides a four-emoji code, players submit guesses, a scorer
//! scores them, and a settled round pays out. Every action is appended to
//! `emq:{cm}:stream:events`; the program then prints the rendered feed (a fold of the whole
//! log), the last five minutes of activity (a fold over a time window), and the leaderboard
//! (a running aggregate) beside the windowed scores.
//!
//! ```text
//! cargo run --example codemojex                          # embedded engine
//! cargo run --example codemojex -- --redis redis://127.0.0.1:6379/   # echomq serve, Redis, Valkey
//! cargo run --example codemojex -- --redis-cluster redis://127.0.0.1:7000   # a Redis Cluster
//! ```
//!
//! On a cluster, `--redis-cluster` takes one or more seed nodes (comma-separated); the queue's
//! hash tag `{cm}` puts the whole game in one slot, on one master.

use std::collections::BTreeMap;
use std::sync::Arc;

use echomq::engine::{Clock, Keyspace, ManualClock};
use echomq::feed::{
    Backend, Brand, Branded, CachedProjection, ClusterBackend, Embedded, Feed, Minter, Record,
    RedisBackend, Window,
};
use time::OffsetDateTime;

const EMOJI: [&str; 6] = ["🍎", "🐙", "🚀", "🎲", "🌵", "🔥"];
const PLAYERS: [&str; 4] = ["alex", "bea", "chen", "dana"];
/// Game time between two actions.
const STEP_MS: u64 = 9_000;

/// A tiny deterministic generator, so every run plays the same game.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % sides as u64) as usize
    }
}

/// Scores a guess against the code: 10 per exact emoji, 3 per emoji in the wrong place.
fn score(code: &[usize; 4], guess: &[usize; 4]) -> (u32, bool) {
    let exact = code.iter().zip(guess).filter(|(c, g)| c == g).count() as u32;
    let mut misplaced = 0;
    for e in 0..EMOJI.len() {
        let in_code = code.iter().filter(|&&c| c == e).count();
        let in_guess = guess.iter().filter(|&&g| g == e).count();
        misplaced += in_code.min(in_guess) as u32;
    }
    misplaced -= exact;
    (exact * 10 + misplaced * 3, exact == 4)
}

fn render(record: &Record) -> String {
    let get = |f| record.get(f).unwrap_or("?");
    match get("kind") {
        "room-opened" => format!("room {} opened", get("room")),
        "guess-submitted" => format!(
            "{} guessed {} in {}",
            get("player"),
            get("guess"),
            get("room")
        ),
        "guess-scored" if get("cracked") == "yes" => {
            format!("{} cracked the code! (+{})", get("player"), get("score"))
        }
        "guess-scored" => format!("{} scored {}", get("player"), get("score")),
        "round-settled" => format!("round {} settled, {} wins", get("round"), get("winner")),
        other => format!("unknown event {other}"),
    }
}

fn play<B: Backend>(
    feed: &Feed<B>,
    clock: &ManualClock,
) -> Result<BTreeMap<String, u32>, Box<dyn std::error::Error>> {
    let ids = Minter::new();
    let mut dice = Dice(0x00C0_FFEE);
    let mut leaderboard: BTreeMap<String, u32> = BTreeMap::new();
    let append = |fields: &[(&str, &str)]| -> Result<Branded, Box<dyn std::error::Error>> {
        clock.advance(STEP_MS);
        Ok(feed.append("cm", "events", fields)?)
    };
    for _ in 0..2 {
        let room = ids.mint(Brand::Rmm, clock.now_ms())?.to_string();
        append(&[("kind", "room-opened"), ("room", &room)])?;
        for _ in 0..2 {
            let round = ids.mint(Brand::Rnd, clock.now_ms())?.to_string();
            let code = [dice.roll(6), dice.roll(6), dice.roll(6), dice.roll(6)];
            let mut winner = None;
            for turn in 0..12 {
                let player = PLAYERS[turn % PLAYERS.len()];
                let mut guess = [dice.roll(6), dice.roll(6), dice.roll(6), dice.roll(6)];
                if turn >= 8 {
                    guess = code; // Someone always gets there eventually.
                }
                let job = ids.mint(Brand::Job, clock.now_ms())?.to_string();
                let shown: String = guess.iter().map(|&e| EMOJI[e]).collect();
                append(&[
                    ("kind", "guess-submitted"),
                    ("room", &room),
                    ("round", &round),
                    ("player", player),
                    ("guess", &shown),
                    ("job", &job),
                ])?;
                let (points, cracked) = score(&code, &guess);
                let scored = ids.mint(Brand::Ges, clock.now_ms())?.to_string();
                append(&[
                    ("kind", "guess-scored"),
                    ("room", &room),
                    ("player", player),
                    ("score", &points.to_string()),
                    ("cracked", if cracked { "yes" } else { "no" }),
                    ("ges", &scored),
                ])?;
                let best = leaderboard.entry(player.to_string()).or_default();
                *best = (*best).max(points);
                if cracked {
                    winner = Some(player);
                    break;
                }
            }
            let winner = winner.unwrap_or("nobody");
            append(&[
                ("kind", "round-settled"),
                ("room", &room),
                ("round", &round),
                ("winner", winner),
            ])?;
        }
    }
    Ok(leaderboard)
}

fn report<B: Backend>(
    feed: &Feed<B>,
    clock: &ManualClock,
    leaderboard: &BTreeMap<String, u32>,
) -> Result<(), Box<dyn std::error::Error>> {
    println!("== the feed (a fold of the whole log) ==");
    for record in feed.read("cm", "events", ..)? {
        println!("{}  {}", record.id, render(&record));
    }
    let now = OffsetDateTime::from_unix_timestamp_nanos(i128::from(clock.now_ms()) * 1_000_000)?;
    let five_minutes_ago = now - time::Duration::minutes(5);
    let mut recent = CachedProjection::new(
        "cm",
        "events",
        Window::Closed(five_minutes_ago, now),
        BTreeMap::<String, u32>::new(),
        |totals: &mut BTreeMap<String, u32>, record: &Record| {
            if record.get("kind") == Some("guess-scored")
                && let (Some(player), Some(points)) = (record.get("player"), record.get("score"))
            {
                *totals.entry(player.to_string()).or_default() +=
                    points.parse::<u32>().unwrap_or(0);
            }
        },
    );
    let window = feed.read_window("cm", "events", five_minutes_ago, now, None)?;
    println!("\n== the last five minutes: {} events ==", window.len());
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for record in &window {
        *kinds.entry(record.get("kind").unwrap_or("?")).or_default() += 1;
    }
    for (kind, n) in kinds {
        println!("{n:>4}  {kind}");
    }
    println!("\n== leaderboard (best score, all time) beside points scored in the window ==");
    let windowed = recent.get(feed)?.clone();
    let first_read = recent.last_refresh();
    for (player, best) in leaderboard {
        println!(
            "{player:>6}  best {best:>3}   last 5 min {:>4}",
            windowed.get(player).copied().unwrap_or(0)
        );
    }
    recent.get(feed)?;
    println!(
        "\n(windowed projection: first read {first_read:?}, second read {:?})",
        recent.last_refresh()
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let start_ms = OffsetDateTime::now_utc().unix_timestamp() as u64 * 1000;
    let clock = Arc::new(ManualClock::new(start_ms));
    match args.as_slice() {
        [flag, url] if flag == "--redis" => {
            let feed = Feed::with_clock(RedisBackend::connect(url)?, clock.clone());
            let leaderboard = play(&feed, &clock)?;
            report(&feed, &clock, &leaderboard)
        }
        [flag, seeds] if flag == "--redis-cluster" => {
            let seeds: Vec<&str> = seeds.split(',').collect();
            let feed = Feed::with_clock(ClusterBackend::connect(&seeds)?, clock.clone());
            let leaderboard = play(&feed, &clock)?;
            report(&feed, &clock, &leaderboard)
        }
        [] => {
            let keyspace = Arc::new(Keyspace::new(clock.clone()));
            let feed = Feed::with_clock(Embedded::new(keyspace), clock.clone());
            let leaderboard = play(&feed, &clock)?;
            report(&feed, &clock, &leaderboard)
        }
        _ => Err(
            "usage: codemojex [--redis redis://host:port/ | --redis-cluster redis://host:port[,...]]"
                .into(),
        ),
    }
}
