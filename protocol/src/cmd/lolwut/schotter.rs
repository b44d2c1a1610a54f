//! LOLWUT 5: *Schotter* (Georg Nees, 1968), rows of squares that rotate and drift more the
//! lower they are, drawn on a canvas of two pixels per terminal column and shown in Braille
//! characters, each a block of 2×4 pixels.
//!
//! `LOLWUT VERSION 5 [columns [squares-per-row [squares-per-column]]]`, 66, 8 and 12 by
//! default, each clamped to 1..=1000, 1..=200, 1..=200. The arithmetic is Redis's, in its C
//! types (`float` sizes and angles, `double` trigonometry, truncation to `int`), so the
//! undisturbed first two rows land on the same pixels.

use echomq_engine::Reply;

use super::{Canvas, RAND_MAX, Rand, sizes};

/// The caption under the drawing, before the version.
const CAPTION: &str = "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ";

pub(super) fn run(args: &[&[u8]]) -> Result<Vec<u8>, Reply> {
    let [columns, per_row, per_column] = sizes(args, [(66, 1, 1000), (8, 1, 200), (12, 1, 200)])?;
    // The clamps keep each within i32.
    let canvas = draw(
        columns as i32,
        per_row as i32,
        per_column as i32,
        &mut Rand::new(),
    );
    let mut text = braille(&canvas);
    text.extend_from_slice(CAPTION.as_bytes());
    text.extend_from_slice(crate::REDIS_VERSION.as_bytes());
    text.push(b'\n');
    Ok(text)
}

/// The canvas for `columns` terminal columns and a grid of squares; rows after the second
/// are rotated and moved by up to their row's share of a random amount.
fn draw(columns: i32, per_row: i32, per_column: i32, rand: &mut Rand) -> Canvas {
    let width = columns * 2;
    let padding = if width > 4 { 2 } else { 0 };
    let side = (width - padding * 2) as f32 / per_row as f32;
    let height = (side * per_column as f32 + (padding * 2) as f32) as i32;
    let mut canvas = Canvas::new(width, height, 0);
    for y in 0..per_column {
        for x in 0..per_row {
            let mut sx = (x as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut sy = (y as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut angle = 0.0f32;
            if y > 1 {
                let mut share =
                    || rand.next() as f32 / RAND_MAX as f32 / per_column as f32 * y as f32;
                let (mut r1, mut r2, mut r3) = (share(), share(), share());
                for r in [&mut r1, &mut r2, &mut r3] {
                    if rand.next() % 2 == 1 {
                        *r = -*r;
                    }
                }
                angle = r1;
                sx = (sx as f32 + r2 * side / 3.0) as i32;
                sy = (sy as f32 + r3 * side / 3.0) as i32;
            }
            square(&mut canvas, (sx, sy), side, angle);
        }
    }
    canvas
}

/// √2 as Redis writes it, to ten decimals: dividing by the exact constant could round a
/// square's size the other way.
#[allow(clippy::approx_constant)]
const SQRT_2_REDIS: f64 = 1.414_213_562_3;

/// A square of side `size` centred on `center`, turned by `angle` radians: its corners lie
/// on the circle through them, a quarter turn apart.
fn square(canvas: &mut Canvas, (x, y): (i32, i32), size: f32, angle: f32) {
    let radius = ((size as f64 / SQRT_2_REDIS) as f32 as f64).round() as f32;
    let mut k = (std::f64::consts::FRAC_PI_4 + angle as f64) as f32;
    let mut corners = [(0, 0); 4];
    for corner in &mut corners {
        *corner = (
            ((k as f64).sin() * radius as f64 + x as f64).round() as i32,
            ((k as f64).cos() * radius as f64 + y as f64).round() as i32,
        );
        k = (k as f64 + std::f64::consts::FRAC_PI_2) as f32;
    }
    for j in 0..4 {
        canvas.line(corners[j], corners[(j + 1) % 4], 1);
    }
}

/// The canvas in Braille, one character per 2×4 pixels, one line per four pixel rows. Rows
/// are separated by a newline except after a block starting on the canvas's last row, as
/// Redis separates them.
fn braille(canvas: &Canvas) -> Vec<u8> {
    // The dot of each pixel of a block, by (dx, dy): the Braille dot numbering.
    const DOTS: [(i32, i32, u32); 8] = [
        (0, 0, 0),
        (0, 1, 1),
        (0, 2, 2),
        (1, 0, 3),
        (1, 1, 4),
        (1, 2, 5),
        (0, 3, 6),
        (1, 3, 7),
    ];
    let mut text = Vec::new();
    for y in (0..canvas.height).step_by(4) {
        for x in (0..canvas.width).step_by(2) {
            let dots = DOTS
                .iter()
                .filter(|&&(dx, dy, _)| canvas.get(x + dx, y + dy) != 0)
                .fold(0u32, |acc, &(_, _, bit)| acc | 1 << bit);
            let glyph = char::from_u32(0x2800 + dots).unwrap_or(' ');
            let mut buf = [0; 4];
            text.extend_from_slice(glyph.encode_utf8(&mut buf).as_bytes());
        }
        if y != canvas.height - 1 {
            text.push(b'\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canvas_is_sized_from_the_columns_and_the_grid() {
        let canvas = draw(66, 8, 12, &mut Rand::new());
        assert_eq!((canvas.width, canvas.height), (132, 196));
        let canvas = draw(1, 1, 1, &mut Rand::new());
        assert_eq!((canvas.width, canvas.height), (2, 2));
    }

    #[test]
    fn braille_lines_cover_the_canvas() {
        let canvas = draw(10, 2, 3, &mut Rand::new());
        let text = String::from_utf8(braille(&canvas)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len() as i32, (canvas.height + 3) / 4);
        assert!(lines.iter().all(|l| l.chars().count() == 10));
    }
}
