//! PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET and CLIENT.

use bytes::Bytes;
use echomq_engine::Reply;

use super::{Ctx, error, int_arg, is, subcommand_of, subcommand_syntax, unknown_subcommand};
use crate::REDIS_VERSION;
use crate::error::CommandError;
use crate::resp::Protocol;
use crate::state::client::{ClientInfo, valid_client_name};
use crate::state::{ClientState, ServerState};

/// `PING [message]`: in RESP2 pub/sub mode `["pong", message or ""]`, as Redis.
pub(crate) fn ping(_: &ServerState, client: &ClientState, argv: &[&[u8]]) -> Reply {
    if client.protocol == Protocol::Resp2 && client.info.pubsub.is_subscribed() {
        let pong =
            |message: &[u8]| Reply::Array(vec![Reply::bulk_static("pong"), Reply::bulk(message)]);
        match argv {
            [_] => return pong(b""),
            [_, message] => return pong(message),
            _ => {}
        }
    }
    match argv {
        [_] => Reply::Status("PONG"),
        [_, message] => Reply::bulk(message),
        _ => error(echomq_engine::Error::WrongArity("ping".into())),
    }
}

/// `ECHO message`.
pub(crate) fn echo(_: &ServerState, _: &ClientState, argv: &[&[u8]]) -> Reply {
    Reply::bulk(argv[1])
}

/// Checks a user's password (the default user's when `user` is `None`, refused as Redis does
/// when it needs none), and makes the client run as that user. A failure is counted and
/// logged (ACL LOG) under the name the client tried.
fn check_password(
    ctx: &mut Ctx<'_>,
    command: &[u8],
    user: Option<&[u8]>,
    password: &[u8],
) -> Result<(), Reply> {
    let users = ctx.state.acl_users();
    if user.is_none() && users.default_user().nopass {
        return Err(CommandError::AuthWithoutPassword.into());
    }
    let name = user.unwrap_or(b"default");
    if users.get(name).is_some_and(|u| u.accepts(password)) {
        drop(users);
        ctx.client.authenticated = true;
        ctx.client.info.set_user(name);
        ctx.client.acl_user = None;
        return Ok(());
    }
    drop(users);
    super::acl::log_denial(
        ctx.state,
        ctx.client,
        crate::acl::Reason::Auth,
        command,
        name,
    );
    Err(CommandError::WrongPass.into())
}

/// `AUTH [username] password`.
pub(crate) fn auth(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let result = match argv {
        [command, password] => check_password(ctx, command, None, password),
        [command, user, password] => check_password(ctx, command, Some(user), password),
        _ => Err(error(echomq_engine::Error::Syntax)),
    };
    result.map_or_else(|e| e, |()| Reply::OK)
}

/// `HELLO [protover [AUTH username password] [SETNAME clientname]]`.
pub(crate) fn hello(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let mut protocol = ctx.client.protocol;
    if let Some(version) = argv.get(1) {
        protocol = match int_arg(version) {
            Ok(2) => Protocol::Resp2,
            Ok(3) => Protocol::Resp3,
            Ok(_) => return CommandError::NoProto.into(),
            Err(_) => {
                return CommandError::ProtocolVersionNotInteger.into();
            }
        };
    }
    let mut name = None;
    let mut i = 2;
    while i < argv.len() {
        let more = argv.len() - 1 - i;
        if is(argv[i], "auth") && more >= 2 {
            if let Err(reply) = check_password(ctx, argv[0], Some(argv[i + 1]), argv[i + 2]) {
                return reply;
            }
            i += 3;
        } else if is(argv[i], "setname") && more >= 1 {
            if !valid_client_name(argv[i + 1]) {
                return invalid_name();
            }
            name = Some(argv[i + 1]);
            i += 2;
        } else {
            return CommandError::HelloSyntax(String::from_utf8_lossy(argv[i]).into_owned()).into();
        }
    }
    if !ctx.client.authenticated {
        return CommandError::HelloNoAuth.into();
    }
    if let Some(name) = name {
        ctx.client
            .info
            .set_name((!name.is_empty()).then(|| Bytes::copy_from_slice(name)));
    }
    ctx.client.set_protocol(protocol);
    Reply::Map(vec![
        (Reply::bulk_static("server"), Reply::bulk_static("redis")),
        (
            Reply::bulk_static("version"),
            Reply::bulk_static(REDIS_VERSION),
        ),
        (
            Reply::bulk_static("proto"),
            Reply::Int(if protocol == Protocol::Resp3 { 3 } else { 2 }),
        ),
        (
            Reply::bulk_static("id"),
            Reply::Int(ctx.client.info.id as i64),
        ),
        (Reply::bulk_static("mode"), Reply::bulk_static("standalone")),
        (Reply::bulk_static("role"), Reply::bulk_static("master")),
        (Reply::bulk_static("modules"), Reply::Array(vec![])),
    ])
}

