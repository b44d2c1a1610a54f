//! `XGROUP CREATE key group <id|$> [MKSTREAM] [ENTRIESREAD n]`,
//! `XGROUP SETID key group <id|$> [ENTRIESREAD n]`, `XGROUP DESTROY key group`,
//! `XGROUP CREATECONSUMER key group consumer`, `XGROUP DELCONSUMER key group consumer`,
//! `XGROUP HELP`.
//!
//! Every subcommand but `CREATE ... MKSTREAM` needs the key to exist (DESTROY included);
//! SETID, CREATECONSUMER and DELCONSUMER need the group. CREATE's options are parsed before the
//! key is looked up. DESTROY wakes blocked XREADGROUP readers, which then fail with NOGROUP.
//!
//! Effects, when the subcommand changed something (CREATE and SETID always; DESTROY and
//! CREATECONSUMER when they replied 1; DELCONSUMER when the consumer existed): its event
//! (`xgroup-create`, `xgroup-setid`, `xgroup-destroy`, `xgroup-createconsumer`,
//! `xgroup-delconsumer`), one change, the arguments propagated verbatim. CREATE with
//! MKSTREAM of a missing key also fires `new`.

use crate::error::{Error, Result, shown};
use crate::group::GroupError;
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::notify::STREAM;
use crate::reply::Reply;

use super::args::{help, is, parse_i64};

const HELP: &[&str] = &[
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Print this help.",
];

/// XGROUP.
#[derive(Debug)]
pub struct XGroup;

fn entries_read(arg: &[u8]) -> Result<Option<i64>> {
    match parse_i64(arg)? {
        -1 => Ok(None),
        n if n < 0 => Err(Error::EntriesReadInvalid),
        n => Ok(Some(n)),
    }
}

impl XGroup {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let sub = super::subcommand(argv)?;
        let syntax = || Error::SubcommandSyntax {
            sub: shown(argv[1]),
            command: "XGROUP",
        };
        if sub == "help" {
            return Ok(help(HELP));
        }
        let (key, group) = (argv[2], argv[3]);
        let mut mkstream = false;
        let mut read = None;
        // CREATE's and SETID's options are read before the key is looked up, as in Redis.
        if sub == "create" || sub == "setid" {
            let mut i = 5;
            while i < argv.len() {
                if sub == "create" && is(argv[i], "mkstream") {
                    mkstream = true;
                    i += 1;
                } else if is(argv[i], "entriesread") && i + 1 < argv.len() {
                    read = entries_read(argv[i + 1])?;
                    i += 2;
                } else {
                    return Err(syntax());
                }
            }
        }
        let exists = db.stream(key)?.is_some();
        if !exists && !mkstream {
            return Err(Error::XgroupKeyMissing);
        }
        let no_group = || Error::NoGroupForKey {
            key: shown(key),
            group: shown(group),
        };
        let has_group = db.stream(key)?.is_some_and(|s| s.group(group).is_some());
        if !has_group && matches!(sub, "setid" | "createconsumer" | "delconsumer") {
            return Err(no_group());
        }
        match sub {
            "create" => {
                if argv.len() > 8 {
                    return Err(syntax());
                }
                let id = match argv[4] {
                    b"$" => db.stream(key)?.map_or(StreamId::MIN, |s| s.last_id()),
                    arg => StreamId::parse_strict(arg)?,
                };
                if has_group {
                    return Err(Error::BusyGroup);
                }
                let stream = db.stream_or_create(key)?;
                stream
                    .create_group(group, id, read)
                    .map_err(|_| Error::BusyGroup)?;
                db.notify(STREAM, "xgroup-create", key);
                db.changed(1, argv);
                Ok(Reply::OK)
            }
            "setid" => {
                if argv.len() != 5 && argv.len() != 7 {
                    return Err(syntax());
                }
                let stream = db.stream_mut(key)?.ok_or(Error::XgroupKeyMissing)?;
                let id = match argv[4] {
                    b"$" => stream.last_id(),
                    arg => StreamId::parse_lenient(arg, 0)?,
                };
                stream
                    .set_group_id(group, id, read)
                    .map_err(|_| no_group())?;
                db.notify(STREAM, "xgroup-setid", key);
                db.changed(1, argv);
                Ok(Reply::OK)
            }
            "destroy" => {
                let stream = db.stream_mut(key)?.ok_or(Error::XgroupKeyMissing)?;
                let destroyed = stream.destroy_group(group);
                if destroyed {
                    // Readers blocked on the group fail now.
                    db.signal_deleted(key);
                    db.notify(STREAM, "xgroup-destroy", key);
                    db.changed(1, argv);
                }
                Ok(Reply::Int(i64::from(destroyed)))
            }
            "createconsumer" => {
                let stream = db.stream_mut(key)?.ok_or(Error::XgroupKeyMissing)?;
                let created = stream
                    .create_consumer(group, argv[4], snapshot.now_ms)
                    .map_err(|_: GroupError| no_group())?;
                if created {
                    db.notify(STREAM, "xgroup-createconsumer", key);
                    db.changed(1, argv);
                }
                Ok(Reply::Int(i64::from(created)))
            }
            _ => {
                let stream = db.stream_mut(key)?.ok_or(Error::XgroupKeyMissing)?;
                let existed = stream
                    .group(group)
                    .is_some_and(|g| g.consumer(argv[4]).is_some());
                let pending = stream
                    .delete_consumer(group, argv[4])
                    .map_err(|_| no_group())?;
                if existed {
                    db.notify(STREAM, "xgroup-delconsumer", key);
                    db.changed(1, argv);
                }
                Ok(Reply::Int(pending as i64))
            }
        }
    }
}
