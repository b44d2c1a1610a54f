use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use echomq_engine::ManualClock;

use super::*;
use crate::feed::brand::Brand;

const T: u64 = 1_796_000_000_000;

fn evt(ms: u64, seq: u64) -> Branded {
    Branded::from_parts(Brand::Evt, ms, seq).unwrap()
}

fn temp_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "echomq-dedup-{}-{name}-{}",
        std::process::id(),
        fresh_token()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("dedup.redb")
}

/// The once-per-id contract on any store.
fn contract<S: DedupStore>(store: S) {
    let clock = Arc::new(ManualClock::new(T));
    let a = Dedup::new(&store, "render")
        .with_clock(clock.clone())
        .with_lease_ms(1_000);
    let b = Dedup::new(&store, "render")
        .with_clock(clock.clone())
        .with_lease_ms(1_000);
    let id = evt(T, 1);

    // Work that fails gives the lease back: the other helper may run it at once.
    let failed: Result<Once<()>, OnceError<&str>> = a.once(id, || Err("smtp down"));
    assert!(matches!(failed, Err(OnceError::Work("smtp down"))));
    assert_eq!(b.once(id, || Ok::<_, ()>(7)).unwrap(), Once::Ran(7));
    assert!(a.is_done(id).unwrap());
    // Every later delivery is a no-op.
    assert_eq!(a.once(id, || Ok::<_, ()>(8)).unwrap(), Once::Skipped);
    assert_eq!(b.once(id, || Ok::<_, ()>(9)).unwrap(), Once::Skipped);

    // A live lease of another holder makes the id busy; its expiry frees it.
    let other = evt(T, 2);
    assert_eq!(
        store.begin("render", other, 42, T, 1_000).unwrap(),
        Claim::Taken
    );
    assert!(matches!(
        a.once(other, || Ok::<_, ()>(())),
        Err(OnceError::Busy(id)) if id == other
    ));
    clock.advance(1_001);
    assert_eq!(a.once(other, || Ok::<_, ()>(1)).unwrap(), Once::Ran(1));

    // Another scope is another key.
    let c = Dedup::new(&store, "email").with_clock(clock);
    assert_eq!(c.once(id, || Ok::<_, ()>(2)).unwrap(), Once::Ran(2));
}

impl<S: DedupStore> DedupStore for &S {
    fn begin(
        &self,
        scope: &str,
        id: Branded,
        token: u64,
        now_ms: u64,
        lease_ms: u64,
    ) -> Result<Claim, DedupError> {
        (**self).begin(scope, id, token, now_ms, lease_ms)
    }
    fn finish(&self, scope: &str, id: Branded, token: u64) -> Result<(), DedupError> {
        (**self).finish(scope, id, token)
    }
    fn abandon(&self, scope: &str, id: Branded, token: u64) -> Result<(), DedupError> {
        (**self).abandon(scope, id, token)
    }
    fn is_done(&self, scope: &str, id: Branded) -> Result<bool, DedupError> {
        (**self).is_done(scope, id)
    }
}

#[test]
fn memory_store_keeps_the_contract() {
    contract(MemoryDedup::new());
}

#[test]
fn durable_store_keeps_the_contract() {
    let path = temp_path("contract");
    contract(DurableDedup::open(&path).unwrap());
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn a_panicking_render_gives_the_lease_back() {
    let store = MemoryDedup::new();
    let dedup = Dedup::new(&store, "render");
    let id = evt(T, 3);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = dedup.once(id, || -> Result<(), ()> { panic!("render bug") });
    }));
    assert!(panicked.is_err());
    assert!(store.is_empty(), "the lease was dropped on unwind");
    let other = Dedup::new(&store, "render");
    assert_eq!(other.once(id, || Ok::<_, ()>(())).unwrap(), Once::Ran(()));
}

