//! The script cache: every script EVAL or SCRIPT LOAD compiled, by the SHA1 of its body.
//!
//! Invariants: a script is in the cache only if its shebang parsed and its body compiled; the
//! key is the lower-case hex SHA1 of the whole body (shebang included); `evicting` holds
//! exactly the scripts added by EVAL (not SCRIPT LOAD), oldest first, at most [`EVAL_LRU_MAX`]
//! of them, as Redis evicts only those. `generation` moves on every flush, so each thread's
//! Lua VM knows its compiled functions are stale.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;
use rustc_hash::FxBuildHasher;

/// How many EVAL scripts the cache keeps before evicting the least recently used (Redis's
/// `LRU_LIST_LENGTH`).
pub(crate) const EVAL_LRU_MAX: usize = 500;

/// The shebang flags of a script (`#!lua flags=...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ScriptFlags {
    /// No shebang: Redis's backwards-compatible mode, where the flags are not checked.
    pub compat: bool,
    pub no_writes: bool,
    pub allow_oom: bool,
    pub allow_stale: bool,
    pub no_cluster: bool,
    pub allow_cross_slot: bool,
}

/// A cached script.
#[derive(Debug, Clone)]
pub(crate) struct Script {
    pub body: Bytes,
    pub flags: ScriptFlags,
    /// Bytes of the body after the shebang line (its line feed kept, so line numbers hold).
    pub code_start: usize,
}

/// The cache (see the module docs).
///
/// The map hashes with Fx rather than SipHash: EVALSHA looks a script up on every call, and
/// its key is a digest, which a client can only choose by grinding script bodies (a client
/// that can load scripts can stall the server more simply with one).
#[derive(Debug, Default)]
pub(crate) struct Cache {
    /// Each script, and whether EVAL added it (it is then in `evicting`).
    scripts: HashMap<String, (Script, bool), FxBuildHasher>,
    evicting: VecDeque<String>,
    pub generation: u64,
    /// Scripts evicted so far (INFO's `evicted_scripts`).
    pub evicted: u64,
}

impl Cache {
    /// The script whose SHA1 is `sha` (any case).
    pub fn get(&self, sha: &[u8]) -> Option<&Script> {
        self.scripts
            .get(lowercase_sha(sha)?.as_str())
            .map(|(script, _)| script)
    }

    /// The script whose SHA1 is `sha` (lower case), marked as just used (EVALSHA's lookup).
    pub fn use_script(&mut self, sha: &str) -> Option<Script> {
        let (script, by_eval) = self.scripts.get(sha)?;
        let (script, by_eval) = (script.clone(), *by_eval);
        if by_eval {
            self.touch(sha);
        }
        Some(script)
    }

    /// Marks an EVAL script as just used.
    pub fn touch(&mut self, sha: &str) {
        if self.evicting.back().is_some_and(|last| last == sha) {
            return;
        }
        if let Some(at) = self.evicting.iter().position(|s| s == sha) {
            if let Some(s) = self.evicting.remove(at) {
                self.evicting.push_back(s);
            }
        }
    }

    /// Adds a compiled script; `by_eval` puts it in the eviction list. Returns the SHAs evicted.
    pub fn insert(&mut self, sha: String, script: Script, by_eval: bool) -> Vec<String> {
        let mut evicted = Vec::new();
        if self.scripts.contains_key(&sha) {
            return evicted;
        }
        if by_eval {
            while self.evicting.len() >= EVAL_LRU_MAX {
                let Some(oldest) = self.evicting.pop_front() else {
                    break;
                };
                self.scripts.remove(&oldest);
                self.evicted += 1;
                evicted.push(oldest);
            }
            self.evicting.push_back(sha.clone());
        }
        self.scripts.insert(sha, (script, by_eval));
        evicted
    }

    /// Forgets every script.
    pub fn flush(&mut self) {
        self.scripts.clear();
        self.evicting.clear();
        self.generation += 1;
    }

    /// How many scripts are cached.
    pub fn len(&self) -> usize {
        self.scripts.len()
    }

