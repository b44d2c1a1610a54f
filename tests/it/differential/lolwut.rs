//! LOLWUT and ROLE against Redis 8.8 over the wire, RESP2 and RESP3.
//!
//! Redis draws LOLWUT's art from `rand()`, seeded at start, so only what does not depend on it
//! is compared byte for byte: the version-only answer, Schotter with at most two rows of
//! squares (the rows before the random ones), the errors and their order. The random pieces
//! are compared by shape: the same reply type, the same caption, the same lines of the same
//! widths (Schotter, the skyline), the same kind of stanza (the poem).

use crate::support::peer::PeerKind;
use crate::support::resp::Resp;
use crate::support::wire::{WireDiffer, words};

/// Compared byte for byte.
const EXACT: &[&str] = &[
    "ROLE",
    "ROLE now",
    "COMMAND INFO role lolwut",
    "COMMAND DOCS role lolwut",
    "LOLWUT VERSION 7",
    "LOLWUT version 1 a b",
    "LOLWUT VERSION 0",
    "LOLWUT VERSION -1",
    "LOLWUT VERSION 9",
    "LOLWUT VERSION 55",
    "LOLWUT VERSION x",
    "LOLWUT VERSION 1.5",
    "LOLWUT VERSION 99999999999999999999",
    "LOLWUT VERSION 5 x",
    "LOLWUT VERSION 5 10 x",
    "LOLWUT VERSION 5 10 2 x",
    "LOLWUT VERSION 5 x 2 1",
    "LOLWUT VERSION 6 x",
    "LOLWUT VERSION 6 10 x",
    "LOLWUT VERSION 5 1 1 1",
    "LOLWUT VERSION 5 0 0 0",
    "LOLWUT VERSION 5 -7 -3 -1",
    "LOLWUT VERSION 5 2 1 1",
    "LOLWUT VERSION 5 3 2 2",
    "LOLWUT VERSION 5 10 3 1",
    "LOLWUT VERSION 5 66 8 2",
    "LOLWUT VERSION 5 33 5 2",
    "LOLWUT VERSION 5 40 7 1",
    "LOLWUT VERSION 5 80 13 2",
    "LOLWUT VERSION 5 1000 200 2",
    "LOLWUT VERSION 5 1001 201 2 extra",
    "LOLWUT VERSION 5 5 300 1",
    "LOLWUT VERSION 4294967301 20 4 2",
];

#[test]
fn lolwut_and_role_match_redis8_byte_for_byte() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    for protocol in [2, 3] {
        differ.reset(protocol).unwrap();
        for line in EXACT {
            let argv = words(&line.split_whitespace().collect::<Vec<_>>());
            if let Err(mismatch) = differ.run(&argv) {
                panic!("{mismatch}");
            }
        }
    }
}

/// The text of a LOLWUT reply (RESP3 verbatim without its `txt:`), and whether it was sent as
/// verbatim text.
fn text(reply: &Resp) -> (String, bool) {
    match reply {
        Resp::Bulk(b) => (String::from_utf8(b.clone()).unwrap(), false),
        Resp::Verbatim(b) => {
            let b = b.strip_prefix(b"txt:").expect("verbatim txt");
            (String::from_utf8(b.to_vec()).unwrap(), true)
        }
        other => panic!("not text: {other}"),
    }
}

/// The art (each line's width: in characters, or in pixels where each is a coloured space
/// ending in a reset escape) and the caption after it, split where the caption `starts`.
fn shape(text: &str, starts: &str) -> (Vec<usize>, String) {
    let at = text
        .find(starts)
        .unwrap_or_else(|| panic!("no caption in {text:?}"));
    let (art, caption) = text.split_at(at);
    let widths = art
        .lines()
        .map(|l| match l.matches("\u{1b}[0m").count() {
            0 => l.chars().count(),
            pixels => pixels,
        })
        .collect();
    (widths, caption.to_string())
}

#[test]
fn random_lolwut_pieces_have_redis8s_shape() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    let pieces: &[(&str, &str)] = &[
        ("LOLWUT VERSION 5", "\nGeorg Nees"),
        ("LOLWUT VERSION 5 20 4 6", "\nGeorg Nees"),
        ("LOLWUT VERSION 5 3 1 200", "\nGeorg Nees"),
        ("LOLWUT VERSION 6", "\nDedicated"),
        ("LOLWUT VERSION 6 1 1", "\nDedicated"),
        ("LOLWUT VERSION 6 37 9 extra", "\nDedicated"),
        ("LOLWUT VERSION 6 200 60", "\nDedicated"),
    ];
    for protocol in [2, 3] {
        differ.reset(protocol).unwrap();
        for (line, caption) in pieces {
            let argv = words(&line.split_whitespace().collect::<Vec<_>>());
            let (theirs, ours) = differ.run_uncompared(&argv).unwrap();
            let (theirs, ours) = (text(&theirs), text(&ours));
            assert_eq!(theirs.1, ours.1, "{line}: reply type");
            assert_eq!(
                shape(&theirs.0, caption),
                shape(&ours.0, caption),
                "{line} in RESP{protocol}"
            );
        }
    }
}

/// A stanza's lines: one to ten, each upper case without the verses' `/` marks.
fn stanza(text: &str) -> (usize, String) {
    let at = text.find("\nIn 1961").expect("the afterword");
    let (verses, afterword) = text.split_at(at);
    let lines: Vec<&str> = verses.lines().collect();
    assert!((1..=10).contains(&lines.len()), "{verses:?}");
    for line in &lines {
        assert!(line.starts_with(' ') && line.ends_with(' '), "{line:?}");
        assert!(
            line.chars()
                .all(|c| c == ' ' || c == '-' || c.is_ascii_uppercase()),
            "{line:?}"
        );
    }
    (usize::from(lines.len() > 1), afterword.to_string())
}

#[test]
fn lolwut_poems_have_redis8s_shape() {
    let Some(mut differ) = WireDiffer::start(PeerKind::Redis8) else {
        return;
    };
    for protocol in [2, 3] {
        differ.reset(protocol).unwrap();
        for line in [
            "LOLWUT",
            "LOLWUT it",
            "LOLWUT VERSION 8 IT",
            "LOLWUT VERSION",
            "LOLWUT x y",
        ] {
            let argv = words(&line.split_whitespace().collect::<Vec<_>>());
            let (theirs, ours) = differ.run_uncompared(&argv).unwrap();
            let (theirs, ours) = (text(&theirs), text(&ours));
            assert_eq!(theirs.1, ours.1, "{line}: reply type");
            assert_eq!(stanza(&theirs.0).1, stanza(&ours.0).1, "{line}");
        }
    }
    // Italian and English verses differ; the same words come out in both servers.
    let italian_word =
        |reply: &Resp| text(reply).0.contains(" DI ") || text(reply).0.contains(" LA ");
    let mut seen = (false, false);
    for _ in 0..20 {
        let (theirs, ours) = differ.run_uncompared(&words(&["LOLWUT", "IT"])).unwrap();
        seen.0 |= italian_word(&theirs);
        seen.1 |= italian_word(&ours);
    }
    assert_eq!(seen, (true, true));
}
