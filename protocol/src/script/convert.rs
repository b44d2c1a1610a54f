//! Redis's conversions between Lua values and RESP, both ways, as `script_lua.c` does them.
//!
//! A command's reply reaches Lua the way Redis hands it over: encoded in the protocol the
//! script chose (`redis.setresp`, RESP2 by default) and parsed back, so every shape a client
//! would see (RESP2's flattened maps, RESP3's doubles and booleans) is what the script sees.
//! Lua to RESP follows `luaReplyToRedisReply`: strings are bulk strings, numbers integers
//! (truncated), `true` is 1 (RESP2 scripts) or a boolean, `false` and `nil` are nulls, and a
//! table is an error, status, double, big number, verbatim string, map or set when it has
//! that field, an array otherwise (up to its first nil).
//!
//! Invariant: conversion never recurses deeper than [`MAX_DEPTH`] (a table holding itself
//! ends in Redis's `reached lua stack limit` error, not a stack overflow).

use bytes::{BufMut, BytesMut};
use mlua::{Lua, Table, Value};

/// How deep nested tables and replies may go (Redis stops at Lua's C stack limit).
pub(crate) const MAX_DEPTH: usize = 1000;

/// The text Redis puts in an error table's `err` field for an error reply or message `text`
/// (`luaPushErrorBuff`): `-CODE msg` keeps its code, a text without `-` gets `ERR`; trailing
/// line breaks go.
pub(crate) fn error_text(text: &[u8]) -> Vec<u8> {
    let (code, msg): (&[u8], &[u8]) = match text.strip_prefix(b"-") {
        Some(rest) => match rest.iter().position(|&b| b == b' ') {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (b"ERR", rest),
        },
        None => (b"ERR", text),
    };
    let mut end = msg.len();
    while end > 0 && matches!(msg[end - 1], b'\r' | b'\n') {
        end -= 1;
    }
    let mut start = 0;
    while start < end && matches!(msg[start], b'\r' | b'\n') {
        start += 1;
    }
    let mut out = Vec::with_capacity(code.len() + 1 + end - start);
    out.extend_from_slice(code);
    out.push(b' ');
    out.extend_from_slice(&msg[start..end]);
    out
}

/// An error table, `{err = ...}` (see [`error_text`]).
pub(crate) fn error_table(lua: &Lua, text: &[u8]) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    table.raw_set("err", lua.create_string(error_text(text))?)?;
    Ok(table)
}

/// A reply, encoded in RESP, as the Lua value Redis hands a script (`redisProtocolToLuaType`).
pub(crate) fn reply_to_lua(lua: &Lua, resp: &[u8]) -> mlua::Result<Value> {
    let mut parser = Parser { lua, resp, at: 0 };
    parser.value(0)
}

