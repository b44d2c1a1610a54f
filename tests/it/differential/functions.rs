//! Functions against Redis 8.8 over the wire, RESP2 and RESP3: FUNCTION LOAD (the library
//! metadata, the load sandbox, `redis.register_function` positional and named with flags and
//! descriptions, every refusal), LIST (LIBRARYNAME, WITHCODE), DELETE, FLUSH, STATS, KILL,
//! HELP, DUMP and RESTORE (each policy, bad payloads), and FCALL/FCALL_RO (keys and arguments,
//! replies, runtime errors with their `script: <name>, on @user_function:N.` suffix, read-only
//! refusals, numkeys errors). Each case is one argument vector; replies compared byte for
//! byte. Listed libraries register one function each: Redis lists a library's functions in
//! its hash table's order.

use crate::support::peer::PeerKind;
use crate::support::wire::{WireDiffer, words};

const LIB: &str = "#!lua name=lib\n\
    redis.register_function('echo', function(keys, args) return {keys, args} end)";
const LIB_RO: &str = "#!lua name=ro\n\
    redis.register_function{function_name='get', callback=function(keys) \
    return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads a key'}";
const LIB_W: &str = "#!lua name=w\n\
    redis.register_function('incr', function(keys) return redis.call('incr', keys[1]) end)";

