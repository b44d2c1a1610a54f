//! Consumer groups and deletion (`docs/reference/streams-8.md` §1, §2): the KEEPREF, DELREF
//! and ACKED strategies of XADD's and XTRIM's trims, ENTRIESREAD capped to entries-added,
//! XDELEX and XACKDEL, through the command layer, with the invariants (reference index,
//! cached minimum cursor) checked after every command.

use super::tests::{err, int, keyspace, ok, pending, read_stream};
use crate::keyspace::Keyspace;
use crate::reply::Reply;

fn ints(ns: &[i64]) -> Reply {
    Reply::Array(ns.iter().map(|&n| Reply::Int(n)).collect())
}

/// The ids of an XRANGE reply.
fn ids(ks: &Keyspace, key: &str) -> Vec<String> {
    let Reply::Entries(entries) = ok(ks, &format!("XRANGE {key} - +")) else {
        panic!("XRANGE did not reply entries");
    };
    entries
        .iter()
        .map(|e| String::from_utf8_lossy(e.id).into_owned())
        .collect()
}

// Deletion strategies on trimming.

#[test]
fn acked_trim_skips_referenced_entries_and_goes_on_entry_by_entry_even_with_approx() {
    let (ks, _) = keyspace(1000);
    ks.config().set_node_entries_max(2);
    read_stream(&ks, 5);
    ok(&ks, "XACK s g 1-0 2-0 4-0");
    assert_eq!(ok(&ks, "XTRIM s MINID ~ 6-0 ACKED"), int(3));
    assert_eq!(ids(&ks, "s"), ["3-0", "5-0"]);
}

#[test]
fn acked_maxlen_trims_nothing_until_the_group_has_read_and_acked() {
    let (ks, _) = keyspace(1000);
    for i in 1..=5 {
        ok(&ks, &format!("XADD s {i}-0 f v"));
    }
    ok(&ks, "XGROUP CREATE s g 0");
    ok(&ks, "XADD s MAXLEN = 1 ACKED 6-0 f v");
    assert_eq!(ok(&ks, "XLEN s"), int(6));
    ok(&ks, "XREADGROUP GROUP g c STREAMS s >");
    ok(&ks, "XACK s g 1-0 2-0 3-0 4-0 5-0 6-0");
    ok(&ks, "XADD s MAXLEN = 1 ACKED 7-0 f v");
    assert_eq!(ok(&ks, "XLEN s"), int(1));
}

#[test]
fn acked_trim_on_a_stream_without_groups_is_keepref() {
    let (ks, _) = keyspace(1000);
    for i in 1..=3 {
        ok(&ks, &format!("XADD s {i}-0 f v"));
    }
    assert_eq!(ok(&ks, "XTRIM s MAXLEN 1 ACKED"), int(2));
}

#[test]
fn delref_trim_removes_the_entries_from_every_pel() {
    let (ks, _) = keyspace(1000);
    read_stream(&ks, 4);
    ok(&ks, "XGROUP CREATE s g2 0");
    ok(&ks, "XREADGROUP GROUP g2 c STREAMS s >");
    assert_eq!(ok(&ks, "XTRIM s MINID ~ 5-0 DELREF"), int(4));
    assert_eq!(pending(&ks, "s", "g"), int(0));
    assert_eq!(pending(&ks, "s", "g2"), int(0));
}

#[test]
fn keepref_trim_leaves_dangling_pending_entries() {
    let (ks, _) = keyspace(1000);
    read_stream(&ks, 4);
    assert_eq!(ok(&ks, "XTRIM s MAXLEN 0 KEEPREF"), int(4));
    assert_eq!(pending(&ks, "s", "g"), int(4));
}

#[test]
fn a_group_that_has_not_read_an_entry_references_it() {
    let (ks, _) = keyspace(1000);
    read_stream(&ks, 2);
    ok(&ks, "XACK s g 1-0 2-0");
    ok(&ks, "XADD s 3-0 f v");
    // 3-0 is above g's cursor; a new group at 0 references everything.
    assert_eq!(ok(&ks, "XTRIM s MAXLEN 0 ACKED"), int(2));
    ok(&ks, "XADD s 4-0 f v");
    ok(&ks, "XGROUP CREATE s late 0");
    assert_eq!(ok(&ks, "XTRIM s MAXLEN 0 ACKED"), int(0));
    ok(&ks, "XGROUP DESTROY s late");
    ok(&ks, "XREADGROUP GROUP g c STREAMS s >");
    ok(&ks, "XACK s g 3-0 4-0");
    assert_eq!(ok(&ks, "XTRIM s MAXLEN 0 ACKED"), int(2));
}