struct Parser<'a> {
    lua: &'a Lua,
    resp: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn malformed() -> mlua::Error {
        mlua::Error::RuntimeError("malformed reply".into())
    }

    /// The line at the cursor (without its type byte and CRLF).
    fn line(&mut self) -> mlua::Result<&[u8]> {
        let start = self.at + 1;
        let rest = self.resp.get(start..).ok_or_else(Self::malformed)?;
        let len = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(Self::malformed)?;
        self.at = start + len + 2;
        Ok(&rest[..len])
    }

    fn int(&mut self) -> mlua::Result<i64> {
        let line = self.line()?;
        parse_int(line).ok_or_else(Self::malformed)
    }

    fn blob(&mut self, len: i64) -> mlua::Result<&[u8]> {
        let len = usize::try_from(len).map_err(|_| Self::malformed())?;
        let bytes = self
            .resp
            .get(self.at..self.at + len)
            .ok_or_else(Self::malformed)?;
        self.at += len + 2;
        Ok(bytes)
    }

    fn value(&mut self, depth: usize) -> mlua::Result<Value> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.nested(depth))
    }

    fn nested(&mut self, depth: usize) -> mlua::Result<Value> {
        if depth > MAX_DEPTH {
            return Err(Self::malformed());
        }
        let lua = self.lua;
        let kind = *self.resp.get(self.at).ok_or_else(Self::malformed)?;
        Ok(match kind {
            b':' => Value::Number(self.int()? as f64),
            b'$' => match self.int()? {
                -1 => Value::Boolean(false),
                len => Value::String(lua.create_string(self.blob(len)?)?),
            },
            b'+' => {
                let table = lua.create_table()?;
                table.raw_set("ok", lua.create_string(self.line()?)?)?;
                Value::Table(table)
            }
            b'-' => {
                let mut text = b"-".to_vec();
                text.extend_from_slice(self.line()?);
                let table = error_table(lua, &text)?;
                table.raw_set("ignore_error_stats_update", true)?;
                Value::Table(table)
            }
            b'*' | b'~' | b'%' | b'|' => {
                let n = self.int()?;
                if n < 0 {
                    return Ok(Value::Boolean(false));
                }
                match kind {
                    b'*' => {
                        let table = lua.create_table()?;
                        for i in 1..=n {
                            let v = self.value(depth + 1)?;
                            table.raw_set(i, v)?;
                        }
                        Value::Table(table)
                    }
                    b'~' => {
                        let set = lua.create_table()?;
                        for _ in 0..n {
                            let v = self.value(depth + 1)?;
                            if v != Value::Nil {
                                set.raw_set(v, true)?;
                            }
                        }
                        let table = lua.create_table()?;
                        table.raw_set("set", set)?;
                        Value::Table(table)
                    }
                    b'%' => {
                        let map = lua.create_table()?;
                        for _ in 0..n {
                            let k = self.value(depth + 1)?;
                            let v = self.value(depth + 1)?;
                            if k != Value::Nil {
                                map.raw_set(k, v)?;
                            }
                        }
                        let table = lua.create_table()?;
                        table.raw_set("map", map)?;
                        Value::Table(table)
                    }
                    _ => {
                        // Attributes are not shown to scripts: skip them, keep the value.
                        for _ in 0..2 * n {
                            self.value(depth + 1)?;
                        }
                        self.value(depth + 1)?
                    }
                }
            }
            b'_' => {
                self.line()?;
                Value::Nil
            }
            b'#' => Value::Boolean(self.line()? == b"t"),
            b',' => {
                let line = self.line()?;
                let d = parse_double(line).ok_or_else(Self::malformed)?;
                let table = lua.create_table()?;
                table.raw_set("double", d)?;
                Value::Table(table)
            }
            b'(' => {
                let table = lua.create_table()?;
                table.raw_set("big_number", lua.create_string(self.line()?)?)?;
                Value::Table(table)
            }
            b'=' => {
                let len = self.int()?;
                let blob = self.blob(len)?;
                let (format, text) = if blob.len() >= 4 {
                    (&blob[..3], &blob[4..])
                } else {
                    (&b"txt"[..], blob)
                };
                let inner = lua.create_table()?;
                inner.raw_set("string", lua.create_string(text)?)?;
                inner.raw_set("format", lua.create_string(format)?)?;
                let table = lua.create_table()?;
                table.raw_set("verbatim_string", inner)?;
                Value::Table(table)
            }
            _ => return Err(Self::malformed()),
        })
    }
}

/// The value of an integer line (a count, a length or an integer reply), read strictly as
/// Redis's `string2ll` reads it (the engine's parser).
fn parse_int(line: &[u8]) -> Option<i64> {
    echomq_engine::command::parse_i64(line).ok()
}

fn parse_double(text: &[u8]) -> Option<f64> {
    match text {
        b"inf" => Some(f64::INFINITY),
        b"-inf" => Some(f64::NEG_INFINITY),
        b"nan" => Some(f64::NAN),
        _ => std::str::from_utf8(text).ok()?.parse().ok(),
    }
}

/// How a script's reply is encoded: the caller's protocol, and the script's own (a boolean
/// is 1 or null when the script speaks RESP2, whatever the caller speaks).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Encoding {
    pub client_resp3: bool,
    pub script_resp3: bool,
}

