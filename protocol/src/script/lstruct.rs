//! The `struct` library scripts see (Roberto Ierusalimschy's lua-struct, as Redis bundles it
//! on x86-64), in Rust: `pack`, `unpack`, `size`.
//!
//! Formats as lua-struct reads them: `<` `>` set the byte order (native: little), `!n` the
//! maximum alignment (default 8), `b B h H l L T i[n] I[n]` integers of 1, 2, 8, 8 and `n`
//! (default 4, at most 32) bytes, `f` `d` floats, `c[n]` a fixed string (`c0`: sized by the
//! previous number when unpacking, by the string when packing), `s` a NUL-terminated string,
//! `x` a padding byte, spaces ignored. Integers are `long`s: 64 bits, sign-extended when
//! read as signed.

use mlua::{Lua, MultiValue, Table, Value};

use super::sandbox::{located, lua_number_text, to_number};

/// lua-struct's `MAXINTSIZE`.
const MAX_INT_SIZE: usize = 32;
/// lua-struct's `MAXALIGN` on x86-64.
const MAX_ALIGN: usize = 8;

struct Header {
    little: bool,
    align: usize,
}

impl Default for Header {
    fn default() -> Header {
        Header {
            little: true,
            align: 1,
        }
    }
}

/// A format string being read.
struct Format<'a> {
    lua: &'a Lua,
    fname: &'static str,
    fmt: &'a [u8],
    at: usize,
}

impl Format<'_> {
    fn next(&mut self) -> Option<u8> {
        let c = self.fmt.get(self.at).copied().filter(|c| *c != 0)?;
        self.at += 1;
        Some(c)
    }

    fn number(&mut self, default: usize) -> mlua::Result<usize> {
        if !self.fmt.get(self.at).is_some_and(u8::is_ascii_digit) {
            return Ok(default);
        }
        let mut a: usize = 0;
        while let Some(d) = self.fmt.get(self.at).filter(|c| c.is_ascii_digit()) {
            let d = usize::from(d - b'0');
            if a > (i32::MAX as usize) / 10 || a * 10 > i32::MAX as usize - d {
                return Err(located(self.lua, "integral size overflow"));
            }
            a = a * 10 + d;
            self.at += 1;
        }
        Ok(a)
    }

    /// lua-struct's `optsize`.
    fn size(&mut self, opt: u8) -> mlua::Result<usize> {
        Ok(match opt {
            b'B' | b'b' | b'x' => 1,
            b'H' | b'h' => 2,
            b'L' | b'l' | b'T' | b'd' => 8,
            b'f' => 4,
            b'c' => self.number(1)?,
            b'i' | b'I' => {
                let size = self.number(4)?;
                if size > MAX_INT_SIZE {
                    return Err(located(
                        self.lua,
                        &format!("integral size {size} is larger than limit of {MAX_INT_SIZE}"),
                    ));
                }
                size
            }
            _ => 0,
        })
    }

    /// lua-struct's `controloptions`.
    fn control(&mut self, opt: u8, h: &mut Header) -> mlua::Result<()> {
        match opt {
            b' ' => {}
            b'>' => h.little = false,
            b'<' => h.little = true,
            b'!' => {
                let a = self.number(MAX_ALIGN)?;
                if a == 0 || a & (a - 1) != 0 {
                    return Err(located(
                        self.lua,
                        &format!("alignment {a} is not a power of 2"),
                    ));
                }
                h.align = a;
            }
            other => {
                return Err(arg_error(
                    self.lua,
                    1,
                    self.fname,
                    &format!("invalid format option '{}'", char::from(other)),
                ));
            }
        }
        Ok(())
    }
}

fn arg_error(lua: &Lua, n: usize, fname: &str, msg: &str) -> mlua::Error {
    located(lua, &format!("bad argument #{n} to '{fname}' ({msg})"))
}

/// lua-struct's `gettoalign`.
fn to_align(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    if size == 0 || size & (size - 1) != 0 {
        // lua-struct assumes a power of two here; other sizes align as its mask does.
        return (size.wrapping_sub(len & size.wrapping_sub(1))) & size.wrapping_sub(1);
    }
    (size - (len & (size - 1))) & (size - 1)
}