#[test]
fn approx_limit_caps_entry_by_entry_trimming() {
    let (ks, _) = keyspace(1000);
    ks.config().set_node_entries_max(2);
    read_stream(&ks, 6);
    ok(&ks, "XACK s g 1-0 2-0 3-0 4-0 5-0 6-0");
    // A node whose live count would pass the limit is not entered.
    assert_eq!(ok(&ks, "XTRIM s MAXLEN ~ 0 LIMIT 3 ACKED"), int(2));
    assert_eq!(ids(&ks, "s"), ["3-0", "4-0", "5-0", "6-0"]);
}

#[test]
fn strategy_tokens_parse_as_redis_8_8_does() {
    let (ks, _) = keyspace(1000);
    ok(&ks, "XADD s 1-0 f v");
    assert_eq!(
        err(&ks, "XADD s KEEPREF DELREF * f v"),
        "ERR Invalid stream ID specified as stream command argument"
    );
    assert_eq!(
        err(&ks, "XTRIM s MAXLEN 0 ACKED DELREF"),
        "ERR syntax error"
    );
    assert_eq!(ok(&ks, "XTRIM s acked MAXLEN 5"), int(0));
    // Without a trim the strategy is accepted and ignored.
    ok(&ks, "XADD s DELREF 2-0 f v");
    assert_eq!(ok(&ks, "XLEN s"), int(2));
}

// ENTRIESREAD is capped to entries-added.

#[test]
fn entries_read_above_entries_added_is_capped() {
    let (ks, _) = keyspace(1000);
    ok(&ks, "XADD s 1-0 f v");
    ok(&ks, "XGROUP CREATE s g $ ENTRIESREAD 10");
    ok(&ks, "XGROUP CREATE s g2 0");
    ok(&ks, "XGROUP SETID s g2 $ ENTRIESREAD 99");
    let Reply::Array(groups) = ok(&ks, "XINFO GROUPS s") else {
        panic!("XINFO GROUPS");
    };
    for group in groups {
        let Reply::Map(pairs) = group else {
            panic!("not a map")
        };
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == Reply::bulk(name))
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get("entries-read"), Some(int(1)));
        assert_eq!(get("lag"), Some(int(0)));
    }
}

// XDELEX and XACKDEL.

#[test]
fn xdelex_reports_per_id_and_checks_acked_before_existence() {
    let (ks, _) = keyspace(1000);
    ok(&ks, "XADD x 1-0 f v");
    ok(&ks, "XADD x 2-0 f v");
    ok(&ks, "XGROUP CREATE x g 0");
    assert_eq!(
        ok(&ks, "XDELEX x ACKED IDS 3 1-0 3-0 9-0"),
        ints(&[2, 2, 2])
    );
    assert_eq!(ok(&ks, "XDELEX x IDS 2 1-0 9-0"), ints(&[1, -1]));
    assert_eq!(ok(&ks, "XDELEX x KEEPREF IDS 1 1-0"), ints(&[-1]));
    assert_eq!(ok(&ks, "XLEN x"), int(1));
}

#[test]
fn xdelex_delref_drops_pending_entries_even_for_missing_ids() {
    let (ks, _) = keyspace(1000);
    read_stream(&ks, 2);
    ok(&ks, "XDEL s 2-0");
    assert_eq!(ok(&ks, "XDELEX s DELREF IDS 2 1-0 2-0"), ints(&[1, -1]));
    assert_eq!(pending(&ks, "s", "g"), int(0));
}

