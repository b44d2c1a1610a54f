//! The `bit` library scripts see (LuaBitOp 1.0, as Redis bundles it), in Rust.
//!
//! Every operand goes through `tobit`: the number is rounded to an integer and wrapped to 32
//! bits exactly as LuaBitOp does it (adding 2^52 + 2^51 and keeping the low word), and every
//! result is a signed 32-bit number.

use mlua::{Lua, MultiValue, Table, Value};

/// LuaBitOp's normalisation of a number to a signed 32-bit integer.
pub(crate) fn tobit(n: f64) -> i32 {
    (n + 6_755_399_441_055_744.0).to_bits() as u32 as i32
}

fn arg(lua: &Lua, args: &[Value], n: usize, fname: &str) -> mlua::Result<i32> {
    let number = match args.get(n) {
        Some(Value::Number(x)) => Some(*x),
        Some(Value::Integer(x)) => Some(*x as f64),
        Some(Value::String(s)) => s.to_str().ok().and_then(|s| s.trim().parse::<f64>().ok()),
        _ => None,
    };
    number.map(tobit).ok_or_else(|| {
        let got = args.get(n).map_or("no value", |v| v.type_name());
        super::sandbox::located(
            lua,
            &format!(
                "bad argument #{} to '{fname}' (number expected, got {got})",
                n + 1
            ),
        )
    })
}

fn fold(lua: &Lua, table: &Table, name: &'static str, op: fn(i32, i32) -> i32) -> mlua::Result<()> {
    let f = lua.create_function(move |lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        let mut acc = arg(lua, &args, 0, name)?;
        for i in 1..args.len() {
            acc = op(acc, arg(lua, &args, i, name)?);
        }
        Ok(f64::from(acc))
    })?;
    table.set(name, f)
}

fn unary(lua: &Lua, table: &Table, name: &'static str, op: fn(i32) -> i32) -> mlua::Result<()> {
    let f = lua.create_function(move |lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        Ok(f64::from(op(arg(lua, &args, 0, name)?)))
    })?;
    table.set(name, f)
}

fn shift(
    lua: &Lua,
    table: &Table,
    name: &'static str,
    op: fn(i32, u32) -> i32,
) -> mlua::Result<()> {
    let f = lua.create_function(move |lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        let b = arg(lua, &args, 0, name)?;
        let n = arg(lua, &args, 1, name)? as u32 & 31;
        Ok(f64::from(op(b, n)))
    })?;
    table.set(name, f)
}

/// The `bit` table.
pub(crate) fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    unary(lua, &t, "tobit", |a| a)?;
    unary(lua, &t, "bnot", |a| !a)?;
    unary(lua, &t, "bswap", |a| a.swap_bytes())?;
    fold(lua, &t, "band", |a, b| a & b)?;
    fold(lua, &t, "bor", |a, b| a | b)?;
    fold(lua, &t, "bxor", |a, b| a ^ b)?;
    shift(lua, &t, "lshift", |b, n| ((b as u32) << n) as i32)?;
    shift(lua, &t, "rshift", |b, n| ((b as u32) >> n) as i32)?;
    shift(lua, &t, "arshift", |b, n| b >> n)?;
    shift(lua, &t, "rol", |b, n| (b as u32).rotate_left(n) as i32)?;
    shift(lua, &t, "ror", |b, n| (b as u32).rotate_right(n) as i32)?;
    let tohex = lua.create_function(|lua, args: MultiValue| {
        let args: Vec<Value> = args.into_iter().collect();
        let b = arg(lua, &args, 0, "tohex")? as u32;
        let mut n = if args.len() > 1 && args[1] != Value::Nil {
            arg(lua, &args, 1, "tohex")?
        } else {
            8
        };
        let upper = n < 0;
        if upper {
            n = n.wrapping_neg();
        }
        let n = n.clamp(0, 8) as usize;
        let text = if upper {
            format!("{b:08X}")
        } else {
            format!("{b:08x}")
        };
        Ok(text[8 - n..].to_string())
    })?;
    t.set("tohex", tohex)?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tobit_wraps_and_rounds_as_luabitop() {
        assert_eq!(tobit(0xffff_ffffu32 as f64), -1);
        assert_eq!(tobit(4_294_967_296.0 + 5.0), 5);
        assert_eq!(tobit(-1.0), -1);
        assert_eq!(tobit(2.5), 2);
        assert_eq!(tobit(3.5), 4);
    }

    #[test]
    fn operations_match_luabitop() {
        let lua = Lua::new();
        lua.globals().set("bit", library(&lua).unwrap()).unwrap();
        let check = |code: &str| {
            let ok: bool = lua.load(code).eval().unwrap();
            assert!(ok, "{code}");
        };
        check("return bit.band(0xff, 0x0f, 0x3) == 3");
        check("return bit.bor(1, 2, 4) == 7");
        check("return bit.bxor(5, 1) == 4");
        check("return bit.bnot(0) == -1");
        check("return bit.lshift(1, 31) == -2147483648");
        check("return bit.rshift(-1, 28) == 15");
        check("return bit.arshift(-256, 4) == -16");
        check("return bit.rol(0x12345678, 8) == 0x34567812");
        check("return bit.tohex(255) == '000000ff'");
        check("return bit.tohex(255, -2) == 'FF'");
        check("return bit.bswap(0x12345678) == 0x78563412");
    }
}
