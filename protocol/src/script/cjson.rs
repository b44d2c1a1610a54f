//! The `cjson` library scripts see (Lua CJSON 2.1 as Redis bundles it, default settings),
//! in Rust: `encode`, `decode` and `null`.
//!
//! Encoding follows Lua CJSON: numbers with 14 significant digits (`%.14g`), `/` escaped as
//! `\/`, a table is an array when all its keys are positive integers (missing ones become
//! `null`; an excessively sparse one is refused), an object otherwise, the empty table `{}`,
//! and nesting deeper than 1000 refused. Decoding is CJSON's scanner and grammar with its
//! error texts, and sets an object's keys in the document's order (so a decoded object
//! iterates as Redis's does); `null` becomes `cjson.null`, the NULL light userdata.

use mlua::{LightUserData, Lua, MultiValue, Table, Value};

use super::sandbox::{located, lua_number_text};

/// Lua CJSON's `encode_max_depth` and `decode_max_depth`.
const MAX_DEPTH: usize = 1000;

fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

fn exception(lua: &Lua, kind: &str, reason: &str) -> mlua::Error {
    located(lua, &format!("Cannot serialise {kind}: {reason}"))
}

fn escape(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    for &b in bytes {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0..=0x1f | 0x7f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

fn number(lua: &Lua, out: &mut Vec<u8>, n: f64) -> mlua::Result<()> {
    if !n.is_finite() {
        return Err(exception(lua, "number", "must not be NaN or Inf"));
    }
    out.extend_from_slice(lua_number_text(n).as_bytes());
    Ok(())
}

/// The array length of `t` as Lua CJSON's `lua_array_length` decides it: `None` for an
/// object.
fn array_length(lua: &Lua, t: &Table) -> mlua::Result<Option<usize>> {
    let (mut max, mut items) = (0usize, 0usize);
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        let k = match k {
            Value::Number(n) => n,
            Value::Integer(n) => n as f64,
            _ => return Ok(None),
        };
        if k < 1.0 || k.fract() != 0.0 {
            return Ok(None);
        }
        max = max.max(k as usize);
        items += 1;
    }
    if max > items * 2 && max > 10 {
        return Err(exception(lua, "table", "excessively sparse array"));
    }
    Ok(Some(max))
}

/// Stack kept free before recursing into a nested value, and what is added when less is left:
/// nesting 1000 deep must not overflow a 2 MiB worker stack in any build.
const RED_ZONE: usize = 64 * 1024;
const STACK_GROWTH: usize = 1024 * 1024;

fn encode_value(lua: &Lua, out: &mut Vec<u8>, value: &Value, depth: usize) -> mlua::Result<()> {
    stacker::maybe_grow(RED_ZONE, STACK_GROWTH, || {
        encode_nested(lua, out, value, depth)
    })
}

fn encode_nested(lua: &Lua, out: &mut Vec<u8>, value: &Value, depth: usize) -> mlua::Result<()> {
    match value {
        Value::String(s) => escape(out, &s.as_bytes()),
        Value::Number(n) => number(lua, out, *n)?,
        // mlua hands Lua 5.1's integral numbers over as integers: they are numbers still.
        Value::Integer(n) => number(lua, out, *n as f64)?,
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Nil => out.extend_from_slice(b"null"),
        Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Value::Table(t) => {
            let depth = depth + 1;
            if depth > MAX_DEPTH {
                return Err(located(
                    lua,
                    &format!("Cannot serialise, excessive nesting ({depth})"),
                ));
            }
            match array_length(lua, t)? {
                Some(len) if len > 0 => {
                    out.push(b'[');
                    for i in 1..=len {
                        if i > 1 {
                            out.push(b',');
                        }
                        encode_value(lua, out, &t.raw_get::<Value>(i)?, depth)?;
                    }
                    out.push(b']');
                }
                _ => {
                    out.push(b'{');
                    let mut first = true;
                    for pair in t.pairs::<Value, Value>() {
                        let (k, v) = pair?;
                        if !first {
                            out.push(b',');
                        }
                        first = false;
                        match &k {
                            Value::String(s) => escape(out, &s.as_bytes()),
                            Value::Number(n) => {
                                out.push(b'"');
                                number(lua, out, *n)?;
                                out.push(b'"');
                            }
                            Value::Integer(n) => {
                                out.push(b'"');
                                number(lua, out, *n as f64)?;
                                out.push(b'"');
                            }
                            other => {
                                return Err(exception(
                                    lua,
                                    other.type_name(),
                                    "table key must be a number or string",
                                ));
                            }
                        }
                        out.push(b':');
                        encode_value(lua, out, &v, depth)?;
                    }
                    out.push(b'}');
                }
            }
        }
        other => return Err(exception(lua, other.type_name(), "type not supported")),
    }
    Ok(())
}

/// A token of Lua CJSON's scanner.
#[derive(Debug)]
enum Token {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Str(Vec<u8>),
    Number(f64),
    Bool(bool),
    Null,
    Colon,
    Comma,
    End,
    /// A scanning error: its description (`invalid token`, `invalid number`, ...).
    Error(&'static str),
}

impl Token {
    /// The name Lua CJSON's errors give the token.
    fn name(&self) -> &'static str {
        match self {
            Token::ObjBegin => "T_OBJ_BEGIN",
            Token::ObjEnd => "T_OBJ_END",
            Token::ArrBegin => "T_ARR_BEGIN",
            Token::ArrEnd => "T_ARR_END",
            Token::Str(_) => "T_STRING",
            Token::Number(_) => "T_NUMBER",
            Token::Bool(_) => "T_BOOLEAN",
            Token::Null => "T_NULL",
            Token::Colon => "T_COLON",
            Token::Comma => "T_COMMA",
            Token::End => "T_END",
            Token::Error(what) => what,
        }
    }
}

/// Lua CJSON's decoder (`json_decode`): its scanner, its grammar, its error texts. The input
/// ends at its first NUL byte, as a C string does.
struct Decoder<'a> {
    lua: &'a Lua,
    data: &'a [u8],
    at: usize,
    depth: usize,
}