    /// Bytes the cached bodies and their keys hold (INFO's `used_memory_scripts_eval`).
    pub fn memory(&self) -> usize {
        self.scripts
            .iter()
            .map(|(sha, (s, _))| sha.len() + s.body.len())
            .sum()
    }

    #[cfg(test)]
    pub fn check_invariants(&self) {
        assert!(self.evicting.len() <= EVAL_LRU_MAX);
        for sha in &self.evicting {
            assert!(
                self.scripts.contains_key(sha),
                "{sha} listed but not cached"
            );
        }
        for (sha, (script, by_eval)) in &self.scripts {
            assert_eq!(*sha, sha1hex(&script.body));
            assert_eq!(*by_eval, self.evicting.contains(sha), "{sha}");
        }
    }
}

/// A SHA1 as a script is named by: 40 characters, lower case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sha([u8; 40]);

impl Sha {
    pub fn as_str(&self) -> &str {
        // SAFETY: a `Sha` is built only by `lowercase_sha`, which accepts ASCII bytes only,
        // and ASCII is UTF-8. EVALSHA reads its SHA this way on every call, so it is not
        // validated twice.
        #[allow(unsafe_code)]
        unsafe {
            std::str::from_utf8_unchecked(&self.0)
        }
    }
}

/// `sha` in lower case, if it can name a script (40 bytes of text): without an allocation,
/// as EVALSHA looks a script up on every call.
pub(crate) fn lowercase_sha(sha: &[u8]) -> Option<Sha> {
    let mut lower: [u8; 40] = sha.try_into().ok()?;
    if !lower.is_ascii() {
        return None;
    }
    lower.make_ascii_lowercase();
    Some(Sha(lower))
}