/// `SELECT index`.
pub(crate) fn select(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let index = match int_arg(argv[1]) {
        Ok(n) => n,
        Err(reply) => return reply,
    };
    if let Some(refused) = super::cluster::refuses_select(ctx, index) {
        return refused;
    }
    if index < 0 || index as usize >= ctx.dbs.len() {
        return CommandError::DbIndexOutOfRange.into();
    }
    ctx.client.select(index as usize);
    Reply::OK
}

/// `QUIT`: replies OK, then the connection closes.
pub(crate) fn quit(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    ctx.close = true;
    Reply::OK
}

/// `RESET`: back to a fresh connection's state, subscriptions dropped.
pub(crate) fn reset(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    ctx.state.pubsub().forget(&ctx.client.info);
    ctx.state.monitors().remove(ctx.client.info.id);
    ctx.state.disable_tracking(&ctx.client.info);
    super::transaction::forget_watches(ctx);
    ctx.client.multi = None;
    ctx.client.multi_failed = false;
    ctx.client.select(0);
    ctx.client.set_protocol(Protocol::Resp2);
    ctx.client.authenticated = {
        let users = ctx.state.acl_users();
        let default = users.default_user();
        default.nopass && default.enabled
    };
    ctx.client.info.set_user(b"default");
    ctx.client.acl_user = None;
    ctx.client.info.set_name(None);
    ctx.client.info.set_no_evict(false);
    ctx.client.reply_off = false;
    ctx.client.reply_skip_next = false;
    Reply::Status("RESET")
}

fn invalid_name() -> Reply {
    CommandError::InvalidClientName.into()
}

const CLIENT_HELP: &[&str] = &[
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "    * ID <client-id>",
    "      Kill connections by client id.",
    "    * MAXAGE <maxage>",
    "      Kill connections older than the specified age.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
    "HELP",
    "    Print this help.",
];

/// `CLIENT ID|GETNAME|SETNAME|INFO|LIST|KILL|SETINFO|NO-EVICT|NO-TOUCH|PAUSE|UNPAUSE|
/// TRACKING|CACHING|GETREDIR|TRACKINGINFO|HELP`. A known subcommand with the wrong number of
/// arguments (its arity in the table) gets the arity error naming it (`client|setname`).
pub(crate) fn client(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(sub) = subcommand_of(argv) else {
        return unknown_subcommand(argv);
    };
    if !sub.arity_ok(argv.len()) {
        // Redis 8.8 refuses every subcommand by its own arity before it runs.
        return error(echomq_engine::Error::WrongArity(sub.full_name.to_string()));
    }
    match sub.name() {
        "id" => Reply::Int(ctx.client.info.id as i64),
        "getname" => ctx.client.info.name().map_or(Reply::Null, Reply::Bulk),
        "setname" => {
            if !valid_client_name(argv[2]) {
                return invalid_name();
            }
            ctx.client
                .info
                .set_name((!argv[2].is_empty()).then(|| Bytes::copy_from_slice(argv[2])));
            Reply::OK
        }
        "setinfo" => setinfo(ctx, argv),
        "info" => Reply::Verbatim(Bytes::from(format!(
            "{}\n",
            ctx.client.info.line(super::call_name)
        ))),
        "list" => list(ctx, argv),
        "kill" => kill(ctx, argv),
        "unblock" => unblock(ctx, argv),
        "pause" => super::pause::pause(ctx, argv),
        "unpause" => super::pause::unpause(ctx, argv),
        "no-evict" | "no-touch" => {
            let on = if is(argv[2], "on") {
                true
            } else if is(argv[2], "off") {
                false
            } else {
                return error(echomq_engine::Error::Syntax);
            };
            if sub.name() == "no-touch" {
                ctx.client.info.set_no_touch(on);
            } else {
                ctx.client.info.set_no_evict(on);
            }
            Reply::OK
        }
        "reply" => reply(ctx, argv),
        "tracking" => super::tracking::tracking(ctx, argv),
        "caching" => super::tracking::caching(ctx, argv),
        "getredir" => super::tracking::getredir(ctx),
        "trackinginfo" => super::tracking::trackinginfo(ctx),
        "help" => super::help(CLIENT_HELP),
        _ => unknown_subcommand(argv),
    }
}