impl Decoder<'_> {
    fn byte(&self, at: usize) -> u8 {
        self.data.get(at).copied().unwrap_or(0)
    }

    /// The next token and where it starts.
    fn next(&mut self) -> (Token, usize) {
        while matches!(self.byte(self.at), b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
        let start = self.at;
        let single = match self.byte(self.at) {
            b'{' => Some(Token::ObjBegin),
            b'}' => Some(Token::ObjEnd),
            b'[' => Some(Token::ArrBegin),
            b']' => Some(Token::ArrEnd),
            b',' => Some(Token::Comma),
            b':' => Some(Token::Colon),
            0 => return (Token::End, start),
            _ => None,
        };
        if let Some(token) = single {
            self.at += 1;
            return (token, start);
        }
        let rest = &self.data[self.at..];
        let token = match rest[0] {
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(),
            _ if rest.starts_with(b"true") => {
                self.at += 4;
                Token::Bool(true)
            }
            _ if rest.starts_with(b"false") => {
                self.at += 5;
                Token::Bool(false)
            }
            _ if rest.starts_with(b"null") => {
                self.at += 4;
                Token::Null
            }
            b'i' | b'I' | b'n' | b'N' | b'+' if invalid_number(rest) => self.number(),
            _ => Token::Error("invalid token"),
        };
        // An error token's position is where the scanner stopped.
        match token {
            Token::Error(_) => (token, self.at),
            token => (token, start),
        }
    }

    fn number(&mut self) -> Token {
        match strtod(&self.data[self.at..]) {
            Some((n, used)) => {
                self.at += used;
                Token::Number(n)
            }
            None => Token::Error("invalid number"),
        }
    }

    fn string(&mut self) -> Token {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            match self.byte(self.at) {
                b'"' => break,
                0 => return Token::Error("unexpected end of string"),
                b'\\' => {
                    let translated = match self.byte(self.at + 1) {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b't' => b'\t',
                        b'n' => b'\n',
                        b'f' => 0x0c,
                        b'r' => b'\r',
                        b'u' => match self.unicode_escape() {
                            Some((c, len)) => {
                                let mut buf = [0; 4];
                                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                                self.at += len;
                                continue;
                            }
                            None => return Token::Error("invalid unicode escape code"),
                        },
                        _ => return Token::Error("invalid escape code"),
                    };
                    out.push(translated);
                    self.at += 2;
                }
                b => {
                    out.push(b);
                    self.at += 1;
                }
            }
        }
        self.at += 1;
        Token::Str(out)
    }

    /// A `\uXXXX` escape (with its low surrogate when it is a high one) at the cursor: the
    /// character and the escape's length.
    fn unicode_escape(&self) -> Option<(char, usize)> {
        let hex4 = |at: usize| -> Option<u32> {
            let digits = self.data.get(at..at + 4)?;
            u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
        };
        let code = hex4(self.at + 2)?;
        if (code & 0xFC00) == 0xDC00 {
            return None;
        }
        if (code & 0xFC00) == 0xD800 {
            if self.byte(self.at + 6) != b'\\' || self.byte(self.at + 7) != b'u' {
                return None;
            }
            let low = hex4(self.at + 8)?;
            if (low & 0xFC00) != 0xDC00 {
                return None;
            }
            let code = (((code & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            return Some((char::from_u32(code)?, 12));
        }
        Some((char::from_u32(code)?, 6))
    }

    fn parse_error(&self, expected: &str, token: &Token, at: usize) -> mlua::Error {
        located(
            self.lua,
            &format!(
                "Expected {expected} but found {} at character {}",
                token.name(),
                at + 1
            ),
        )
    }

    fn descend(&mut self) -> mlua::Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(located(
                self.lua,
                &format!(
                    "Found too many nested data structures ({}) at character {}",
                    self.depth, self.at
                ),
            ));
        }
        Ok(())
    }

    fn value(&mut self, token: Token, at: usize) -> mlua::Result<Value> {
        stacker::maybe_grow(RED_ZONE, STACK_GROWTH, || self.nested(token, at))
    }

    fn nested(&mut self, token: Token, at: usize) -> mlua::Result<Value> {
        Ok(match token {
            Token::Str(s) => Value::String(self.lua.create_string(s)?),
            Token::Number(n) => Value::Number(n),
            Token::Bool(b) => Value::Boolean(b),
            Token::Null => null(),
            Token::ObjBegin => {
                self.descend()?;
                let t = self.lua.create_table()?;
                let (mut token, mut at) = self.next();
                if matches!(token, Token::ObjEnd) {
                    self.depth -= 1;
                    return Ok(Value::Table(t));
                }
                loop {
                    let Token::Str(key) = token else {
                        return Err(self.parse_error("object key string", &token, at));
                    };
                    let (colon, colon_at) = self.next();
                    if !matches!(colon, Token::Colon) {
                        return Err(self.parse_error("colon", &colon, colon_at));
                    }
                    let (v, v_at) = self.next();
                    let v = self.value(v, v_at)?;
                    t.raw_set(self.lua.create_string(key)?, v)?;
                    let (after, after_at) = self.next();
                    match after {
                        Token::ObjEnd => break,
                        Token::Comma => (token, at) = self.next(),
                        other => {
                            return Err(self.parse_error("comma or object end", &other, after_at));
                        }
                    }
                }
                self.depth -= 1;
                Value::Table(t)
            }
            Token::ArrBegin => {
                self.descend()?;
                let t = self.lua.create_table()?;
                let (mut token, mut at) = self.next();
                if matches!(token, Token::ArrEnd) {
                    self.depth -= 1;
                    return Ok(Value::Table(t));
                }
                for i in 1.. {
                    let v = self.value(token, at)?;
                    t.raw_set(i, v)?;
                    let (after, after_at) = self.next();
                    match after {
                        Token::ArrEnd => break,
                        Token::Comma => (token, at) = self.next(),
                        other => {
                            return Err(self.parse_error("comma or array end", &other, after_at));
                        }
                    }
                }
                self.depth -= 1;
                Value::Table(t)
            }
            other => return Err(self.parse_error("value", &other, at)),
        })
    }
}