/// Appends `value` to `out` as Redis's `luaReplyToRedisReply` writes it.
pub(crate) fn lua_to_resp(value: &Value, enc: Encoding, out: &mut BytesMut) {
    write_value(value, enc, out, 0);
}

fn null(enc: Encoding, out: &mut BytesMut) {
    out.put_slice(if enc.client_resp3 {
        b"_\r\n"
    } else {
        b"$-1\r\n"
    });
}

fn header(out: &mut BytesMut, kind: u8, n: usize) {
    out.put_u8(kind);
    out.put_slice(n.to_string().as_bytes());
    out.put_slice(b"\r\n");
}

fn bulk(out: &mut BytesMut, bytes: &[u8]) {
    header(out, b'$', bytes.len());
    out.put_slice(bytes);
    out.put_slice(b"\r\n");
}

/// A line's text with CR and LF made spaces, as Redis writes statuses and errors.
fn line_text(out: &mut BytesMut, bytes: &[u8]) {
    for &b in bytes {
        out.put_u8(if b == b'\r' || b == b'\n' { b' ' } else { b });
    }
    out.put_slice(b"\r\n");
}

/// A Lua number as `(long long)` truncates it on x86-64, where a NaN or a number out of range
/// becomes the "integer indefinite", `i64::MIN` (Rust's `as` would saturate).
pub(crate) fn truncate(n: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if !(-LIMIT..LIMIT).contains(&n) {
        return i64::MIN;
    }
    n as i64
}

fn write_value(value: &Value, enc: Encoding, out: &mut BytesMut, depth: usize) {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || {
        write_nested(value, enc, out, depth);
    });
}

fn write_nested(value: &Value, enc: Encoding, out: &mut BytesMut, depth: usize) {
    match value {
        Value::String(s) => bulk(out, &s.as_bytes()),
        Value::Boolean(b) => {
            if !enc.script_resp3 {
                if *b {
                    out.put_slice(b":1\r\n");
                } else {
                    null(enc, out);
                }
            } else if enc.client_resp3 {
                out.put_slice(if *b { b"#t\r\n" } else { b"#f\r\n" });
            } else {
                out.put_slice(if *b { b":1\r\n" } else { b":0\r\n" });
            }
        }
        Value::Integer(n) => {
            out.put_u8(b':');
            out.put_slice(n.to_string().as_bytes());
            out.put_slice(b"\r\n");
        }
        Value::Number(n) => {
            out.put_u8(b':');
            out.put_slice(truncate(*n).to_string().as_bytes());
            out.put_slice(b"\r\n");
        }
        Value::Table(_) if depth >= MAX_DEPTH => {
            out.put_slice(b"-ERR reached lua stack limit\r\n");
        }
        Value::Table(t) => write_table(t, enc, out, depth),
        _ => null(enc, out),
    }
}