const CASES: &[&[&str]] = &[
    &["FUNCTION", "FLUSH"],
    &["FUNCTION", "LIST"],
    &["FUNCTION", "STATS"],
    &["FUNCTION", "LOAD", LIB],
    &["FUNCTION", "LOAD", LIB],
    &["FUNCTION", "LOAD", "REPLACE", LIB],
    &["FUNCTION", "LOAD", "BAD", LIB],
    &["FUNCTION", "LOAD", LIB_RO],
    &["FUNCTION", "LOAD", LIB_W],
    &["FUNCTION", "LIST", "LIBRARYNAME", "ro"],
    &["FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "l*"],
    &["FUNCTION", "LIST", "LIBRARYNAME"],
    &["FUNCTION", "LIST", "BAD"],
    &["FUNCTION", "LIST", "WITHCODE", "WITHCODE"],
    &["FUNCTION", "STATS"],
    &["FCALL", "echo", "2", "k1", "k2", "a1"],
    &["FCALL", "echo", "0"],
    &["FCALL_RO", "get", "1", "x"],
    &["FCALL", "incr", "1", "x"],
    &["FCALL_RO", "get", "1", "x"],
    &["FCALL_RO", "incr", "1", "x"],
    &["FCALL_RO", "echo", "0"],
    &["FCALL", "nosuch", "0"],
    &["FCALL", "echo", "x"],
    &["FCALL", "echo", "3", "a"],
    &["FCALL", "echo", "-1"],
    &["FCALL", "echo"],
    &["FUNCTION", "DELETE", "nosuch"],
    &["FUNCTION", "DELETE", "w"],
    &["FCALL", "incr", "1", "x"],
    &["FUNCTION", "LOAD", "return 1"],
    &["FUNCTION", "LOAD", "#!lua name=x"],
    &["FUNCTION", "LOAD", "#!lua\nreturn 1"],
    &["FUNCTION", "LOAD", "#!lua name=a name=b\n"],
    &["FUNCTION", "LOAD", "#!lua foo=bar\n"],
    &["FUNCTION", "LOAD", "#!lua name=a-b\n"],
    &["FUNCTION", "LOAD", "#!js name=x\n"],
    &[
        "FUNCTION",
        "LOAD",
        "#!LUA name=up\nredis.register_function('up', function() return 1 end)",
    ],
    &["FUNCTION", "LOAD", "#!lua name=x\nreturn 1"],
    &["FUNCTION", "LOAD", "#!lua name=x\nreturn +"],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.call('set', 'x', 1)",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nlocal s = string.len('a')",
    ],
    &["FUNCTION", "LOAD", "#!lua name=x\nerror('boom')"],
    &["FUNCTION", "LOAD", "#!lua name=x\nx = 1"],
    &["FUNCTION", "LOAD", "#!lua name=x\nlocal v = redis.setresp"],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function('a')",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function()",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function(1, 2, 3)",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function({}, function() end)",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function('f', 'g')",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function('f-1', function() end)",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function('echo', function() end)",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function('f', function() end) redis.register_function('f', function() end)",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function{callback=function() end}",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function{function_name='f'}",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function{function_name='f', callback=function() end, bad=1}",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function{function_name='f', callback=function() end, flags='no-writes'}",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function{function_name='f', callback=function() end, flags={'bad'}}",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function{function_name='f', callback=1}",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function{function_name={}, callback=function() end}",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=x\nredis.register_function{function_name='f', callback=function() end, description={}}",
    ],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=fl\nredis.register_function{function_name='fl', callback=function() return 1 end, \
         flags={'allow-oom', 'NO-WRITES', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}}",
    ],
    &["FUNCTION", "LIST", "LIBRARYNAME", "fl"],
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=rt\nlocal r = redis\nredis.register_function('late', function() return r.register_function('g', function() end) end)\n\
         redis.register_function('bad', function() return redis.call('nosuch') end)\n\
         redis.register_function('raise', function() error('oops') end)\n\
         redis.register_function('stat', function() return redis.status_reply('FINE') end)\n\
         redis.register_function('g', function() return _G.redis ~= nil end)\n\
         redis.register_function('setr', function() redis.setresp(3) return {map={a=1}} end)\n\
         redis.register_function('miss', function() return nosuch_global end)\n\
         redis.register_function('gmiss', function() return _G.nosuch end)\n\
         redis.register_function('setg', function() x = 1 end)\n\
         local saved\n\
         redis.register_function('stash', function() saved = saved or redis.call return saved('incr', 'stashed') end)",
    ],
    &["FCALL", "late", "0"],
    &["FCALL", "bad", "0"],
    &["FCALL", "raise", "0"],
    &["FCALL", "stat", "0"],
    &["FCALL", "g", "0"],
    &["FCALL", "setr", "0"],
    &["FCALL", "miss", "0"],
    &["FCALL", "gmiss", "0"],
    &["FCALL", "setg", "0"],
    &["FCALL", "stash", "0"],
    &["FCALL", "stash", "0"],
    &["FUNCTION", "DELETE", "rt"],
    // A function's `_G` is read-only to the base functions too: nothing kept for the next call.
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=ro
redis.register_function('keep', function() rawset(_G, 'kept', 1) end)
         redis.register_function('kept', function() return kept end)
         redis.register_function('meta', function() setmetatable(_G, nil) end)
         redis.register_function('strmeta', function() getmetatable('').kept = 1 end)
         redis.register_function('names', function() local ks = {} for k in pairs(_G) do ks[#ks+1] = k end table.sort(ks) return ks end)
         redis.register_function('raw', function() return {rawget(_G, 'redis') ~= nil, next(_G) ~= nil} end)",
    ],
    &["FCALL", "keep", "0"],
    &["FCALL", "kept", "0"],
    &["FCALL", "meta", "0"],
    &["FCALL", "strmeta", "0"],
    &["FCALL", "names", "0"],
    &["FCALL", "raw", "0"],
    &["FUNCTION", "DELETE", "ro"],
    &["FUNCTION", "RESTORE", "garbage"],
    &["FUNCTION", "RESTORE", "garbage", "BAD"],
    &["FUNCTION", "RESTORE", "garbage", "FLUSH", "x"],
    &["FUNCTION", "FLUSH", "BAD"],
    &["FUNCTION", "FLUSH", "SYNC", "X"],
    &["FUNCTION", "KILL"],
    &["FUNCTION", "HELP"],
    &["FUNCTION", "NOSUCH"],
    &["FUNCTION", "DUMP", "X"],
    &["FUNCTION", "FLUSH", "ASYNC"],
    &["FUNCTION", "LIST"],
    &["FCALL", "echo", "0"],
];

