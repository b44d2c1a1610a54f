//! ACLs end to end over raw RESP: a producer that may only XADD to its own keys, a consumer
//! with the consumer-group commands on the same keys, everything else refused with Redis's
//! NOPERM texts; transactions with refused commands; the INFO counters, ACL LOG's entries,
//! ACL GENPASS, CLIENT LIST's `user=`, and the clients closed when their user is deleted or
//! loses their channels; users from the `aclfile` and the config file.

use echomq::testing::TestServer;

use super::{Wire, info_field, show};
use crate::support::process::Running;

fn expect(wire: &mut Wire, argv: &[&str], expected: &[u8]) {
    let got = wire.command(argv);
    assert_eq!(show(&got), show(expected), "{}", argv.join(" "));
}

fn setup(server: &TestServer) -> Wire {
    let mut admin = Wire::connect(server);
    expect(
        &mut admin,
        &[
            "ACL",
            "SETUSER",
            "producer",
            "on",
            ">pp",
            "+xadd",
            "~emq:{cm}:*",
        ],
        b"+OK\r\n",
    );
    expect(
        &mut admin,
        &[
            "ACL",
            "SETUSER",
            "consumer",
            "on",
            ">cc",
            "+xgroup|create",
            "+xreadgroup",
            "+xack",
            "+xpending",
            "+xautoclaim",
            "~emq:{cm}:*",
        ],
        b"+OK\r\n",
    );
    admin
}

