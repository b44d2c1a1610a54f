//! The `cmsgpack` library scripts see (lua-cmsgpack 0.4 as Redis bundles it), in Rust:
//! `pack`, `unpack`, `unpack_one`, `unpack_limit`.
//!
//! Packing follows lua-cmsgpack: a number that is an exact 64-bit integer takes the smallest
//! integer form, any other a float32 when that is exact, else a float64; strings are `str`
//! (fixstr, str8, str16, str32); a table whose keys are exactly `1..n` is an array (the empty
//! table too), any other a map in `next` order; tables nested deeper than 16 and values of
//! other types pack as nil. Unpacking reads the forms lua-cmsgpack reads (no `bin` or `ext`:
//! those are "Bad data format") with its error texts.

use mlua::{Lua, MultiValue, Table, Value};

use super::sandbox::{located, lua_number_text, to_number};

/// lua-cmsgpack's `LUACMSGPACK_MAX_NESTING`.
const MAX_NESTING: usize = 16;

fn int(out: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        if n <= 127 {
            out.push(n as u8);
        } else if n <= 0xff {
            out.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn number(out: &mut Vec<u8>, n: f64) {
    // `IS_INT64_EQUIVALENT`: finite and unchanged by x86's cast (2^63 is not: it casts to
    // i64::MIN).
    if n.is_finite() && super::convert::truncate(n) as f64 == n {
        int(out, n as i64);
    } else if f64::from(n as f32) == n || n.is_nan() {
        out.push(0xca);
        out.extend_from_slice(&(n as f32).to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn header(out: &mut Vec<u8>, n: usize, fix: u8, fix_max: usize, sixteen: u8, thirty_two: u8) {
    if n <= fix_max {
        out.push(fix | n as u8);
    } else if n <= 0xffff {
        out.push(sixteen);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(thirty_two);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

fn bytes(out: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    if n < 32 {
        out.push(0xa0 | n as u8);
    } else if n <= 0xff {
        out.extend_from_slice(&[0xd9, n as u8]);
    } else if n <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
    out.extend_from_slice(s);
}

/// lua-cmsgpack's `table_is_an_array`: every key a positive number holding an `int`, and as
/// many keys as the largest.
fn is_array(t: &Table) -> mlua::Result<bool> {
    let (mut count, mut max) = (0i64, 0i64);
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        let n = match k {
            Value::Number(n) => n,
            Value::Integer(n) => n as f64,
            _ => return Ok(false),
        };
        if n <= 0.0 || (n as i32) as f64 != n {
            return Ok(false);
        }
        max = max.max(n as i64);
        count += 1;
    }
    Ok(max == count)
}

fn pack_value(out: &mut Vec<u8>, value: &Value, level: usize) -> mlua::Result<()> {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || pack_nested(out, value, level))
}

fn pack_nested(out: &mut Vec<u8>, value: &Value, level: usize) -> mlua::Result<()> {
    match value {
        Value::String(s) => bytes(out, &s.as_bytes()),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Number(n) => number(out, *n),
        Value::Integer(n) => number(out, *n as f64),
        Value::Table(t) if level < MAX_NESTING => {
            if is_array(t)? {
                let len = t.raw_len();
                header(out, len, 0x90, 15, 0xdc, 0xdd);
                for i in 1..=len {
                    pack_value(out, &t.get::<Value>(i)?, level + 1)?;
                }
            } else {
                let pairs: Vec<(Value, Value)> =
                    t.pairs::<Value, Value>().collect::<mlua::Result<_>>()?;
                header(out, pairs.len(), 0x80, 15, 0xde, 0xdf);
                for (k, v) in &pairs {
                    pack_value(out, k, level + 1)?;
                    pack_value(out, v, level + 1)?;
                }
            }
        }
        _ => out.push(0xc0),
    }
    Ok(())
}

/// Why unpacking stopped.
enum Failure {
    /// `Missing bytes in input.`
    Eof,
    /// `Bad data format in input.`
    BadFormat,
    Lua(mlua::Error),
}

impl From<mlua::Error> for Failure {
    fn from(e: mlua::Error) -> Failure {
        Failure::Lua(e)
    }
}

struct Cursor<'a> {
    lua: &'a Lua,
    data: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], Failure> {
        let bytes = self
            .data
            .get(self.at..self.at.saturating_add(n))
            .ok_or(Failure::Eof)?;
        self.at += n;
        Ok(bytes)
    }

    fn be(&mut self, n: usize) -> Result<u64, Failure> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    fn value(&mut self) -> Result<Value, Failure> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.nested())
    }

    fn nested(&mut self) -> Result<Value, Failure> {
        let lua = self.lua;
        let first = self.take(1)?[0];
        Ok(match first {
            0xcc => Value::Number(self.be(1)? as f64),
            0xcd => Value::Number(self.be(2)? as f64),
            0xce => Value::Number(self.be(4)? as f64),
            0xcf => Value::Number(self.be(8)? as f64),
            0xd0 => Value::Number(f64::from(self.be(1)? as u8 as i8)),
            0xd1 => Value::Number(f64::from(self.be(2)? as u16 as i16)),
            0xd2 => Value::Number(f64::from(self.be(4)? as u32 as i32)),
            0xd3 => Value::Number(self.be(8)? as i64 as f64),
            0xc0 => Value::Nil,
            0xc3 => Value::Boolean(true),
            0xc2 => Value::Boolean(false),
            0xca => Value::Number(f64::from(f32::from_bits(self.be(4)? as u32))),
            0xcb => Value::Number(f64::from_bits(self.be(8)?)),
            0xd9..=0xdb => {
                let len = self.be(1 << (first - 0xd9))? as usize;
                Value::String(lua.create_string(self.take(len)?)?)
            }
            0xdc | 0xdd => {
                let len = self.be(if first == 0xdc { 2 } else { 4 })? as usize;
                self.array(len)?
            }
            0xde | 0xdf => {
                let len = self.be(if first == 0xde { 2 } else { 4 })? as usize;
                self.map(len)?
            }
            b if b & 0x80 == 0 => Value::Number(f64::from(b)),
            b if b & 0xe0 == 0xe0 => Value::Number(f64::from(b as i8)),
            b if b & 0xe0 == 0xa0 => {
                let len = usize::from(b & 0x1f);
                Value::String(lua.create_string(self.take(len)?)?)
            }
            b if b & 0xf0 == 0x90 => self.array(usize::from(b & 0xf))?,
            b if b & 0xf0 == 0x80 => self.map(usize::from(b & 0xf))?,
            _ => return Err(Failure::BadFormat),
        })
    }

    fn array(&mut self, len: usize) -> Result<Value, Failure> {
        let t = self.lua.create_table()?;
        for i in 1..=len {
            let v = self.value()?;
            t.set(i, v)?;
        }
        Ok(Value::Table(t))
    }

    fn map(&mut self, len: usize) -> Result<Value, Failure> {
        let t = self.lua.create_table()?;
        for _ in 0..len {
            let k = self.value()?;
            let v = self.value()?;
            t.set(k, v)?;
        }
        Ok(Value::Table(t))
    }
}

/// lua-cmsgpack's `mp_unpack_full`: up to `limit` values from `offset` (0 and 0: all of
/// them, with no offset returned first).
fn unpack(lua: &Lua, data: Option<&Value>, limit: i64, offset: i64) -> mlua::Result<MultiValue> {
    let data = match data {
        Some(Value::String(s)) => s.as_bytes().to_vec(),
        Some(Value::Number(n)) => lua_number_text(*n).into_bytes(),
        Some(Value::Integer(n)) => lua_number_text(*n as f64).into_bytes(),
        other => {
            let got = other.map_or("no value", |v| v.type_name());
            return Err(located(
                lua,
                &format!("bad argument #1 to 'unpack' (string expected, got {got})"),
            ));
        }
    };
    let len = data.len() as i64;
    if offset < 0 || limit < 0 {
        return Err(located(
            lua,
            &format!("Invalid request to unpack with offset of {offset} and limit of {len}."),
        ));
    }
    if offset > len {
        return Err(located(
            lua,
            &format!("Start offset {offset} greater than input length {len}."),
        ));
    }
    let all = limit == 0 && offset == 0;
    let limit = if all { i64::MAX } else { limit };
    let mut cursor = Cursor {
        lua,
        data: &data,
        at: offset as usize,
    };
    let mut values = Vec::new();
    while cursor.at < data.len() && (values.len() as i64) < limit {
        match cursor.value() {
            Ok(v) => values.push(v),
            Err(Failure::Eof) => return Err(located(lua, "Missing bytes in input.")),
            Err(Failure::BadFormat) => return Err(located(lua, "Bad data format in input.")),
            Err(Failure::Lua(e)) => return Err(e),
        }
    }
    if !all {
        let next = if cursor.at >= data.len() {
            -1.0
        } else {
            cursor.at as f64
        };
        values.insert(0, Value::Number(next));
    }
    Ok(MultiValue::from_iter(values))
}

/// An optional integer argument as `luaL_optinteger` reads it.
fn opt_int(lua: &Lua, args: &[Value], n: usize, fname: &str) -> mlua::Result<Option<i64>> {
    match args.get(n) {
        None | Some(Value::Nil) => Ok(None),
        Some(v) => to_number(v).map(|x| Some(x as i64)).ok_or_else(|| {
            located(
                lua,
                &format!(
                    "bad argument #{} to '{fname}' (number expected, got {})",
                    n + 1,
                    v.type_name()
                ),
            )
        }),
    }
}

/// The `cmsgpack` table.
pub(crate) fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "pack",
        lua.create_function(|lua, args: MultiValue| {
            if args.is_empty() {
                return Err(located(
                    lua,
                    "bad argument #0 to 'pack' (MessagePack pack needs input.)",
                ));
            }
            let mut out = Vec::new();
            for v in &args {
                pack_value(&mut out, v, 0)?;
            }
            lua.create_string(out)
        })?,
    )?;
    t.set(
        "unpack",
        lua.create_function(|lua, args: MultiValue| unpack(lua, args.front(), 0, 0))?,
    )?;
    t.set(
        "unpack_one",
        lua.create_function(|lua, args: MultiValue| {
            let args: Vec<Value> = args.into_iter().collect();
            let offset = opt_int(lua, &args, 1, "unpack_one")?.unwrap_or(0);
            unpack(lua, args.first(), 1, offset)
        })?,
    )?;
    t.set(
        "unpack_limit",
        lua.create_function(|lua, args: MultiValue| {
            let args: Vec<Value> = args.into_iter().collect();
            let Some(limit) = opt_int(lua, &args, 1, "unpack_limit")? else {
                return Err(located(
                    lua,
                    "bad argument #2 to 'unpack_limit' (number expected, got no value)",
                ));
            };
            let offset = opt_int(lua, &args, 2, "unpack_limit")?.unwrap_or(0);
            unpack(lua, args.first(), limit, offset)
        })?,
    )?;
    t.set("_NAME", "cmsgpack")?;
    t.set("_VERSION", "lua-cmsgpack 0.4.0")?;
    t.set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    t.set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_and_unpack_as_lua_cmsgpack() {
        let lua = Lua::new();
        lua.globals()
            .set("cmsgpack", library(&lua).unwrap())
            .unwrap();
        let hex = |code: &str| -> String {
            let s: mlua::String = lua.load(code).eval().unwrap();
            s.as_bytes().iter().map(|b| format!("{b:02x}")).collect()
        };
        assert_eq!(
            hex("return cmsgpack.pack(1, -1, 200, -200, 70000)"),
            "01ffccc8d1ff38ce00011170"
        );
        assert_eq!(
            hex("return cmsgpack.pack(1.5, 0.1)"),
            "ca3fc00000cb3fb999999999999a"
        );
        assert_eq!(
            hex("return cmsgpack.pack({}, {1, 2}, {a = true})"),
            "9092010281a161c3"
        );
        let ok: bool = lua
            .load(
                "local a, b, c = cmsgpack.unpack(cmsgpack.pack('x', {1, {y = 2}}, false)) \
                 return a == 'x' and b[2].y == 2 and c == false",
            )
            .eval()
            .unwrap();
        assert!(ok);
        let e = lua
            .load("return cmsgpack.unpack('\\196')")
            .eval::<Value>()
            .unwrap_err();
        assert!(e.to_string().contains("Bad data format in input."));
        let e = lua
            .load("return cmsgpack.unpack('\\205\\1')")
            .eval::<Value>()
            .unwrap_err();
        assert!(e.to_string().contains("Missing bytes in input."));
    }
}
