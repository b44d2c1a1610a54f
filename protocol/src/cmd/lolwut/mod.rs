//! LOLWUT: computer art and the server's version, as Redis 8.8 draws it (`lolwut.c`).
//!
//! `LOLWUT [VERSION v] [arg ...]` picks the piece of Redis version `v` (the server's own,
//! 8.8.0, without `VERSION`): version 5 draws Georg Nees's *Schotter* in Braille characters
//! ([`schotter`]), version 6 a city skyline in terminal colours ([`skyline`]), version 8
//! composes a poem after Nanni Balestrini's *Tape Mark I* ([`poem`]); any other version answers
//! only `Redis ver. 8.8.0`. The reply is verbatim text (`txt`).
//!
//! Each piece draws from a pseudo-random source, as Redis's draws from `rand()` seeded at
//! start: what does not depend on it (Schotter's first two rows, the texts around the art,
//! the sizes) is Redis's byte for byte, the rest has Redis's shape.

mod poem;
mod schotter;
mod skyline;

use bytes::Bytes;
use echomq_engine::Reply;

use super::{int_arg, is};
use crate::REDIS_VERSION;
use crate::state::{ClientState, ServerState};

/// Which piece a version asks for, as `lolwutCommand` matches the version string: `5.x` (and
/// `4.9`) Schotter, `6.x` (and `5.9`) the skyline, `8.x` (and `7.9`) the poem. A version given
/// as `VERSION n` is written `n.0.0`, so only 5, 6 and 8 pick a piece then.
enum Piece {
    Schotter,
    Skyline,
    Poem,
    VersionOnly,
}

impl Piece {
    fn of_version(version: &str) -> Piece {
        let b = version.as_bytes();
        let at = |i: usize| b.get(i).copied().unwrap_or(0);
        let minor_nine = at(1) == b'.' && at(2) == b'9';
        let major = |m: u8| at(0) == m && at(1) == b'.';
        match () {
            () if (major(b'5') && !minor_nine) || (major(b'4') && minor_nine) => Piece::Schotter,
            () if (major(b'6') && !minor_nine) || (major(b'5') && minor_nine) => Piece::Skyline,
            () if (major(b'8') && !minor_nine) || (major(b'7') && minor_nine) => Piece::Poem,
            () => Piece::VersionOnly,
        }
    }
}

/// `LOLWUT [VERSION version] [piece arguments ...]`.
pub(crate) fn lolwut(_: &ServerState, _: &ClientState, argv: &[&[u8]]) -> Reply {
    let (piece, args) = if argv.len() >= 3 && is(argv[1], "version") {
        let version = match int_arg(argv[2]) {
            Ok(v) => v,
            Err(reply) => return reply,
        };
        // Redis prints the version as an `unsigned int`: the low 32 bits.
        let version = format!("{}.0.0", version as u32);
        (Piece::of_version(&version), &argv[3..])
    } else {
        (Piece::of_version(REDIS_VERSION), &argv[1..])
    };
    let text = match piece {
        Piece::Schotter => schotter::run(args),
        Piece::Skyline => skyline::run(args),
        Piece::Poem => Ok(poem::run(args)),
        Piece::VersionOnly => Ok(format!("Redis ver. {REDIS_VERSION}\n").into_bytes()),
    };
    match text {
        Ok(text) => Reply::Verbatim(Bytes::from(text)),
        Err(reply) => reply,
    }
}

/// The integer arguments of a piece, each defaulting when absent, each clamped to
/// `min..=max` as Redis clamps them; the first that is not an integer is the error.
fn sizes<const N: usize>(args: &[&[u8]], limits: [(i64, i64, i64); N]) -> Result<[i64; N], Reply> {
    let mut out = [0; N];
    for (i, (default, min, max)) in limits.into_iter().enumerate() {
        let value = match args.get(i) {
            Some(arg) => int_arg(arg)?,
            None => default,
        };
        out[i] = value.clamp(min, max);
    }
    Ok(out)
}