/// The lower-case hex SHA1 of `bytes` (Redis's `sha1hex`).
pub(crate) fn sha1hex(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

/// Parses the shebang line, Redis's `evalExtractShebangFlags`: the flags, and where the code
/// after the shebang starts (at its line feed). Errors are Redis's texts, without `ERR `.
pub(crate) fn parse_shebang(body: &[u8]) -> Result<(ScriptFlags, usize), String> {
    let mut flags = ScriptFlags {
        compat: true,
        ..ScriptFlags::default()
    };
    if !body.starts_with(b"#!") {
        return Ok((flags, 0));
    }
    let Some(end) = body.iter().position(|&b| b == b'\n') else {
        return Err("Invalid script shebang".into());
    };
    let line = String::from_utf8_lossy(&body[..end]);
    let parts: Vec<&str> = line.split_ascii_whitespace().collect();
    let Some(engine) = parts.first() else {
        return Err("Invalid engine in script shebang".into());
    };
    if *engine != "#!lua" {
        return Err(format!("Unexpected engine in script shebang: {engine}"));
    }
    flags.compat = false;
    for part in &parts[1..] {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(format!("Unknown lua shebang option: {part}"));
        };
        if list.is_empty() {
            continue;
        }
        for flag in list.split(',') {
            match flag {
                "no-writes" => flags.no_writes = true,
                "allow-oom" => flags.allow_oom = true,
                "allow-stale" => flags.allow_stale = true,
                "no-cluster" => flags.no_cluster = true,
                "allow-cross-slot-keys" => flags.allow_cross_slot = true,
                other => return Err(format!("Unexpected flag in script shebang: {other}")),
            }
        }
    }
    Ok((flags, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(body: &str) -> (String, Script) {
        let (flags, code_start) = parse_shebang(body.as_bytes()).unwrap();
        let script = Script {
            body: Bytes::copy_from_slice(body.as_bytes()),
            flags,
            code_start,
        };
        (sha1hex(body.as_bytes()), script)
    }

    #[test]
    fn sha1_is_redis_s() {
        assert_eq!(sha1hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            sha1hex(b"return 1"),
            "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
        );
    }

    #[test]
    fn shebangs_parse_as_redis_s() {
        let (flags, start) = parse_shebang(b"#!lua flags=no-writes,allow-oom\nreturn 1").unwrap();
        assert!(flags.no_writes && flags.allow_oom && !flags.compat);
        assert_eq!(start, 31);
        assert!(parse_shebang(b"return 1").unwrap().0.compat);
        assert!(!parse_shebang(b"#!lua\n").unwrap().0.compat);
        assert!(!parse_shebang(b"#!lua flags=\n").unwrap().0.compat);
        assert_eq!(
            parse_shebang(b"#!lua").unwrap_err(),
            "Invalid script shebang"
        );
        assert_eq!(
            parse_shebang(b"#!python\n").unwrap_err(),
            "Unexpected engine in script shebang: #!python"
        );
        assert_eq!(
            parse_shebang(b"#!lua flags=bad\n").unwrap_err(),
            "Unexpected flag in script shebang: bad"
        );
        assert_eq!(
            parse_shebang(b"#!lua x=1\n").unwrap_err(),
            "Unknown lua shebang option: x=1"
        );
    }

    #[test]
    fn eval_scripts_are_evicted_oldest_first_and_loaded_ones_never() {
        let mut cache = Cache::default();
        let (loaded_sha, loaded) = script("return 'loaded'");
        cache.insert(loaded_sha.clone(), loaded, false);
        let mut first = None;
        for n in 0..EVAL_LRU_MAX + 3 {
            let (sha, s) = script(&format!("return {n}"));
            first.get_or_insert_with(|| sha.clone());
            cache.insert(sha, s, true);
            cache.check_invariants();
        }
        assert_eq!(cache.evicted, 3);
        assert!(cache.get(loaded_sha.as_bytes()).is_some());
        assert!(cache.get(first.unwrap().as_bytes()).is_none());
        assert_eq!(cache.len(), EVAL_LRU_MAX + 1);
        cache.flush();
        cache.check_invariants();
        assert_eq!(cache.len(), 0);
        assert_eq!(cache.generation, 1);
    }

    mod model {
        use std::collections::{HashSet, VecDeque};

        use proptest::prelude::*;

        use super::*;

        #[derive(Debug, Clone)]
        enum Op {
            Eval(u16),
            Load(u16),
            Touch(u16),
            Flush,
        }

        fn op() -> impl Strategy<Value = Op> {
            // Enough distinct bodies to pass the eviction limit with a small limit's worth
            // of touches in between.
            let body = 0..(EVAL_LRU_MAX as u16 + 40);
            prop_oneof![
                8 => body.clone().prop_map(Op::Eval),
                1 => body.clone().prop_map(Op::Load),
                3 => body.prop_map(Op::Touch),
                1 => Just(Op::Flush),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(24))]
            #[test]
            fn the_cache_evicts_as_a_simple_lru_of_eval_scripts(
                ops in proptest::collection::vec(op(), 1..1500),
            ) {
                let mut cache = Cache::default();
                let mut loaded: HashSet<String> = HashSet::new();
                let mut lru: VecDeque<String> = VecDeque::new();
                let mut evicted = 0u64;
                for op in ops {
                    match op {
                        Op::Eval(n) | Op::Load(n) => {
                            let by_eval = matches!(op, Op::Eval(_));
                            let (sha, s) = script(&format!("return {n}"));
                            let known = loaded.contains(&sha) || lru.contains(&sha);
                            cache.insert(sha.clone(), s, by_eval);
                            if !known {
                                if by_eval {
                                    while lru.len() >= EVAL_LRU_MAX {
                                        lru.pop_front();
                                        evicted += 1;
                                    }
                                    lru.push_back(sha);
                                } else {
                                    loaded.insert(sha);
                                }
                            }
                        }
                        Op::Touch(n) => {
                            let sha = sha1hex(format!("return {n}").as_bytes());
                            cache.touch(&sha);
                            if let Some(at) = lru.iter().position(|s| *s == sha) {
                                let s = lru.remove(at).unwrap();
                                lru.push_back(s);
                            }
                        }
                        Op::Flush => {
                            cache.flush();
                            loaded.clear();
                            lru.clear();
                        }
                    }
                    cache.check_invariants();
                    prop_assert_eq!(cache.len(), loaded.len() + lru.len());
                    prop_assert_eq!(cache.evicted, evicted);
                    for sha in loaded.iter().chain(lru.iter()) {
                        prop_assert!(cache.get(sha.as_bytes()).is_some());
                    }
                }
            }
        }
    }
}
