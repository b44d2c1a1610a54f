//! The `cjson` library scripts see (Lua CJSON 2.1 as Redis bundles it, default settings),
//! in Rust: `encode`, `decode` and `null`.
//!
//! Encoding follows Lua CJSON: numbers with 14 significant digits (`%.14g`), `/` escaped as
//! `\/`, a table is an array when all its keys are positive integers (missing ones become
//! `null`; an excessively sparse one is refused), an object otherwise, the empty table `{}`,
//! and nesting deeper than 1000 refused. Decoding keeps the document's key order (so a
//! decoded object iterates as Redis's does) and turns `null` into `cjson.null`, the NULL light
//! userdata.

use mlua::{LightUserData, Lua, Table, Value};

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

fn encode_value(lua: &Lua, out: &mut Vec<u8>, value: &Value, depth: usize) -> mlua::Result<()> {
    match value {
        Value::String(s) => escape(out, &s.as_bytes()),
        Value::Number(n) => number(lua, out, *n)?,
        Value::Integer(n) => out.extend_from_slice(n.to_string().as_bytes()),
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
                                out.extend_from_slice(format!("\"{n}\"").as_bytes());
                            }
                            _ => {
                                return Err(exception(
                                    lua,
                                    "table",
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

fn decode_value(lua: &Lua, json: &serde_json::Value) -> mlua::Result<Value> {
    Ok(match json {
        serde_json::Value::Null => null(),
        serde_json::Value::Bool(b) => Value::Boolean(*b),
        serde_json::Value::Number(n) => Value::Number(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::String(s) => Value::String(lua.create_string(s)?),
        serde_json::Value::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, decode_value(lua, item)?)?;
            }
            Value::Table(t)
        }
        serde_json::Value::Object(map) => {
            let t = lua.create_table_with_capacity(0, map.len())?;
            for (k, v) in map {
                t.raw_set(lua.create_string(k)?, decode_value(lua, v)?)?;
            }
            Value::Table(t)
        }
    })
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
                _ => {
                    return Err(located(
                        lua,
                        "bad argument #1 to 'decode' (expected 1 argument)",
                    ));
                }
            };
            let json: serde_json::Value = serde_json::from_slice(&text).map_err(|e| {
                located(
                    lua,
                    &format!(
                        "Expected value but found invalid token at character {}",
                        e.column()
                    ),
                )
            })?;
            decode_value(lua, &json)
        })?,
    )?;
    t.set("null", null())?;
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
