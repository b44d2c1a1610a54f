//! The dispatcher itself, through [`Keyspace::execute`]: which names it knows, arity checked
//! before anything else, Redis's unknown-command text, and a would-block command outside a
//! blocking caller. The commands' own grammar is tested beside each command and in the model
//! tests.

use std::sync::Arc;

use bytes::Bytes;

use crate::clock::ManualClock;
use crate::error::Error;
use crate::keyspace::{Keyspace, Value};
use crate::reply::Reply;

fn keyspace() -> Keyspace {
    Keyspace::new(Arc::new(ManualClock::new(1_000)))
}

fn err(ks: &Keyspace, argv: &[&[u8]]) -> String {
    match ks.execute(argv) {
        Ok(reply) => panic!("{argv:?} replied {reply:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn names_are_matched_in_any_case() {
    let ks = keyspace();
    ks.execute(&["xAdD", "k", "1-1", "f", "v"]).unwrap();
    assert_eq!(ks.execute(&["XLEN", "k"]).unwrap(), Reply::Int(1));
    assert_eq!(ks.execute(&["xlen", "k"]).unwrap(), Reply::Int(1));
}

#[test]
fn an_unknown_command_quotes_its_name_and_first_arguments() {
    let ks = keyspace();
    assert_eq!(
        err(&ks, &[b"NOSUCH", b"k", b"x"]),
        "ERR unknown command 'NOSUCH', with args beginning with: 'k' 'x' "
    );
    // A name that starts with X but is not a stream command; without arguments, no "with
    // args" part (Redis 8.8).
    assert_eq!(err(&ks, &[b"XNOPE"]), "ERR unknown command 'XNOPE'");
    assert_eq!(
        err(&ks, &[b"XNOPE", b""]),
        "ERR unknown command 'XNOPE', with args beginning with: '' "
    );
    assert!(matches!(
        ks.execute::<&[u8]>(&[]),
        Err(Error::UnknownCommand { ref name, ref args }) if name.is_empty() && args.is_empty()
    ));
}

#[test]
fn unknown_command_text_is_one_line_and_bounded() {
    let ks = keyspace();
    let long = vec![b'a'; 300];
    let text = err(&ks, &[b"NO\r\nPE", &long, b"never shown"]);
    let shown = format!("'{}' ", "a".repeat(128));
    assert_eq!(
        text,
        format!("ERR unknown command 'NO  PE', with args beginning with: {shown}")
    );
    assert!(!text.contains(['\r', '\n']));
}

#[test]
fn arity_is_checked_before_any_key_is_looked_at() {
    let ks = keyspace();
    ks.run(|db, _| db.insert(b"s", Value::String(Bytes::from_static(b"x").into())));
    // Fixed arity: too few and too many.
    assert_eq!(
        err(&ks, &[b"XLEN"]),
        "ERR wrong number of arguments for 'xlen' command"
    );
    assert_eq!(
        err(&ks, &[b"XLEN", b"s", b"extra"]),
        "ERR wrong number of arguments for 'xlen' command"
    );
    // Minimum arity, on a key of the wrong type: the arity error wins, named in lower case.
    assert_eq!(
        err(&ks, &[b"XADD", b"s", b"*", b"f"]),
        "ERR wrong number of arguments for 'xadd' command"
    );
    assert_eq!(
        err(
            &ks,
            &[b"XReadGroup", b"GROUP", b"g", b"c", b"STREAMS", b"s"]
        ),
        "ERR wrong number of arguments for 'xreadgroup' command"
    );
    assert_eq!(
        err(&ks, &[b"XADD", b"s", b"*", b"f", b"v"]),
        Error::WrongType.to_string()
    );
}

#[test]
fn a_command_that_would_block_replies_null_outside_a_blocking_caller() {
    let ks = keyspace();
    let reply = ks
        .execute(&["XREAD", "BLOCK", "0", "STREAMS", "k", "$"])
        .unwrap();
    assert_eq!(reply, Reply::NullArray);
    assert_eq!(ks.blocked_count(), 0);
}

#[test]
fn every_table_name_is_found_in_upper_and_mixed_case() {
    for entry in super::COMMANDS {
        let name = entry.spec.name;
        assert_eq!(
            name,
            name.to_ascii_lowercase(),
            "table names are lower case"
        );
        let upper = name.to_ascii_uppercase();
        let found = super::find(upper.as_bytes()).map(|e| e.spec.name);
        assert_eq!(found, Some(name));
        let mixed: String = name
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i % 2 == 0 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        assert_eq!(
            super::find(mixed.as_bytes()).map(|e| e.spec.name),
            Some(name)
        );
    }
    assert!(super::find(b"xlenx").is_none());
    assert!(super::find(b"xaaaaaaaaaaaaaaaaaaaaaaaaaa").is_none());
}