#[test]
fn a_producer_and_a_consumer_may_use_only_their_commands_and_keys() {
    let server = TestServer::start().unwrap();
    let mut admin = setup(&server);

    let mut producer = Wire::connect(&server);
    expect(&mut producer, &["AUTH", "producer", "pp"], b"+OK\r\n");
    expect(
        &mut producer,
        &["ACL", "WHOAMI"],
        b"-NOPERM User producer has no permissions to run the 'acl|whoami' command\r\n",
    );
    expect(
        &mut producer,
        &["XADD", "emq:{cm}:jobs", "1-1", "f", "v"],
        b"$3\r\n1-1\r\n",
    );
    expect(
        &mut producer,
        &["XADD", "other", "1-1", "f", "v"],
        b"-NOPERM No permissions to access a key\r\n",
    );
    expect(
        &mut producer,
        &["XRANGE", "emq:{cm}:jobs", "-", "+"],
        b"-NOPERM User producer has no permissions to run the 'xrange' command\r\n",
    );
    expect(
        &mut producer,
        &["GET", "emq:{cm}:jobs"],
        b"-NOPERM User producer has no permissions to run the 'get' command\r\n",
    );
    // Commands that run before authentication stay allowed.
    expect(
        &mut producer,
        &["AUTH", "producer", "bad"],
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n",
    );

    let mut consumer = Wire::connect(&server);
    let hello = hello_of(&mut consumer);
    expect(
        &mut consumer,
        &["HELLO", "2", "AUTH", "consumer", "cc", "SETNAME", "c1"],
        &hello,
    );
    expect(
        &mut consumer,
        &["XGROUP", "CREATE", "emq:{cm}:jobs", "g", "0"],
        b"+OK\r\n",
    );
    expect(
        &mut consumer,
        &["XGROUP", "DESTROY", "emq:{cm}:jobs", "g"],
        b"-NOPERM User consumer has no permissions to run the 'xgroup|destroy' command\r\n",
    );
    expect(
        &mut consumer,
        &["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "emq:{cm}:jobs", ">"],
        b"*1\r\n*2\r\n$13\r\nemq:{cm}:jobs\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
    );
    // Only the names after STREAMS are keys: a group called like a forbidden key is fine.
    expect(
        &mut consumer,
        &["XREADGROUP", "GROUP", "other", "c", "STREAMS", "other", ">"],
        b"-NOPERM No permissions to access a key\r\n",
    );
    expect(
        &mut consumer,
        &["XACK", "emq:{cm}:jobs", "g", "1-1"],
        b":1\r\n",
    );
    expect(
        &mut consumer,
        &["XADD", "emq:{cm}:jobs", "*", "f", "v"],
        b"-NOPERM User consumer has no permissions to run the 'xadd' command\r\n",
    );

    // CLIENT LIST shows each client's user.
    let list = String::from_utf8(admin.command(&["CLIENT", "LIST"])).unwrap();
    assert!(list.contains("user=producer"), "{list}");
    assert!(
        list.contains("name=c1") && list.contains("user=consumer"),
        "{list}"
    );
    assert!(list.contains("user=default"), "{list}");

    // The refusals are counted and logged.
    assert_eq!(
        info_field(&mut admin, "stats", "acl_access_denied_cmd"),
        "5"
    );
    assert_eq!(
        info_field(&mut admin, "stats", "acl_access_denied_key"),
        "2"
    );
    assert_eq!(
        info_field(&mut admin, "stats", "acl_access_denied_auth"),
        "1"
    );
    assert_eq!(
        info_field(&mut admin, "stats", "acl_access_denied_channel"),
        "0"
    );
    let log = String::from_utf8(admin.command(&["ACL", "LOG", "1"])).unwrap();
    for field in [
        "count",
        "reason",
        "context",
        "object",
        "username",
        "age-seconds",
        "client-info",
        "entry-id",
        "timestamp-created",
        "timestamp-last-updated",
    ] {
        assert!(
            log.contains(&format!("\r\n{field}\r\n")),
            "{field} in {log}"
        );
    }
    assert!(log.starts_with("*1\r\n*20\r\n"), "{log}");
    for pair in [
        "$6\r\nreason\r\n$7\r\ncommand\r\n",
        "$7\r\ncontext\r\n$8\r\ntoplevel\r\n",
        "$6\r\nobject\r\n$4\r\nxadd\r\n",
        "$8\r\nusername\r\n$8\r\nconsumer\r\n",
        "$5\r\ncount\r\n:1\r\n",
    ] {
        assert!(log.contains(pair), "{pair:?} in {log}");
    }
    expect(&mut admin, &["ACL", "LOG", "RESET"], b"+OK\r\n");
    expect(&mut admin, &["ACL", "LOG"], b"*0\r\n");

    // Deleting a user closes its clients.
    expect(&mut admin, &["ACL", "DELUSER", "producer"], b":1\r\n");
    assert!(producer.read_until_closed().is_empty());
}

/// HELLO 2's reply on `wire`'s connection (its id asked of the server).
fn hello_of(wire: &mut Wire) -> Vec<u8> {
    let id = String::from_utf8(wire.command(&["CLIENT", "ID"])).unwrap();
    let id: i64 = id.trim_start_matches(':').trim().parse().unwrap();
    super::hello_reply(id, false)
}

#[test]
fn refused_commands_abort_a_transaction_and_exec_checks_again() {
    let server = TestServer::start().unwrap();
    let mut admin = setup(&server);
    let mut producer = Wire::connect(&server);
    expect(&mut producer, &["AUTH", "producer", "pp"], b"+OK\r\n");
    expect(
        &mut admin,
        &["ACL", "SETUSER", "producer", "+multi", "+exec"],
        b"+OK\r\n",
    );
    expect(&mut producer, &["MULTI"], b"+OK\r\n");
    expect(
        &mut producer,
        &["XADD", "emq:{cm}:a", "*", "f", "v"],
        b"+QUEUED\r\n",
    );
    expect(
        &mut producer,
        &["XLEN", "emq:{cm}:a"],
        b"-NOPERM User producer has no permissions to run the 'xlen' command\r\n",
    );
    expect(
        &mut producer,
        &["EXEC"],
        b"-EXECABORT Transaction discarded because of previous errors.\r\n",
    );
    // Queued while allowed, refused at EXEC once the rules changed.
    expect(&mut producer, &["MULTI"], b"+OK\r\n");
    expect(
        &mut producer,
        &["XADD", "emq:{cm}:a", "1-1", "f", "v"],
        b"+QUEUED\r\n",
    );
    expect(
        &mut admin,
        &["ACL", "SETUSER", "producer", "-xadd"],
        b"+OK\r\n",
    );
    expect(
        &mut producer,
        &["EXEC"],
        b"*1\r\n-NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to execute the command or subcommand\r\n",
    );
    let log = String::from_utf8(admin.command(&["ACL", "LOG", "1"])).unwrap();
    assert!(log.contains("$7\r\ncontext\r\n$5\r\nmulti\r\n"), "{log}");
    assert!(log.contains("$6\r\nobject\r\n$4\r\nxadd\r\n"), "{log}");
}

#[test]
fn channels_genpass_and_the_default_user_follow_redis() {
    let server = TestServer::start().unwrap();
    let mut admin = Wire::connect(&server);
    expect(
        &mut admin,
        &[
            "ACL",
            "SETUSER",
            "sub",
            "on",
            "nopass",
            "+subscribe",
            "+psubscribe",
            "+publish",
            "+ping",
            "&news.*",
        ],
        b"+OK\r\n",
    );
    let mut sub = Wire::connect(&server);
    expect(&mut sub, &["AUTH", "sub", "x"], b"+OK\r\n");
    expect(
        &mut sub,
        &["PUBLISH", "sports", "m"],
        b"-NOPERM No permissions to access a channel\r\n",
    );
    expect(&mut sub, &["PUBLISH", "news.1", "m"], b":0\r\n");
    expect(
        &mut sub,
        &["PSUBSCRIBE", "news.1*"],
        b"-NOPERM No permissions to access a channel\r\n",
    );
    expect(
        &mut sub,
        &["SUBSCRIBE", "news.a"],
        b"*3\r\n$9\r\nsubscribe\r\n$6\r\nnews.a\r\n:1\r\n",
    );
    assert_eq!(
        info_field(&mut admin, "stats", "acl_access_denied_channel"),
        "2"
    );
    // Revoking a channel a client listens to closes it; keeping them does not.
    expect(
        &mut admin,
        &["ACL", "SETUSER", "sub", "resetchannels", "&news.a"],
        b"+OK\r\n",
    );
    expect(&mut sub, &["PING"], b"*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    expect(
        &mut admin,
        &["ACL", "SETUSER", "sub", "resetchannels", "&other"],
        b"+OK\r\n",
    );
    assert!(sub.read_until_closed().is_empty());
    let mut again = Wire::connect(&server);
    expect(&mut again, &["AUTH", "sub", "x"], b"+OK\r\n");
    expect(&mut admin, &["CLIENT", "KILL", "USER", "sub"], b":1\r\n");
    assert!(again.read_until_closed().is_empty());

    // GENPASS: hex digits, 256 bits by default, rounded up to whole digits.
    for (argv, digits) in [(&["ACL", "GENPASS"][..], 64), (&["ACL", "GENPASS", "5"], 2)] {
        let reply = String::from_utf8(admin.command(argv)).unwrap();
        let body = reply.split("\r\n").nth(1).unwrap();
        assert_eq!(body.len(), digits, "{reply}");
        assert!(
            body.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
    }

    // `requirepass` is the default user's password.
    expect(
        &mut admin,
        &["CONFIG", "SET", "requirepass", "foo"],
        b"+OK\r\n",
    );
    let list = String::from_utf8(admin.command(&["ACL", "LIST"])).unwrap();
    assert!(
        list.contains("user default on sanitize-payload #2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae ~* &* +@all"),
        "{list}"
    );
    let mut fresh = Wire::connect(&server);
    expect(
        &mut fresh,
        &["GET", "k"],
        b"-NOAUTH Authentication required.\r\n",
    );
    expect(&mut fresh, &["AUTH", "foo"], b"+OK\r\n");
    expect(&mut fresh, &["ACL", "WHOAMI"], b"$7\r\ndefault\r\n");
    expect(
        &mut admin,
        &["CONFIG", "SET", "requirepass", ""],
        b"+OK\r\n",
    );
    let list = String::from_utf8(admin.command(&["ACL", "LIST"])).unwrap();
    assert!(
        list.contains("user default on nopass sanitize-payload ~* &* +@all"),
        "{list}"
    );
}

/// Starts `echomq serve` with `config`; its address, or what it printed when it did not start.
fn serve(config: &std::path::Path) -> Result<(Running, std::net::SocketAddr), String> {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command, Stdio};
    let mut running = Running(
        Command::new(env!("CARGO_BIN_EXE_echomq"))
            .args(crate::support::process::SERVE_ARGS)
            .arg("--config")
            .arg(config)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut first_line = String::new();
    BufReader::new(running.0.stdout.take().unwrap())
        .read_line(&mut first_line)
        .unwrap();
    if first_line.is_empty() {
        let mut stderr = String::new();
        let _ = running.0.stderr.take().unwrap().read_to_string(&mut stderr);
        return Err(stderr);
    }
    let addr = first_line
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    Ok((running, addr))
}

#[test]
fn users_come_from_the_aclfile_or_the_config_file_and_acl_save_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let acl_path = dir.path().join("users.acl");
    std::fs::write(&acl_path, "user alice on >pw ~a* +get\n\n# a comment\n").unwrap();
    let config = dir.path().join("echomq.conf");
    std::fs::write(&config, format!("aclfile {}\n", acl_path.display())).unwrap();
    let (_running, addr) = serve(&config).unwrap();
    let mut admin = Wire::connect_to(addr);
    expect(
        &mut admin,
        &["ACL", "LIST"],
        b"*2\r\n$125\r\nuser alice on sanitize-payload #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~a* resetchannels -@all +get\r\n$51\r\nuser default on nopass sanitize-payload ~* &* +@all\r\n",
    );
    let mut alice = Wire::connect_to(addr);
    expect(&mut alice, &["AUTH", "alice", "pw"], b"+OK\r\n");
    expect(
        &mut alice,
        &["GET", "b"],
        b"-NOPERM No permissions to access a key\r\n",
    );

    expect(
        &mut admin,
        &[
            "ACL",
            "SETUSER",
            "bob",
            "on",
            "nopass",
            "+@all",
            "-@dangerous",
        ],
        b"+OK\r\n",
    );
    expect(&mut admin, &["ACL", "DELUSER", "alice"], b":1\r\n");
    expect(&mut admin, &["ACL", "SAVE"], b"+OK\r\n");
    assert_eq!(
        std::fs::read_to_string(&acl_path).unwrap(),
        "user bob on nopass sanitize-payload resetchannels +@all -@dangerous\nuser default on nopass sanitize-payload ~* &* +@all\n"
    );

    // A file with errors loads nothing.
    std::fs::write(&acl_path, "user carol on +nosuch\nuser bob on\n").unwrap();
    let path = acl_path.display().to_string();
    expect(
        &mut admin,
        &["ACL", "LOAD"],
        format!("-ERR {path}:1: Error in applying operation '+nosuch': Unknown command or category name in ACL. WARNING: ACL errors detected, no change to the previously active ACL rules was performed\r\n").as_bytes(),
    );
    expect(
        &mut admin,
        &["ACL", "USERS"],
        b"*2\r\n$3\r\nbob\r\n$7\r\ndefault\r\n",
    );
    std::fs::write(&acl_path, "user carol on nopass +get ~*\n").unwrap();
    expect(&mut admin, &["ACL", "LOAD"], b"+OK\r\n");
    expect(
        &mut admin,
        &["ACL", "USERS"],
        b"*2\r\n$5\r\ncarol\r\n$7\r\ndefault\r\n",
    );
    std::fs::remove_file(&acl_path).unwrap();
    expect(
        &mut admin,
        &["ACL", "LOAD"],
        format!("-ERR Error loading ACLs, opening file '{path}': No such file or directory\r\n")
            .as_bytes(),
    );

    // Users in the config file, the default one included.
    std::fs::write(
        &config,
        "user default on >secret ~* &* +@all\nuser worker on >w +@stream ~jobs:*\n",
    )
    .unwrap();
    let (_running, addr) = serve(&config).unwrap();
    let mut client = Wire::connect_to(addr);
    expect(
        &mut client,
        &["PING"],
        b"-NOAUTH Authentication required.\r\n",
    );
    expect(&mut client, &["AUTH", "worker", "w"], b"+OK\r\n");
    expect(&mut client, &["XLEN", "jobs:1"], b":0\r\n");
    expect(
        &mut client,
        &["GET", "jobs:1"],
        b"-NOPERM User worker has no permissions to run the 'get' command\r\n",
    );

    // Not both.
    std::fs::write(&config, format!("aclfile {path}\nuser a on\n")).unwrap();
    let refused = serve(&config).unwrap_err();
    assert!(
        refused.contains(
            "users defined in redis.conf and at the same setting an ACL file path is invalid"
        ),
        "{refused}"
    );
}
