//! LOLWUT 6: a city skyline after the parallax backgrounds of 8-bit games, one pixel per
//! terminal character, in the four greys of a Game Boy drawn with ANSI colour escapes.
//!
//! `LOLWUT VERSION 6 [columns [rows]]`, 80 and 20 by default, each clamped to 1..=1000. Two
//! layers of window-less buildings (the lighter grey behind), then the black foreground with
//! windows in random greys, on a white sky.

use echomq_engine::Reply;

use super::{Canvas, Rand, sizes};

/// The colours, darkest first.
const BLACK: u8 = 0;
const GREY_DARK: u8 = 1;
const GREY_LIGHT: u8 = 2;
const WHITE: u8 = 3;

/// The caption under the drawing, before the version.
const CAPTION: &str = "\nDedicated to the 8 bit game developers of past and present.\nOriginal 8 bit \
                       image from Plaguemon by hikikomori. Redis ver. ";

pub(super) fn run(args: &[&[u8]]) -> Result<Vec<u8>, Reply> {
    let [columns, rows] = sizes(args, [(80, 1, 1000), (20, 1, 1000)])?;
    let mut canvas = Canvas::new(columns as i32, rows as i32, WHITE);
    skyline(&mut canvas, &mut Rand::new());
    let mut text = render(&canvas);
    text.extend_from_slice(CAPTION.as_bytes());
    text.extend_from_slice(crate::REDIS_VERSION.as_bytes());
    text.push(b'\n');
    Ok(text)
}

/// One building, standing on the canvas's bottom row.
struct Building {
    x: i32,
    width: i32,
    height: i32,
    windows: bool,
    color: u8,
}

/// Fills the building's pixels; the roof row is two pixels shorter at each side. Windows are
/// two pixels wide and one tall, on every other column pair and row inside a two-pixel
/// border, each a random grey.
fn building(canvas: &mut Canvas, b: &Building, rand: &mut Rand) {
    let bottom = canvas.height - 1;
    let top = bottom - b.height + 1;
    for y in (top..=bottom).rev() {
        for x in b.x..b.x + b.width {
            if y == top && (x <= b.x + 1 || x >= b.x + b.width - 2) {
                continue;
            }
            let mut color = b.color;
            let inside = x > b.x + 1 && x < b.x + b.width - 2 && y > top + 1 && y < bottom - 1;
            if b.windows && inside {
                let (rel_x, rel_y) = (x - (b.x + 1), y - (top + 1));
                if (rel_x / 2) % 2 == 1 && rel_y % 2 == 1 {
                    loop {
                        color = 1 + (rand.next() % 2) as u8;
                        if color != b.color {
                            break;
                        }
                    }
                    // A window's second pixel takes its first's grey.
                    if rel_x % 2 == 1 {
                        color = canvas.get(x - 1, y);
                    }
                }
            }
            canvas.set(x, y, color);
        }
    }
}

/// The two background layers, light grey then dark grey, then the foreground.
fn skyline(canvas: &mut Canvas, rand: &mut Rand) {
    let h = canvas.height;
    for color in [GREY_LIGHT, GREY_DARK] {
        let mut offset = -10;
        while offset < canvas.width {
            offset += rand.next() % 8;
            let width = 10 + rand.next() % 9;
            let height = if color == GREY_LIGHT {
                h / 2 + (rand.next() % h) / 2
            } else {
                h / 2 + (rand.next() % h) / 3
            };
            let b = Building {
                x: offset,
                width,
                height,
                windows: false,
                color,
            };
            building(canvas, &b, rand);
            offset += if color == GREY_LIGHT {
                width / 2
            } else {
                width + 1
            };
        }
    }
    let mut offset = -10;
    while offset < canvas.width {
        offset += rand.next() % 8;
        let mut width = 5 + rand.next() % 14;
        if width % 4 != 0 {
            width += width % 3;
        }
        let height = h / 3 + (rand.next() % h) / 2;
        let b = Building {
            x: offset,
            width,
            height,
            windows: true,
            color: BLACK,
        };
        building(canvas, &b, rand);
        offset += width + 5;
    }
}

/// Each pixel as a space with its colour as both foreground and background, one line per
/// row, rows separated by newlines.
fn render(canvas: &Canvas) -> Vec<u8> {
    let mut text = Vec::new();
    for y in 0..canvas.height {
        for x in 0..canvas.width {
            let escape: &[u8] = match canvas.get(x, y) {
                GREY_DARK => b"0;90;100m",
                GREY_LIGHT => b"0;37;47m",
                WHITE => b"0;97;107m",
                _ => b"0;30;40m",
            };
            text.extend_from_slice(b"\x1b[");
            text.extend_from_slice(escape);
            text.extend_from_slice(b" \x1b[0m");
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
    fn every_pixel_is_one_escaped_space() {
        let mut canvas = Canvas::new(7, 3, WHITE);
        skyline(&mut canvas, &mut Rand::new());
        let text = render(&canvas);
        let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
        assert_eq!(lines.len(), 3);
        for line in lines {
            assert_eq!(line.iter().filter(|&&b| b == b' ').count(), 7);
        }
    }
}