/// `CLIENT SETINFO LIB-NAME|LIB-VER value`: the option first, then the value's characters;
/// an empty value clears it.
fn setinfo(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let info = &ctx.client.info;
    let attr = argv[2];
    let lib_name = is(attr, "lib-name");
    if !lib_name && !is(attr, "lib-ver") {
        return CommandError::UnrecognizedOption(String::from_utf8_lossy(attr).into_owned()).into();
    }
    // Redis checks the value as a C string: up to its first NUL byte.
    let value = argv[3];
    let checked = value.split(|&b| b == 0).next().unwrap_or_default();
    if !valid_client_name(checked) {
        return CommandError::InvalidClientAttr(String::from_utf8_lossy(attr).into_owned()).into();
    }
    let value = (!value.is_empty()).then(|| Bytes::copy_from_slice(value));
    if lib_name {
        info.set_lib_name(value);
    } else {
        info.set_lib_ver(value);
    }
    Reply::OK
}

/// `CLIENT REPLY ON|OFF|SKIP`: ON answers OK; OFF and SKIP answer nothing (SKIP does nothing
/// while OFF).
fn reply(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if is(argv[2], "on") {
        ctx.client.reply_off = false;
        ctx.client.reply_skip = false;
        return Reply::OK;
    }
    if is(argv[2], "off") {
        ctx.client.reply_off = true;
    } else if is(argv[2], "skip") {
        if !ctx.client.reply_off {
            ctx.client.reply_skip_next = true;
        }
    } else {
        return error(echomq_engine::Error::Syntax);
    }
    ctx.raw = Some(Vec::new());
    Reply::Null
}

/// `CLIENT UNBLOCK id [TIMEOUT|ERROR]`: 1 if that client waited in a blocking command (its
/// wait ends as a timeout, or with `-UNBLOCKED`), else 0. The reason is checked before the id.
fn unblock(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if argv.len() > 4 {
        return subcommand_syntax(argv);
    }
    let error_reason = match argv.get(3) {
        None => false,
        Some(r) if is(r, "timeout") => false,
        Some(r) if is(r, "error") => true,
        Some(_) => return CommandError::UnblockReason.into(),
    };
    let id = match int_arg(argv[2]) {
        Ok(id) => id,
        Err(e) => return e,
    };
    let unblocked = ctx
        .state
        .clients()
        .iter()
        .find(|c| i64::try_from(c.id).is_ok_and(|cid| cid == id))
        .is_some_and(|c| c.unblock(error_reason));
    Reply::Int(i64::from(unblocked))
}

/// `CLIENT LIST [TYPE type] [ID id [id ...]]`.
fn list(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let clients = ctx.state.clients();
    let line = |c: &ClientInfo| format!("{}\n", c.line(super::call_name));
    // Redis's forms: no filter, `TYPE type` alone, or `ID id...` (each id's line in the
    // order given, an id not connected skipped).
    let text: String = match argv.len() {
        2 => clients.iter().map(|c| line(c)).collect(),
        4 if is(argv[2], "type") => {
            let kind = match client_type(argv[3]) {
                Ok(kind) => kind,
                Err(reply) => return reply,
            };
            clients
                .iter()
                .filter(|c| kind.matches(c))
                .map(|c| line(c))
                .collect()
        }
        n if n > 3 && is(argv[2], "id") => {
            let mut text = String::new();
            for arg in &argv[3..] {
                let Ok(id) = int_arg(arg) else {
                    return CommandError::InvalidClientId.into();
                };
                if let Some(c) = clients.iter().find(|c| id >= 0 && c.id == id as u64) {
                    text.push_str(&line(c));
                }
            }
            text
        }
        _ => return error(echomq_engine::Error::Syntax),
    };
    Reply::Verbatim(Bytes::from(text))
}

