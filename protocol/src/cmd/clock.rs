//! `EMQ.CLOCK`: reads and moves the clock of a server started on a manual clock
//! (`echomq serve --clock manual`, or the test double), so a test written in any language can
//! move time over RESP instead of sleeping.
//!
//! - `EMQ.CLOCK` (or `EMQ.CLOCK GET`): the time, in Unix milliseconds.
//! - `EMQ.CLOCK ADVANCE ms`: moves it forward by `ms` (zero or more); replies the new time.
//! - `EMQ.CLOCK SET ms`: sets it to `ms`, which may not be earlier than it shows; replies the
//!   new time. Redis's clients and tests expect time never to go back (`*` ids only grow, a
//!   TTL only shrinks, a BLOCK timeout only comes nearer), so a move backwards is refused and
//!   changes nothing; a Rust test that wants one calls `ManualClock::set` directly.
//!
//! A move has the effects of time passing, at once, before the reply: the keys whose TTL ran
//! out are deleted (their blocked readers woken, their `expired` events sent, the deletion
//! propagated) and blocked commands whose timeout passed get their null reply, through the
//! same [`echomq_engine::Batch::catch_up_with_clock`] as the test double's `advance_ms`.
//!
//! On a server reading the system clock every form is refused. The command moves time for
//! every client, so it is refused inside MULTI (a move under EXEC's lock could not run the
//! expiry that follows it) and from scripts, and ACL puts it in `@admin` and `@dangerous`.

use echomq_engine::command::parse_i64;
use echomq_engine::{Batch, Clock, ManualClock, Reply};

use super::{Ctx, is};
use crate::state::ServerState;

const HELP: &[&str] = &[
    "EMQ.CLOCK <subcommand> [<arg> ...]. Subcommands are:",
    "(no subcommand) or GET",
    "    Return the manual clock's time, in Unix milliseconds.",
    "ADVANCE <milliseconds>",
    "    Move the clock forward; keys and blocked commands that fall due expire at once.",
    "SET <unix-time-milliseconds>",
    "    Set the clock to a time no earlier than it shows.",
    "HELP",
    "    Print this help.",
];

/// The refusal on a server reading the system clock.
const SYSTEM_CLOCK: &str = "ERR EMQ.CLOCK needs a manual clock: this server reads the system clock (start it with --clock manual)";

/// What a call asks for.
enum Request {
    Get,
    Advance(u64),
    Set(u64),
    Help,
}

fn parse(argv: &[&[u8]]) -> Result<Request, Reply> {
    let millis = |arg: &[u8], what: &str| match parse_i64(arg) {
        Ok(ms) => u64::try_from(ms).map_err(|_| {
            Reply::Error(format!(
                "ERR EMQ.CLOCK {what} takes a non-negative number of milliseconds"
            ))
        }),
        Err(_) => Err(Reply::Error(
            "ERR value is not an integer or out of range".into(),
        )),
    };
    match argv {
        [_] => Ok(Request::Get),
        [_, sub] if is(sub, "get") => Ok(Request::Get),
        [_, sub] if is(sub, "help") => Ok(Request::Help),
        [_, sub, ms] if is(sub, "advance") => millis(ms, "ADVANCE").map(Request::Advance),
        [_, sub, ms] if is(sub, "set") => millis(ms, "SET").map(Request::Set),
        [_, sub, ..] => Err(Reply::Error(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try EMQ.CLOCK HELP.",
            String::from_utf8_lossy(sub)
        ))),
        [] => Err(Reply::Error(
            "ERR wrong number of arguments for 'emq.clock' command".into(),
        )),
    }
}

/// The manual clock, or the refusal.
fn manual(state: &ServerState) -> Result<&ManualClock, Reply> {
    state
        .clock()
        .as_manual()
        .ok_or_else(|| Reply::Error(SYSTEM_CLOCK.into()))
}

/// `EMQ.CLOCK` from a connection: runs in its batch (which may already hold the keyspace lock
/// for earlier pipelined requests), so the expiry a move makes due runs under that lock.
pub(crate) fn emq_clock(state: &ServerState, batch: &mut Batch<'_>, argv: &[&[u8]]) -> Reply {
    let request = match parse(argv) {
        Ok(request) => request,
        Err(reply) => return reply,
    };
    if let Request::Help = request {
        return super::help(HELP);
    }
    let clock = match manual(state) {
        Ok(clock) => clock,
        Err(reply) => return reply,
    };
    let now = match request {
        Request::Get | Request::Help => return Reply::Int(as_int(clock.now_ms())),
        Request::Advance(ms) => match clock.try_advance(ms) {
            Some(now) => now,
            None => {
                return Reply::Error(
                    "ERR EMQ.CLOCK ADVANCE would move the clock past its largest time".into(),
                );
            }
        },
        Request::Set(ms) => match clock.set_forward(ms) {
            Ok(now) => now,
            Err(shown) => {
                return Reply::Error(format!(
                    "ERR EMQ.CLOCK SET cannot move the clock backwards (it shows {shown})"
                ));
            }
        },
    };
    batch.catch_up_with_clock();
    Reply::Int(as_int(now))
}

/// `EMQ.CLOCK` where no batch is at hand (the table's row; a connection runs
/// [`emq_clock`] instead, and MULTI and scripts refuse the command): reads only.
pub(crate) fn emq_clock_unbatched(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    match parse(argv) {
        Ok(Request::Help) => super::help(HELP),
        Ok(Request::Get) => match manual(ctx.state) {
            Ok(clock) => Reply::Int(as_int(clock.now_ms())),
            Err(reply) => reply,
        },
        Ok(Request::Advance(_) | Request::Set(_)) => {
            Reply::Error("ERR EMQ.CLOCK cannot move the clock here".into())
        }
        Err(reply) => reply,
    }
}

fn as_int(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}