fn check_number(lua: &Lua, args: &[Value], n: usize, fname: &str) -> mlua::Result<f64> {
    match args.get(n - 1) {
        Some(v) => to_number(v).ok_or_else(|| {
            arg_error(
                lua,
                n,
                fname,
                &format!("number expected, got {}", v.type_name()),
            )
        }),
        None => Err(arg_error(lua, n, fname, "number expected, got no value")),
    }
}

fn check_string(lua: &Lua, args: &[Value], n: usize, fname: &str) -> mlua::Result<Vec<u8>> {
    match args.get(n - 1) {
        Some(Value::String(s)) => Ok(s.as_bytes().to_vec()),
        Some(Value::Number(x)) => Ok(lua_number_text(*x).into_bytes()),
        Some(Value::Integer(x)) => Ok(lua_number_text(*x as f64).into_bytes()),
        Some(v) => Err(arg_error(
            lua,
            n,
            fname,
            &format!("string expected, got {}", v.type_name()),
        )),
        None => Err(arg_error(lua, n, fname, "string expected, got no value")),
    }
}

fn pack(lua: &Lua, args: &[Value]) -> mlua::Result<Vec<u8>> {
    let fmt = check_string(lua, args, 1, "pack")?;
    let mut f = Format {
        lua,
        fname: "pack",
        fmt: &fmt,
        at: 0,
    };
    let mut h = Header::default();
    let mut arg = 2;
    let mut out = Vec::new();
    while let Some(opt) = f.next() {
        let mut size = f.size(opt)?;
        let pad = to_align(out.len(), &h, opt, size);
        out.resize(out.len() + pad, 0);
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let n = check_number(lua, args, arg, "pack")?;
                arg += 1;
                // C's casts on x86-64: `(long)n` below zero; `(unsigned long)n` converts
                // past 2^63 (and NaN) as `(long)(n - 2^63) ^ 2^63`, truncating likewise.
                let value = if n < 0.0 {
                    super::convert::truncate(n) as u64
                } else if n < 9_223_372_036_854_775_808.0 {
                    n as u64
                } else {
                    (super::convert::truncate(n - 9_223_372_036_854_775_808.0) as u64) ^ (1 << 63)
                };
                let mut bytes = vec![0u8; size];
                let le = value.to_le_bytes();
                for (i, b) in bytes.iter_mut().enumerate() {
                    *b = le.get(i).copied().unwrap_or(0);
                }
                if !h.little {
                    bytes.reverse();
                }
                out.extend_from_slice(&bytes);
            }
            b'x' => out.push(0),
            b'f' => {
                let x = check_number(lua, args, arg, "pack")? as f32;
                arg += 1;
                out.extend_from_slice(&if h.little {
                    x.to_le_bytes()
                } else {
                    x.to_be_bytes()
                });
            }
            b'd' => {
                let x = check_number(lua, args, arg, "pack")?;
                arg += 1;
                out.extend_from_slice(&if h.little {
                    x.to_le_bytes()
                } else {
                    x.to_be_bytes()
                });
            }
            b'c' | b's' => {
                let s = check_string(lua, args, arg, "pack")?;
                arg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    return Err(arg_error(lua, arg, "pack", "string too short"));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                }
            }
            other => f.control(other, &mut h)?,
        }
    }
    Ok(out)
}