fn string_field(t: &Table, name: &str) -> Option<mlua::String> {
    match t.raw_get::<Value>(name).ok()? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

fn write_table(t: &Table, enc: Encoding, out: &mut BytesMut, depth: usize) {
    if string_field(t, "err").is_some() {
        let msg = match t.get::<Value>("err") {
            Ok(Value::String(s)) => s.as_bytes().to_vec(),
            Ok(Value::Number(n)) => super::sandbox::lua_number_text(n).into_bytes(),
            Ok(Value::Integer(n)) => super::sandbox::lua_number_text(n as f64).into_bytes(),
            _ => b"ERR unknown error".to_vec(),
        };
        out.put_u8(b'-');
        line_text(out, &msg);
        return;
    }
    if let Some(ok) = string_field(t, "ok") {
        out.put_u8(b'+');
        line_text(out, &ok.as_bytes());
        return;
    }
    if let Ok(Value::Number(d)) = t.raw_get::<Value>("double") {
        write_double(d, enc, out);
        return;
    }
    if let Ok(Value::Integer(d)) = t.raw_get::<Value>("double") {
        write_double(d as f64, enc, out);
        return;
    }
    if let Some(big) = string_field(t, "big_number") {
        let mut text = big.as_bytes().to_vec();
        for b in &mut text {
            if *b == b'\r' || *b == b'\n' {
                *b = b' ';
            }
        }
        if enc.client_resp3 {
            out.put_u8(b'(');
            out.put_slice(&text);
            out.put_slice(b"\r\n");
        } else {
            bulk(out, &text);
        }
        return;
    }
    if let Ok(Value::Table(verbatim)) = t.raw_get::<Value>("verbatim_string")
        && let (Some(format), Some(text)) = (
            string_field(&verbatim, "format"),
            string_field(&verbatim, "string"),
        )
    {
        let text = text.as_bytes();
        if enc.client_resp3 {
            let format = format.as_bytes();
            let mut fmt = [b' '; 3];
            for (slot, b) in fmt.iter_mut().zip(format.iter()) {
                *slot = *b;
            }
            header(out, b'=', text.len() + 4);
            out.put_slice(&fmt);
            out.put_u8(b':');
            out.put_slice(&text);
            out.put_slice(b"\r\n");
        } else {
            bulk(out, &text);
        }
        return;
    }
    if let Ok(Value::Table(map)) = t.raw_get::<Value>("map") {
        let pairs: Vec<(Value, Value)> = map.pairs::<Value, Value>().flatten().collect();
        if enc.client_resp3 {
            header(out, b'%', pairs.len());
        } else {
            header(out, b'*', 2 * pairs.len());
        }
        for (k, v) in &pairs {
            write_value(k, enc, out, depth + 1);
            write_value(v, enc, out, depth + 1);
        }
        return;
    }
    if let Ok(Value::Table(set)) = t.raw_get::<Value>("set") {
        let members: Vec<Value> = set
            .pairs::<Value, Value>()
            .flatten()
            .map(|(k, _)| k)
            .collect();
        header(
            out,
            if enc.client_resp3 { b'~' } else { b'*' },
            members.len(),
        );
        for k in &members {
            write_value(k, enc, out, depth + 1);
        }
        return;
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(v),
        }
    }
    header(out, b'*', items.len());
    for v in &items {
        write_value(v, enc, out, depth + 1);
    }
}

fn write_double(d: f64, enc: Encoding, out: &mut BytesMut) {
    let text = d2string(d);
    if enc.client_resp3 {
        out.put_u8(b',');
        out.put_slice(text.as_bytes());
        out.put_slice(b"\r\n");
    } else {
        bulk(out, text.as_bytes());
    }
}

/// Redis's `double2ll`: the integer a double holds exactly, within half the `long long` range.
fn double_as_int(d: f64) -> Option<i64> {
    let limit = (i64::MAX / 2) as f64;
    if !(-limit..=limit).contains(&d) {
        return None;
    }
    let n = d as i64;
    (n as f64 == d).then_some(n)
}

/// Redis's `d2string`: `nan`, `inf`, `-0`, an integer when exact, the shortest digits
/// otherwise.
pub(crate) fn d2string(d: f64) -> String {
    if d.is_nan() {
        "nan".into()
    } else if d.is_infinite() {
        if d < 0.0 { "-inf" } else { "inf" }.into()
    } else if d == 0.0 {
        if d.is_sign_negative() { "-0" } else { "0" }.into()
    } else {
        format_number(d)
    }
}

/// A Lua number as a command argument (`luaArgsToRedisArgv`): an integer when exact,
/// otherwise `fpconv_dtoa`'s shortest form.
pub(crate) fn format_number(d: f64) -> String {
    match double_as_int(d) {
        Some(n) => n.to_string(),
        None => fpconv_dtoa(d),
    }
}