/// A grid of pixels, each a small colour number; reads and writes outside it are ignored (a
/// read gives colour 0), as the drawings run off the edges.
struct Canvas {
    width: i32,
    height: i32,
    pixels: Vec<u8>,
}

impl Canvas {
    fn new(width: i32, height: i32, background: u8) -> Canvas {
        let cells = usize::try_from(width).unwrap_or(0) * usize::try_from(height).unwrap_or(0);
        Canvas {
            width,
            height,
            pixels: vec![background; cells],
        }
    }

    fn at(&self, x: i32, y: i32) -> Option<usize> {
        ((0..self.width).contains(&x) && (0..self.height).contains(&y))
            .then(|| x as usize + y as usize * self.width as usize)
    }

    fn set(&mut self, x: i32, y: i32, color: u8) {
        if let Some(i) = self.at(x, y) {
            self.pixels[i] = color;
        }
    }

    fn get(&self, x: i32, y: i32) -> u8 {
        self.at(x, y).map_or(0, |i| self.pixels[i])
    }

    /// Bresenham's line from one end to the other, both included.
    fn line(&mut self, (mut x1, mut y1): (i32, i32), (x2, y2): (i32, i32), color: u8) {
        let (dx, dy) = ((x2 - x1).abs(), (y2 - y1).abs());
        let (sx, sy) = (if x1 < x2 { 1 } else { -1 }, if y1 < y2 { 1 } else { -1 });
        let mut err = dx - dy;
        loop {
            self.set(x1, y1, color);
            if x1 == x2 && y1 == y2 {
                break;
            }
            let e2 = err * 2;
            if e2 > -dy {
                err -= dy;
                x1 += sx;
            }
            if e2 < dx {
                err += dx;
                y1 += sy;
            }
        }
    }
}

/// The largest value [`Rand::next`] gives, as C's `RAND_MAX` on glibc.
const RAND_MAX: i32 = i32::MAX;

/// A pseudo-random source standing in for C's `rand()`: values in `0..=RAND_MAX`, seeded
/// afresh for each drawing (xorshift64*).
struct Rand(u64);

impl Rand {
    fn new() -> Rand {
        use std::hash::{BuildHasher, Hasher};
        // Each RandomState is seeded afresh by the standard library.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        Rand(hasher.finish() | 1)
    }

    fn next(&mut self) -> i32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_pick_pieces_as_redis_matches_them() {
        let pick = |v: &str| match Piece::of_version(v) {
            Piece::Schotter => 5,
            Piece::Skyline => 6,
            Piece::Poem => 8,
            Piece::VersionOnly => 0,
        };
        assert_eq!(pick("5.0.0"), 5);
        assert_eq!(pick("4.9.0"), 5);
        assert_eq!(pick("5.9.0"), 6);
        assert_eq!(pick("6.0.0"), 6);
        assert_eq!(pick("7.9.0"), 8);
        assert_eq!(pick("8.8.0"), 8);
        assert_eq!(pick("7.0.0"), 0);
        assert_eq!(pick("55.0.0"), 0);
        assert_eq!(pick("4294967295.0.0"), 0);
        assert_eq!(pick(""), 0);
    }

    #[test]
    fn rand_stays_within_rand_max() {
        let mut rand = Rand::new();
        assert!(
            (0..10_000)
                .map(|_| rand.next())
                .all(|r| (0..=RAND_MAX).contains(&r))
        );
    }

    #[test]
    fn lines_include_both_ends_and_clip() {
        let mut canvas = Canvas::new(4, 3, 0);
        canvas.line((-2, 0), (3, 2), 1);
        assert_eq!(canvas.get(3, 2), 1);
        assert_eq!(canvas.get(9, 9), 0);
        assert!(canvas.pixels.iter().filter(|&&p| p == 1).count() >= 3);
    }
}
