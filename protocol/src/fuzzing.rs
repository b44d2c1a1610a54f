//! Fuzzing support: arbitrary bytes through the RESP decoder, and through the server's command
//! dispatch as a sequence of client requests.
//!
//! Two fuzz targets, each a function here so that `cargo test` runs the same code without
//! cargo-fuzz (the tests below replay the committed corpora in `fuzz/corpus/<target>` and a few
//! thousand pseudo-random inputs):
//!
//! - [`resp_decode`] (`fuzz/fuzz_targets/resp_decode.rs`): the bytes are a client's input
//!   stream. It is decoded whole and in pieces, and both must agree command for command; no
//!   command may claim more bytes than it was given (or none); every command must survive a
//!   re-encoding as multibulk and as a quoted inline line.
//! - [`server_commands`] (`fuzz/fuzz_targets/server_commands.rs`): the bytes are requests from
//!   a few clients of one server (server commands and stream commands, with arguments from
//!   small vocabularies). Each request goes through the decoder and the server's dispatch, as a
//!   connection sends it; every reply must be well-formed RESP in the client's protocol, the
//!   keyspace invariants must hold, and no blocked command may be left registered without a
//!   client waiting for it.
//!
//! - [`script_eval`] (`fuzz/fuzz_targets/script_eval.rs`): the bytes pick Lua scripts from a
//!   small grammar of the scripting API (`redis.call`/`pcall` of allowed and refused commands,
//!   `redis.*` helpers, `cjson`, `cmsgpack`, `struct`, `bit`, `string`, errors, globals, short
//!   `for` loops, generated return values), run as EVAL or EVAL_RO by a RESP2 and a RESP3
//!   client: every reply must be well-formed RESP in the client's protocol, the client's
//!   protocol and database unchanged, and the keyspace invariants must hold.
//!
//! - [`aof_load`] (`fuzz/fuzz_targets/aof_load.rs`): the bytes are an append-only file (raw,
//!   or commands cut or damaged at a point), replayed by the loader: corrupt and truncated
//!   files give errors or a cut at a command boundary, never a panic.
//!
//! [`hot_path`] is not a fuzz target: it drives the same request path for the criterion bench
//! of the server path (`benches/server_path.rs`).
//!
//! All panic only on a broken property (or a panic inside the code under test).

mod aof;
mod decode;
pub mod hot_path;
mod resp_check;
mod script;
mod server;

pub use aof::run as aof_load;
pub use decode::run as resp_decode;
pub use script::run as script_eval;
pub use server::run as server_commands;

/// The undecoded rest of a fuzz input; running out of bytes reads zeros.
struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    fn new(data: &'a [u8]) -> Input<'a> {
        Input { data, pos: 0 }
    }

    fn byte(&mut self) -> Option<u8> {
        let b = *self.data.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    fn byte_or_zero(&mut self) -> u8 {
        self.byte().unwrap_or(0)
    }

    /// Up to `len` bytes, fewer at the end of the input.
    fn bytes(&mut self, len: usize) -> &'a [u8] {
        let start = self.pos.min(self.data.len());
        let end = start.saturating_add(len).min(self.data.len());
        self.pos = end;
        &self.data[start..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random inputs per target and test run, and their longest length.
    const RANDOM_INPUTS: usize = 2000;
    const RANDOM_INPUT_LEN_MAX: usize = 400;

    /// Inputs from the testkit's fixed sequence; `shape` may rewrite each before it runs.
    fn pseudo_random(run: fn(&[u8]), shape: fn(&mut Vec<u8>)) {
        for mut data in echomq_testkit::inputs(RANDOM_INPUTS, RANDOM_INPUT_LEN_MAX) {
            shape(&mut data);
            run(&data);
        }
    }

    #[test]
    fn the_resp_decode_corpus_runs_clean() {
        echomq_testkit::replay_corpus("resp_decode", resp_decode);
    }

    #[test]
    fn the_server_commands_corpus_runs_clean() {
        echomq_testkit::replay_corpus("server_commands", server_commands);
    }

    #[test]
    fn pseudo_random_resp_streams_decode_consistently() {
        // Random bytes rarely look like RESP: half the inputs get frame-like prefixes.
        pseudo_random(resp_decode, |data| {
            if data.len() > 8 && data[1] & 1 == 0 {
                let frame: &[u8] = match data[2] % 4 {
                    0 => b"*2\r\n$4\r\nPING\r\n$",
                    1 => b"*1\r\n$",
                    2 => b"PING \"a\\x4",
                    _ => b"*-1\r\n*0\r\n",
                };
                data.splice(1..1, frame.iter().copied());
            }
        });
    }

    #[test]
    fn the_aof_load_corpus_runs_clean() {
        echomq_testkit::replay_corpus("aof_load", aof_load);
    }

    #[test]
    fn pseudo_random_aof_files_load_or_fail_cleanly() {
        pseudo_random(aof_load, |data| {
            // Most inputs as generated commands, so the loader gets past the first byte.
            if let Some(head) = data.first_mut()
                && *head % 4 != 0
            {
                *head |= 2;
            }
        });
    }

    #[test]
    fn the_script_eval_corpus_runs_clean() {
        echomq_testkit::replay_corpus("script_eval", script_eval);
    }

    #[test]
    fn pseudo_random_scripts_run_clean() {
        // Fewer inputs than the other targets: each runs up to six scripts in a fresh VM.
        for data in echomq_testkit::inputs(300, RANDOM_INPUT_LEN_MAX) {
            script_eval(&data);
        }
    }

    #[test]
    fn pseudo_random_requests_run_clean() {
        pseudo_random(server_commands, |_| {});
    }
}