/// The shortest digits that read back as `d`, laid out as Redis's `fpconv_dtoa` lays them.
pub(crate) fn fpconv_dtoa(d: f64) -> String {
    if d.is_nan() {
        return "nan".into();
    }
    if d.is_infinite() {
        return if d < 0.0 { "-inf" } else { "inf" }.into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let neg = d < 0.0;
    // `{:e}` is the shortest round-trip form: `d.ddde±x`.
    let sci = format!("{:e}", d.abs());
    let Some((mantissa, exp)) = sci.split_once('e') else {
        return sci;
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp10: i32 = exp.parse().unwrap_or(0);
    let ndigits = digits.len() as i32;
    let k = exp10 - (ndigits - 1);
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    let abs_exp = (k + ndigits - 1).abs();
    if k >= 0 && abs_exp < ndigits + 7 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', k as usize));
        return out;
    }
    if k < 0 && (k > -7 || abs_exp < 4) {
        let offset = ndigits + k;
        if offset <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-offset) as usize));
            out.push_str(&digits);
        } else {
            let (int, frac) = digits.split_at(offset as usize);
            out.push_str(int);
            out.push('.');
            out.push_str(frac);
        }
        return out;
    }
    let keep = ndigits.min(18 - i32::from(neg)) as usize;
    let digits = &digits[..keep];
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    out.push('e');
    out.push(if exp10 < 0 { '-' } else { '+' });
    out.push_str(&exp10.abs().to_string());
    out
}

/// Appends a `redis.call` argument to `out`: a string, or a number formatted as Redis
/// formats it; `None` (and nothing appended) for any other type.
pub(crate) fn arg_bytes(value: &Value, out: &mut Vec<u8>) -> Option<()> {
    match value {
        Value::String(s) => out.extend_from_slice(&s.as_bytes()),
        Value::Number(n) => out.extend_from_slice(format_number(*n).as_bytes()),
        Value::Integer(n) => out.extend_from_slice(format_number(*n as f64).as_bytes()),
        _ => return None,
    }
    Some(())
}

/// [`arg_bytes`] into a buffer of its own.
pub(crate) fn arg_vec(value: &Value) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    arg_bytes(value, &mut out)?;
    Some(out)
}

#[cfg(test)]
mod tests {

    #[test]
    fn integer_lines_parse_as_redis_writes_them_and_nothing_else() {
        for (line, value) in [
            (&b"0"[..], Some(0)),
            (b"42", Some(42)),
            (b"-1", Some(-1)),
            (b"9223372036854775807", Some(i64::MAX)),
            (b"-9223372036854775808", Some(i64::MIN)),
            (b"9223372036854775808", None),
            (b"-9223372036854775809", None),
            (b"", None),
            (b"-", None),
            (b"1a", None),
            (b" 1", None),
            (b"--1", None),
        ] {
            assert_eq!(parse_int(line), value, "{}", String::from_utf8_lossy(line));
        }
    }
    use super::*;