fn unpack(lua: &Lua, args: &[Value]) -> mlua::Result<MultiValue> {
    let fmt = check_string(lua, args, 1, "unpack")?;
    let data = check_string(lua, args, 2, "unpack")?;
    let start = match args.get(2) {
        None | Some(Value::Nil) => 1,
        Some(_) => check_number(lua, args, 3, "unpack")? as i64,
    };
    if start <= 0 {
        return Err(arg_error(lua, 3, "unpack", "offset must be 1 or greater"));
    }
    let mut pos = (start - 1) as usize;
    let mut f = Format {
        lua,
        fname: "unpack",
        fmt: &fmt,
        at: 0,
    };
    let mut h = Header::default();
    let mut out: Vec<Value> = Vec::new();
    let ld = data.len();
    let too_short = || arg_error(lua, 2, "unpack", "data string too short");
    while let Some(opt) = f.next() {
        let mut size = f.size(opt)?;
        pos += to_align(pos, &h, opt, size);
        if size > ld || pos > ld - size {
            return Err(too_short());
        }
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let bytes = &data[pos..pos + size];
                let mut l: u64 = 0;
                let ordered: Vec<u8> = if h.little {
                    bytes.iter().rev().copied().collect()
                } else {
                    bytes.to_vec()
                };
                for b in ordered {
                    l = (l << 8) | u64::from(b);
                }
                let value = if opt.is_ascii_lowercase() {
                    let bits = size * 8;
                    if bits > 0 && bits < 64 && l & (1 << (bits - 1)) != 0 {
                        l |= u64::MAX << (bits - 1);
                    }
                    l as i64 as f64
                } else {
                    l as f64
                };
                out.push(Value::Number(value));
            }
            b'x' => {}
            b'f' => {
                let mut b = [0u8; 4];
                b.copy_from_slice(&data[pos..pos + 4]);
                let x = if h.little {
                    f32::from_le_bytes(b)
                } else {
                    f32::from_be_bytes(b)
                };
                out.push(Value::Number(f64::from(x)));
            }
            b'd' => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&data[pos..pos + 8]);
                let x = if h.little {
                    f64::from_le_bytes(b)
                } else {
                    f64::from_be_bytes(b)
                };
                out.push(Value::Number(x));
            }
            b'c' => {
                if size == 0 {
                    let previous = out.last().and_then(to_number);
                    let Some(n) = previous else {
                        return Err(located(lua, "format 'c0' needs a previous size"));
                    };
                    out.pop();
                    size = n as usize;
                    if size > ld || pos > ld - size {
                        return Err(too_short());
                    }
                }
                out.push(Value::String(lua.create_string(&data[pos..pos + size])?));
            }
            b's' => {
                let Some(len) = data[pos..].iter().position(|b| *b == 0) else {
                    return Err(located(lua, "unfinished string in data"));
                };
                size = len + 1;
                out.push(Value::String(lua.create_string(&data[pos..pos + len])?));
            }
            other => f.control(other, &mut h)?,
        }
        pos += size;
    }
    out.push(Value::Number((pos + 1) as f64));
    Ok(MultiValue::from_iter(out))
}

fn size(lua: &Lua, args: &[Value]) -> mlua::Result<f64> {
    let fmt = check_string(lua, args, 1, "size")?;
    let mut f = Format {
        lua,
        fname: "size",
        fmt: &fmt,
        at: 0,
    };
    let mut h = Header::default();
    let mut pos = 0usize;
    while let Some(opt) = f.next() {
        let size = f.size(opt)?;
        pos += to_align(pos, &h, opt, size);
        if opt == b's' {
            return Err(arg_error(lua, 1, "size", "option 's' has no fixed size"));
        }
        if opt == b'c' && size == 0 {
            return Err(arg_error(lua, 1, "size", "option 'c0' has no fixed size"));
        }
        if !opt.is_ascii_alphanumeric() {
            f.control(opt, &mut h)?;
        }
        pos += size;
    }
    Ok(pos as f64)
}

/// The `struct` table.
pub(crate) fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "pack",
        lua.create_function(|lua, args: MultiValue| {
            let mut args: Vec<Value> = args.into_iter().collect();
            check_string(lua, &args, 1, "pack")?;
            // lua-struct then pushes a nil after the arguments: a missing one reads as nil.
            args.push(Value::Nil);
            lua.create_string(pack(lua, &args)?)
        })?,
    )?;
    t.set(
        "unpack",
        lua.create_function(|lua, args: MultiValue| {
            let args: Vec<Value> = args.into_iter().collect();
            unpack(lua, &args)
        })?,
    )?;
    t.set(
        "size",
        lua.create_function(|lua, args: MultiValue| {
            let args: Vec<Value> = args.into_iter().collect();
            size(lua, &args)
        })?,
    )?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_unpack_and_size_as_lua_struct() {
        let lua = Lua::new();
        lua.globals().set("struct", library(&lua).unwrap()).unwrap();
        let check = |code: &str| {
            let ok: bool = lua.load(code).eval().unwrap();
            assert!(ok, "{code}");
        };
        check("return struct.pack('>I2', 258) == '\\1\\2'");
        check("return struct.pack('<h', -2) == '\\254\\255'");
        check("return struct.size('!4 b i') == 8");
        check(
            "local a, b, n = struct.unpack('<hB', '\\254\\255\\7') return a == -2 and b == 7 and n == 4",
        );
        check("local s, n = struct.unpack('s', 'ab\\0c') return s == 'ab' and n == 4");
        check("return struct.unpack('Bc0', struct.pack('B', 2) .. 'xy') == 'xy'");
    }
}