#[test]
fn xdelex_and_xackdel_errors_and_the_missing_key_reply() {
    let (ks, _) = keyspace(1000);
    assert_eq!(ok(&ks, "XDELEX nokey IDS 2 bad 1-0"), ints(&[-1, -1]));
    assert_eq!(ok(&ks, "XACKDEL nokey g IDS 1 bad"), ints(&[-1]));
    ok(&ks, "XADD s 1-0 f v");
    assert_eq!(ok(&ks, "XACKDEL s nogroup IDS 1 1-0"), ints(&[-1]));
    let cases = [
        (
            "XDELEX s DELREF",
            "ERR wrong number of arguments for 'xdelex' command",
        ),
        (
            "XACKDEL s g IDS 1",
            "ERR wrong number of arguments for 'xackdel' command",
        ),
        (
            "XDELEX s IDS 0 1-0",
            "ERR Number of IDs must be a positive integer",
        ),
        (
            "XDELEX s IDS x 1-0",
            "ERR Number of IDs must be a positive integer",
        ),
        (
            "XDELEX s IDS 3 1-0 2-0",
            "ERR The `numids` parameter must match the number of arguments",
        ),
        ("XDELEX s IDS 1 1-0 2-0", "ERR syntax error"),
        ("XDELEX s ACKED DELREF IDS 1 1-0", "ERR syntax error"),
        ("XDELEX s ACKED x 1-0", "ERR syntax error"),
        ("XDELEX s KEEPREF x IDS", "ERR syntax error"),
        ("XDELEX s KEEPREF 1 IDS", "ERR syntax error"),
        (
            "XDELEX s ACKED IDS 1 bad",
            "ERR Invalid stream ID specified as stream command argument",
        ),
    ];
    for (command, expected) in cases {
        assert_eq!(err(&ks, command), expected, "{command}");
    }
    assert_eq!(err(&ks, "XDELEX s ACKED ACKED ACKED"), "ERR syntax error");
    assert_eq!(
        err(&ks, "XDELEX s KEEPREF KEEPREF KEEPREF"),
        "ERR syntax error"
    );
}

#[test]
fn xdelex_accepts_options_after_the_ids_block() {
    let (ks, _) = keyspace(1000);
    ok(&ks, "XADD s 1-0 f v");
    assert_eq!(ok(&ks, "XDELEX s IDS 1 1-0 ACKED"), ints(&[1]));
}

#[test]
fn xackdel_acks_then_deletes_by_strategy() {
    let (ks, _) = keyspace(1000);
    ok(&ks, "XADD s 1-0 f v");
    ok(&ks, "XADD s 2-0 f v");
    ok(&ks, "XGROUP CREATE s g1 0");
    ok(&ks, "XGROUP CREATE s g2 0");
    ok(&ks, "XREADGROUP GROUP g1 c STREAMS s >");
    ok(&ks, "XREADGROUP GROUP g2 c STREAMS s >");
    assert_eq!(ok(&ks, "XACKDEL s g1 ACKED IDS 2 1-0 2-0"), ints(&[2, 2]));
    assert_eq!(ok(&ks, "XLEN s"), int(2));
    assert_eq!(pending(&ks, "s", "g1"), int(0));
    assert_eq!(ok(&ks, "XACKDEL s g1 ACKED IDS 2 1-0 2-0"), ints(&[-1, -1]));
    assert_eq!(ok(&ks, "XACKDEL s g2 ACKED IDS 2 1-0 2-0"), ints(&[1, 1]));
    assert_eq!(ok(&ks, "XLEN s"), int(0));
}

#[test]
fn xackdel_keepref_leaves_other_groups_dangling_and_delref_cleans_them() {
    let (ks, _) = keyspace(1000);
    ok(&ks, "XADD s 1-0 f v");
    ok(&ks, "XADD s 2-0 f v");
    ok(&ks, "XGROUP CREATE s g1 0");
    ok(&ks, "XGROUP CREATE s g2 0");
    ok(&ks, "XGROUP CREATE s g3 0");
    for g in ["g1", "g2", "g3"] {
        ok(&ks, &format!("XREADGROUP GROUP {g} c STREAMS s >"));
    }
    assert_eq!(ok(&ks, "XACKDEL s g1 KEEPREF IDS 1 1-0"), ints(&[1]));
    assert_eq!(pending(&ks, "s", "g2"), int(2));
    assert_eq!(ok(&ks, "XACKDEL s g2 KEEPREF IDS 1 1-0"), ints(&[1]));
    assert_eq!(ok(&ks, "XACKDEL s g1 DELREF IDS 1 2-0"), ints(&[1]));
    assert_eq!(pending(&ks, "s", "g2"), int(0));
    assert_eq!(pending(&ks, "s", "g3"), int(1));
}