/// A client type CLIENT LIST and CLIENT KILL filter by (Redis's `getClientTypeByName`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientType {
    Normal,
    /// `replica` or `slave`.
    Replica,
    PubSub,
    Master,
}

impl ClientType {
    /// Whether `client` is of this type: a client with a subscription is a pub/sub client,
    /// any other a normal one (this server has no replicas or masters among its clients).
    fn matches(self, client: &ClientInfo) -> bool {
        match self {
            ClientType::Normal => !client.pubsub.is_subscribed(),
            ClientType::PubSub => client.pubsub.is_subscribed(),
            ClientType::Replica | ClientType::Master => false,
        }
    }
}

/// The client type called `name` (any case), or Redis's error.
fn client_type(name: &[u8]) -> Result<ClientType, Reply> {
    Ok(if is(name, "normal") {
        ClientType::Normal
    } else if is(name, "slave") || is(name, "replica") {
        ClientType::Replica
    } else if is(name, "pubsub") {
        ClientType::PubSub
    } else if is(name, "master") {
        ClientType::Master
    } else {
        return Err(Reply::Error(format!(
            "ERR Unknown client type '{}'",
            String::from_utf8_lossy(name)
        )));
    })
}

/// `CLIENT KILL ip:port` or `CLIENT KILL [ID id] [TYPE type] [ADDR ip:port] [LADDR ip:port]
/// [USER name] [SKIPME yes|no] [MAXAGE seconds]`: the clients every filter given matches.
fn kill(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let clients = ctx.state.clients();
    let me = ctx.client.info.id;
    if argv.len() == 3 {
        let addr = String::from_utf8_lossy(argv[2]);
        return match clients.iter().find(|c| c.addr.to_string() == addr) {
            Some(c) => {
                c.kill();
                Reply::OK
            }
            None => CommandError::NoSuchClient.into(),
        };
    }
    let (mut id, mut addr, mut laddr, mut skip_me) = (None, None, None, true);
    let mut user: Option<&[u8]> = None;
    let (mut kind, mut max_age) = (None, None);
    let mut i = 2;
    while i + 1 < argv.len() {
        let value = &argv[i + 1];
        if is(argv[i], "id") {
            match int_arg(value) {
                Ok(n) if n > 0 => id = Some(n as u64),
                _ => return CommandError::ClientIdNotPositive.into(),
            }
        } else if is(argv[i], "addr") {
            addr = Some(String::from_utf8_lossy(value).into_owned());
        } else if is(argv[i], "laddr") {
            laddr = Some(String::from_utf8_lossy(value).into_owned());
        } else if is(argv[i], "skipme") {
            skip_me = if is(value, "yes") {
                true
            } else if is(value, "no") {
                false
            } else {
                return error(echomq_engine::Error::Syntax);
            };
        } else if is(argv[i], "user") {
            if ctx.state.acl_users().get(value).is_none() {
                return Reply::Error(format!(
                    "ERR No such user '{}'",
                    String::from_utf8_lossy(value)
                ));
            }
            user = Some(value);
        } else if is(argv[i], "maxage") {
            match int_arg(value) {
                Ok(n) if n > 0 => max_age = Some(n as u64),
                Ok(_) => return Reply::Error("ERR maxage should be greater than 0".into()),
                Err(_) => {
                    return Reply::Error("ERR maxage is not an integer or out of range".into());
                }
            }
        } else if is(argv[i], "type") {
            match client_type(value) {
                Ok(k) => kind = Some(k),
                Err(reply) => return reply,
            }
        } else {
            return error(echomq_engine::Error::Syntax);
        }
        i += 2;
    }
    if i != argv.len() {
        return error(echomq_engine::Error::Syntax);
    }
    let mut killed = 0;
    for c in clients {
        if skip_me && c.id == me {
            continue;
        }
        if id.is_some_and(|id| id != c.id)
            || addr.as_ref().is_some_and(|a| *a != c.addr.to_string())
            || laddr
                .as_ref()
                .is_some_and(|a| Some(a.clone()) != c.laddr.as_ref().map(|l| l.to_string()))
            || user.is_some_and(|u| c.user()[..] != *u)
            || kind.is_some_and(|k| !k.matches(&c))
            || max_age.is_some_and(|age| c.age_s() < age)
        {
            continue;
        }
        c.kill();
        killed += 1;
    }
    Reply::Int(killed)
}