#[test]
fn racing_helpers_run_each_id_exactly_once() {
    let store = Arc::new(MemoryDedup::new());
    let runs = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (store, runs) = (Arc::clone(&store), Arc::clone(&runs));
            std::thread::spawn(move || {
                let dedup = Dedup::new(store, "render");
                for seq in 0..500 {
                    // Busy means another thread holds it; it will finish it.
                    let _ = dedup.once(evt(T, seq), || {
                        runs.fetch_add(1, Ordering::SeqCst);
                        Ok::<_, ()>(())
                    });
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(runs.load(Ordering::SeqCst), 500);
}

#[test]
fn durable_done_marks_survive_a_reopen_and_prune_by_age() {
    let path = temp_path("reopen");
    {
        let store = DurableDedup::open(&path).unwrap();
        let dedup = Dedup::new(&store, "render");
        for ms in [T, T + 10, T + 20] {
            dedup.once(evt(ms, 0), || Ok::<_, ()>(())).unwrap();
        }
    }
    let store = DurableDedup::open(&path).unwrap();
    let dedup = Dedup::new(&store, "render");
    assert_eq!(
        dedup.once(evt(T + 10, 0), || Ok::<_, ()>(())).unwrap(),
        Once::Skipped
    );
    assert_eq!(store.prune_before("render", Brand::Evt, T + 15).unwrap(), 2);
    assert!(!dedup.is_done(evt(T, 0)).unwrap());
    assert!(dedup.is_done(evt(T + 20, 0)).unwrap());
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn a_file_that_is_not_a_store_is_an_error() {
    let path = temp_path("garbage");
    std::fs::write(&path, vec![0x5A; 8192]).unwrap();
    assert!(matches!(
        DurableDedup::open(&path),
        Err(DedupError::File(_))
    ));
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn memory_prune_forgets_only_old_done_marks() {
    let store = MemoryDedup::new();
    let dedup = Dedup::new(&store, "render");
    dedup.once(evt(T, 0), || Ok::<_, ()>(())).unwrap();
    dedup.once(evt(T + 100, 0), || Ok::<_, ()>(())).unwrap();
    store.begin("render", evt(T + 1, 0), 9, T, 1_000).unwrap();
    assert_eq!(store.prune_before(T + 50), 1);
    assert_eq!(store.len(), 2);
}

mod model {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    /// What a store must answer, as plainly as possible.
    #[derive(Debug, Default)]
    struct Model {
        marks: HashMap<(usize, u64), Option<(u64, u64)>>,
    }

    impl Model {
        fn begin(&mut self, key: (usize, u64), token: u64, now: u64, lease: u64) -> Claim {
            let claim = match self.marks.get(&key) {
                Some(None) => Claim::Done,
                Some(Some((holder, until))) if *holder != token && *until > now => Claim::Busy,
                _ => Claim::Taken,
            };
            if claim == Claim::Taken {
                self.marks.insert(key, Some((token, now + lease)));
            }
            claim
        }

        fn abandon(&mut self, key: (usize, u64), token: u64) {
            if matches!(self.marks.get(&key), Some(Some((holder, _))) if *holder == token) {
                self.marks.remove(&key);
            }
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Begin(usize, u64, u64, u64),
        Finish(usize, u64, u64),
        Abandon(usize, u64, u64),
        Advance(u64),
    }

    const SCOPES: [&str; 2] = ["render", "email"];

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..2usize, 0..4u64, 0..3u64, 1..50u64).prop_map(|(s, i, t, l)| Op::Begin(s, i, t, l)),
            2 => (0..2usize, 0..4u64, 0..3u64).prop_map(|(s, i, t)| Op::Finish(s, i, t)),
            2 => (0..2usize, 0..4u64, 0..3u64).prop_map(|(s, i, t)| Op::Abandon(s, i, t)),
            1 => (1..60u64).prop_map(Op::Advance),
        ]
    }

    /// Every mark the model knows reads back the same from the store.
    fn check_invariants(model: &Model, store: &dyn DedupStore) {
        for (&(scope, seq), mark) in &model.marks {
            assert_eq!(
                store.is_done(SCOPES[scope], evt(T, seq)).unwrap(),
                mark.is_none(),
                "{scope}/{seq}"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn memory_and_durable_stores_agree_with_the_model(ops in proptest::collection::vec(op(), 1..40)) {
            let path = temp_path("model");
            let durable = DurableDedup::open(&path).unwrap();
            let memory = MemoryDedup::new();
            let stores: [&dyn DedupStore; 2] = [&memory, &durable];
            let mut model = Model::default();
            let mut now = T;
            for op in ops {
                match op {
                    Op::Begin(s, i, t, lease) => {
                        let expected = model.begin((s, i), t, now, lease);
                        for store in stores {
                            prop_assert_eq!(store.begin(SCOPES[s], evt(T, i), t, now, lease).unwrap(), expected);
                        }
                    }
                    Op::Finish(s, i, t) => {
                        model.marks.insert((s, i), None);
                        for store in stores {
                            store.finish(SCOPES[s], evt(T, i), t).unwrap();
                        }
                    }
                    Op::Abandon(s, i, t) => {
                        model.abandon((s, i), t);
                        for store in stores {
                            store.abandon(SCOPES[s], evt(T, i), t).unwrap();
                        }
                    }
                    Op::Advance(ms) => now += ms,
                }
                for store in stores {
                    check_invariants(&model, store);
                }
            }
            drop(durable);
            let _ = std::fs::remove_dir_all(path.parent().unwrap());
        }
    }
}