    fn resp(value: Value, client_resp3: bool, script_resp3: bool) -> String {
        let mut out = BytesMut::new();
        let enc = Encoding {
            client_resp3,
            script_resp3,
        };
        lua_to_resp(&value, enc, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    fn eval(lua: &Lua, code: &str) -> Value {
        lua.load(code).eval().unwrap()
    }

    #[test]
    fn numbers_truncate_and_booleans_follow_the_script_s_protocol() {
        let lua = Lua::new();
        assert_eq!(resp(eval(&lua, "return 3.99"), false, false), ":3\r\n");
        assert_eq!(resp(eval(&lua, "return -3.99"), false, false), ":-3\r\n");
        assert_eq!(
            resp(eval(&lua, "return 1e300"), false, false),
            ":-9223372036854775808\r\n"
        );
        assert_eq!(resp(eval(&lua, "return true"), false, false), ":1\r\n");
        assert_eq!(resp(eval(&lua, "return false"), false, false), "$-1\r\n");
        assert_eq!(resp(eval(&lua, "return false"), true, false), "_\r\n");
        assert_eq!(resp(eval(&lua, "return false"), true, true), "#f\r\n");
        assert_eq!(resp(eval(&lua, "return false"), false, true), ":0\r\n");
        assert_eq!(resp(eval(&lua, "return nil"), false, false), "$-1\r\n");
    }

    #[test]
    fn tables_become_arrays_up_to_the_first_nil_or_their_field_s_shape() {
        let lua = Lua::new();
        assert_eq!(
            resp(eval(&lua, "return {1, 'a', nil, 2}"), false, false),
            "*2\r\n:1\r\n$1\r\na\r\n"
        );
        assert_eq!(
            resp(eval(&lua, "return {err='My\\r\\nError'}"), false, false),
            "-My  Error\r\n"
        );
        assert_eq!(
            resp(eval(&lua, "return {ok='fine'}"), false, false),
            "+fine\r\n"
        );
        assert_eq!(
            resp(eval(&lua, "return {double=3.5}"), false, false),
            "$3\r\n3.5\r\n"
        );
        assert_eq!(resp(eval(&lua, "return {double=3}"), true, false), ",3\r\n");
        assert_eq!(
            resp(eval(&lua, "return {big_number='123'}"), true, false),
            "(123\r\n"
        );
        assert_eq!(
            resp(
                eval(&lua, "return {verbatim_string={format='txt', string='hi'}}"),
                true,
                false
            ),
            "=6\r\ntxt:hi\r\n"
        );
        assert_eq!(
            resp(eval(&lua, "return {map={a=1}}"), false, false),
            "*2\r\n$1\r\na\r\n:1\r\n"
        );
        assert_eq!(
            resp(eval(&lua, "return {set={a=true}}"), true, false),
            "~1\r\n$1\r\na\r\n"
        );
        assert_eq!(
            resp(eval(&lua, "return {{err='x'}, {ok='y'}}"), false, false),
            "*2\r\n-x\r\n+y\r\n"
        );
        let selfish = eval(&lua, "local t = {}; t[1] = t; return t");
        assert!(resp(selfish, false, false).contains("-ERR reached lua stack limit"));
    }

    #[test]
    fn replies_reach_lua_as_redis_hands_them_over() {
        let lua = Lua::new();
        let check = |resp: &[u8], expect: &str| {
            let v = reply_to_lua(&lua, resp).unwrap();
            lua.globals().set("v", v).unwrap();
            let ok: bool = lua.load(expect).eval().unwrap();
            assert!(ok, "{}: {expect}", String::from_utf8_lossy(resp));
        };
        check(b":5\r\n", "return v == 5");
        check(b"$-1\r\n", "return v == false");
        check(b"*-1\r\n", "return v == false");
        check(b"_\r\n", "return v == nil");
        check(b"+OK\r\n", "return v.ok == 'OK'");
        check(
            b"-WRONGTYPE Operation\r\n",
            "return v.err == 'WRONGTYPE Operation'",
        );
        check(b"-oops\r\n", "return v.err == 'ERR oops'");
        check(
            b"*2\r\n$1\r\na\r\n:1\r\n",
            "return v[1] == 'a' and v[2] == 1",
        );
        check(b"%1\r\n$1\r\na\r\n:1\r\n", "return v.map.a == 1");
        check(b"~1\r\n$1\r\na\r\n", "return v.set.a == true");
        check(b",1.5\r\n", "return v.double == 1.5");
        check(b"#t\r\n", "return v == true");
        check(b"(12\r\n", "return v.big_number == '12'");
        check(
            b"=7\r\ntxt:abc\r\n",
            "return v.verbatim_string.format == 'txt' and v.verbatim_string.string == 'abc'",
        );
    }

    #[test]
    fn numbers_are_formatted_as_redis_formats_them() {
        assert_eq!(format_number(3.0), "3");
        assert_eq!(format_number(-0.5), "-0.5");
        assert_eq!(format_number(0.1), "0.1");
        assert_eq!(format_number(1e300), "1e+300");
        assert_eq!(format_number(1.5e-7), "1.5e-7");
        assert_eq!(format_number(123456.789), "123456.789");
        assert_eq!(format_number(1e19), "1e+19");
        assert_eq!(format_number(1e15 + 0.5), "1000000000000000.5");
        assert_eq!(d2string(f64::INFINITY), "inf");
        assert_eq!(d2string(-0.0), "-0");
    }

    #[test]
    fn error_texts_keep_their_code_or_get_err() {
        assert_eq!(error_text(b"-WRONGTYPE bad\r\n"), b"WRONGTYPE bad");
        assert_eq!(error_text(b"-NOCODE"), b"ERR NOCODE");
        assert_eq!(error_text(b"plain text"), b"ERR plain text");
    }
}