/// Lua CJSON's `json_is_invalid_number`: a number strict JSON refuses (a `+`, hex, a leading
/// zero, infinity or NaN), which CJSON's default settings still decode.
fn invalid_number(text: &[u8]) -> bool {
    let mut p = text;
    if p.first() == Some(&b'+') {
        return true;
    }
    if p.first() == Some(&b'-') {
        p = &p[1..];
    }
    match p.first() {
        Some(b'0') => matches!(p.get(1), Some(b'x' | b'X' | b'0'..=b'9')),
        Some(b) if *b <= b'9' => false,
        _ => {
            let lower: Vec<u8> = p.iter().take(3).map(u8::to_ascii_lowercase).collect();
            lower == b"inf" || lower == b"nan"
        }
    }
}

/// C's `strtod` on the front of `text`: the number and the bytes it used, `None` when no
/// number starts there.
fn strtod(text: &[u8]) -> Option<(f64, usize)> {
    let mut at = 0;
    let negative = match text.first() {
        Some(b'-') => {
            at += 1;
            true
        }
        Some(b'+') => {
            at += 1;
            false
        }
        _ => false,
    };
    let sign = if negative { -1.0 } else { 1.0 };
    let rest = &text[at..];
    let lower: Vec<u8> = rest.iter().take(8).map(u8::to_ascii_lowercase).collect();
    if lower.starts_with(b"infinity") {
        return Some((sign * f64::INFINITY, at + 8));
    }
    if lower.starts_with(b"inf") {
        return Some((sign * f64::INFINITY, at + 3));
    }
    if lower.starts_with(b"nan") {
        return Some((f64::NAN, at + 3));
    }
    if (lower.starts_with(b"0x")) && rest.get(2).is_some_and(u8::is_ascii_hexdigit) {
        let digits = rest[2..]
            .iter()
            .take_while(|b| b.is_ascii_hexdigit())
            .count();
        let hex = std::str::from_utf8(&rest[2..2 + digits]).ok()?;
        let n = u128::from_str_radix(hex, 16).map_or(f64::INFINITY, |n| n as f64);
        return Some((sign * n, at + 2 + digits));
    }
    let digits = |from: usize| {
        rest[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let int = digits(0);
    let mut end = int;
    let mut frac = 0;
    if rest.get(end) == Some(&b'.') {
        frac = digits(end + 1);
        if int > 0 || frac > 0 {
            end += 1 + frac;
        }
    }
    if int == 0 && frac == 0 {
        return None;
    }
    if matches!(rest.get(end), Some(b'e' | b'E')) {
        let mut e = end + 1;
        if matches!(rest.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        let exp = digits(e);
        if exp > 0 {
            end = e + exp;
        }
    }
    let text = std::str::from_utf8(&rest[..end]).ok()?;
    let n: f64 = text.parse().ok()?;
    Some((sign * n, at + end))
}

/// `cjson.decode(text)`.
fn decode(lua: &Lua, text: &[u8]) -> mlua::Result<Value> {
    if text.len() >= 2 && (text[0] == 0 || text[1] == 0) {
        return Err(located(
            lua,
            "JSON parser does not support UTF-16 or UTF-32",
        ));
    }
    let mut decoder = Decoder {
        lua,
        data: text,
        at: 0,
        depth: 0,
    };
    let (token, at) = decoder.next();
    let value = decoder.value(token, at)?;
    let (end, at) = decoder.next();
    if !matches!(end, Token::End) {
        return Err(decoder.parse_error("the end", &end, at));
    }
    Ok(value)
}

/// The `cjson` table.
pub(crate) fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "encode",
        lua.create_function(|lua, args: mlua::MultiValue| {
            if args.len() != 1 {
                return Err(located(
                    lua,
                    "bad argument #1 to 'encode' (expected 1 argument)",
                ));
            }
            let mut out = Vec::new();
            encode_value(lua, &mut out, &args[0], 0)?;
            lua.create_string(out)
        })?,
    )?;
    t.set(
        "decode",
        lua.create_function(|lua, args: mlua::MultiValue| {
            let text = match args.front() {
                Some(Value::String(s)) if args.len() == 1 => s.as_bytes().to_vec(),
                Some(Value::Number(n)) if args.len() == 1 => lua_number_text(*n).into_bytes(),
                Some(Value::Integer(n)) if args.len() == 1 => {
                    lua_number_text(*n as f64).into_bytes()
                }
                _ => {
                    return Err(located(
                        lua,
                        "bad argument #1 to 'decode' (expected 1 argument)",
                    ));
                }
            };
            decode(lua, &text)
        })?,
    )?;
    t.set("null", null())?;
    // The settings, read back at Redis's defaults. Changing them is not supported: a call
    // with arguments answers the defaults too.
    let setting = |name: &str, values: Vec<Value>| -> mlua::Result<()> {
        let values = MultiValue::from_iter(values);
        t.set(
            name,
            lua.create_function(move |_, _: MultiValue| Ok(values.clone()))?,
        )
    };
    setting(
        "encode_sparse_array",
        vec![
            Value::Boolean(false),
            Value::Number(2.0),
            Value::Number(10.0),
        ],
    )?;
    setting("encode_max_depth", vec![Value::Number(MAX_DEPTH as f64)])?;
    setting("decode_max_depth", vec![Value::Number(MAX_DEPTH as f64)])?;
    setting("encode_number_precision", vec![Value::Number(14.0)])?;
    setting("encode_keep_buffer", vec![Value::Boolean(true)])?;
    setting("encode_invalid_numbers", vec![Value::Boolean(false)])?;
    setting("decode_invalid_numbers", vec![Value::Boolean(true)])?;
    setting("decode_array_with_array_mt", vec![Value::Boolean(false)])?;
    let this = t.clone();
    t.set(
        "new",
        lua.create_function(move |_, _: MultiValue| Ok(this.clone()))?,
    )?;
    t.set("_NAME", "cjson")?;
    t.set("_VERSION", "2.1.0")?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_and_decode_as_lua_cjson() {
        let lua = Lua::new();
        lua.globals().set("cjson", library(&lua).unwrap()).unwrap();
        let check = |code: &str, expect: &str| {
            let got: String = lua.load(code).eval().unwrap();
            assert_eq!(got, expect, "{code}");
        };
        check("return cjson.encode({1, 2, 'a/b'})", r#"[1,2,"a\/b"]"#);
        check("return cjson.encode({})", "{}");
        check("return cjson.encode({a = 0.1})", r#"{"a":0.1}"#);
        check("return cjson.encode({[1] = 1, [3] = 3})", "[1,null,3]");
        check("return cjson.encode(1/3)", "0.33333333333333");
        check("return cjson.encode(cjson.null)", "null");
        check(
            "local t = cjson.decode('{\"b\":1,\"a\":[true,null]}') \
             return tostring(t.b) .. tostring(t.a[1]) .. tostring(t.a[2] == cjson.null)",
            "1truetrue",
        );
        let sparse: mlua::Result<String> = lua.load("return cjson.encode({[20] = 1})").eval();
        assert!(
            sparse
                .unwrap_err()
                .to_string()
                .contains("excessively sparse array")
        );
    }
}