#[test]
fn functions_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands: Vec<_> = CASES.iter().map(|argv| words(argv)).collect();
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A library dumped by one server restores on the other and lists the same; each policy's
/// collisions refused alike.
#[test]
fn function_dump_and_restore_match_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let mut commands = vec![
        words(&["FUNCTION", "FLUSH"]),
        words(&["FUNCTION", "LOAD", LIB]),
        words(&["FUNCTION", "DUMP"]),
    ];
    // The dump is compared byte for byte above; restoring it goes through both servers'
    // parsers with each policy.
    let payload = {
        differ.reset(2).unwrap();
        differ.run(&words(&["FUNCTION", "FLUSH"])).unwrap();
        differ.run(&words(&["FUNCTION", "LOAD", LIB])).unwrap();
        match differ.run(&words(&["FUNCTION", "DUMP"])).unwrap() {
            crate::support::resp::Resp::Bulk(b) => b,
            other => panic!("FUNCTION DUMP answered {other}"),
        }
    };
    let with_payload = |argv: &[&str]| -> Vec<Vec<u8>> {
        let mut argv = words(argv);
        argv.insert(2, payload.clone());
        argv
    };
    commands.extend([
        with_payload(&["FUNCTION", "RESTORE"]),
        with_payload(&["FUNCTION", "RESTORE", "APPEND"]),
        with_payload(&["FUNCTION", "RESTORE", "REPLACE"]),
        words(&["FCALL", "echo", "1", "k"]),
        with_payload(&["FUNCTION", "RESTORE", "FLUSH"]),
        words(&["FUNCTION", "LIST", "WITHCODE"]),
        words(&["FUNCTION", "DELETE", "lib"]),
        with_payload(&["FUNCTION", "RESTORE"]),
        words(&["FUNCTION", "LIST"]),
    ]);
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `redis.acl_check_cmd` answers for the caller's user, from a script and from a function.
#[test]
fn acl_check_cmd_answers_for_the_callers_user_as_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let check = "#!lua name=chk\nredis.register_function('chk', function(keys, args) \
                 return redis.acl_check_cmd(unpack(args)) end)";
    let commands: Vec<_> = [
        &["FUNCTION", "FLUSH"][..],
        &["FUNCTION", "LOAD", check],
        &[
            "ACL", "SETUSER", "limited", "on", ">pw", "+@all", "-get", "~k*",
        ],
        &["EVAL", "return redis.acl_check_cmd('get', 'x')", "0"],
        &["AUTH", "limited", "pw"],
        &["EVAL", "return redis.acl_check_cmd('get', 'k1')", "0"],
        &["EVAL", "return redis.acl_check_cmd('set', 'k1', 'v')", "0"],
        &[
            "EVAL",
            "return redis.acl_check_cmd('set', 'other', 'v')",
            "0",
        ],
        &["EVAL", "return redis.acl_check_cmd('nosuch')", "0"],
        &["EVAL", "return redis.acl_check_cmd('get')", "0"],
        &["FCALL", "chk", "0", "get", "k1"],
        &["FCALL", "chk", "0", "incr", "k1"],
        &["AUTH", "default", "x"],
        &["ACL", "DELUSER", "limited"],
    ]
    .iter()
    .map(|argv| words(argv))
    .collect();
    let failures = differ.run_in_both_protocols(&commands);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A library whose loading never ends is stopped after Redis's 500 ms, with its error.
#[test]
fn a_library_that_loads_forever_times_out_as_on_redis_8() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let commands = vec![
        words(&["FUNCTION", "LOAD", "#!lua name=forever\nwhile true do end"]),
        words(&["FUNCTION", "LIST"]),
    ];
    differ.reset(2).unwrap();
    for argv in &commands {
        if let Err(mismatch) = differ.run(argv) {
            panic!("{mismatch}");
        }
    }
}
