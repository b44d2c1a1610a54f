//! `echomq serve --archive` restarted: the live stream is gone, its archived prefix is not.
//! Each archived stream starts with a live last id of W, as after `XSETID W`: an explicit id
//! at or below W gets XADD's error (compared with Redis 8.8 on the same stream before any
//! restart, where the top item is above W), `*` continues above W.

use crate::archive::Client;
use crate::support::peer::{Peer, PeerKind};
use crate::support::process::{self, echomq};
use crate::support::resp::Resp;

/// Far in the future, so `*` (the wall clock) is below W and must continue from W.
const MS: u64 = 99_999_999_999_999;

fn id(seq: u64) -> String {
    format!("{MS}-{seq}")
}

/// The stream every run starts with: ten entries, then a trim that folds the first seven.
fn fill(call: &mut dyn FnMut(&[&str]) -> Resp) {
    for seq in 1..=10 {
        let id = id(seq);
        assert_eq!(
            call(&["XADD", "ev", &id, "n", &id]),
            Resp::Bulk(id.clone().into())
        );
    }
    assert_eq!(call(&["XTRIM", "ev", "MAXLEN", "3"]), Resp::Int(7));
}

#[test]
fn after_a_restart_ids_at_or_below_the_watermark_are_refused_and_star_continues_above_it() {
    let dir = tempfile::tempdir().unwrap();
    let archive_dir = dir.path().join("archive");
    let archive_arg = archive_dir.to_str().unwrap();
    {
        let (_running, addr) = process::serve(echomq(), &["--archive", archive_arg]);
        let mut ours = Client::connect(addr);
        fill(&mut |argv| ours.call(argv));
    }
    let (_running, addr) = process::serve(echomq(), &["--archive", archive_arg]);
    let mut ours = Client::connect(addr);
    let mut redis = Peer::start(PeerKind::Redis8);
    if let Some(redis) = redis.as_mut() {
        fill(&mut |argv| redis.call(argv));
    }
    // W is the seventh id: it and everything below are refused with Redis's error.
    for seq in [7, 3, 1] {
        let below = id(seq);
        let argv = ["XADD", "ev", below.as_str(), "n", "x"];
        let reply = ours.call(&argv);
        assert_eq!(
            reply,
            Resp::Error(
                "ERR The ID specified in XADD is equal or smaller than the target stream top item"
                    .into()
            )
        );
        if let Some(redis) = redis.as_mut() {
            assert_eq!(redis.call(&argv), reply, "{argv:?}");
        }
    }
    // The live stream is empty, its last id W, and its added count the folded records.
    assert_eq!(ours.call(&["XLEN", "ev"]), Resp::Int(0));
    let Resp::Array(info) = ours.call(&["XINFO", "STREAM", "ev"]) else {
        panic!("XINFO STREAM ev is not an array");
    };
    let field = |name: &str| {
        info.chunks(2)
            .find(|pair| pair[0] == Resp::Bulk(name.as_bytes().to_vec()))
            .map(|pair| pair[1].clone())
    };
    assert_eq!(field("last-generated-id"), Some(Resp::Bulk(id(7).into())));
    assert_eq!(field("entries-added"), Some(Resp::Int(7)));
    // `*` continues above W (the clock is below W's millisecond).
    assert_eq!(
        ours.call(&["XADD", "ev", "*", "n", "x"]),
        Resp::Bulk(id(8).into())
    );
    // And the next trim folds it without complaint: the archive and the live tail are one log.
    assert_eq!(
        ours.call(&["XADD", "ev", "*", "n", "y"]),
        Resp::Bulk(id(9).into())
    );
    assert_eq!(ours.call(&["XTRIM", "ev", "MAXLEN", "1"]), Resp::Int(1));
    let Resp::Array(all) = ours.call(&["EMQ.XRANGE", "ev", "-", "+"]) else {
        panic!("EMQ.XRANGE is not an array");
    };
    assert_eq!(all.len(), 9);
}
