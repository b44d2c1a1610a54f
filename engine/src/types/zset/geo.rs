//! Geo points as sorted set scores, as Redis 8.8's `geohash.c` and `geohash_helper.c` code
//! them: a longitude in [-180, 180] and a latitude in [-85.05112878, 85.05112878] each
//! scaled to 26 bits, interleaved (latitude in the even bits) into a 52-bit integer score.
//! A score decodes to the centre of its cell; distances are haversine over Redis's Earth
//! radius; GEOHASH re-encodes the point over the standard ±90° latitude range and writes
//! eleven base-32 characters.

/// Bits per coordinate.
const STEP: u32 = 26;
/// The latitude bounds (EPSG:900913).
pub const LAT_MIN: f64 = -85.05112878;
/// See [`LAT_MIN`].
pub const LAT_MAX: f64 = 85.05112878;
/// The longitude bounds.
pub const LONG_MIN: f64 = -180.0;
/// See [`LONG_MIN`].
pub const LONG_MAX: f64 = 180.0;
/// Redis's Earth radius, metres.
const EARTH_RADIUS_M: f64 = 6372797.560856;
/// The geohash alphabet.
const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";

fn spread(v: u32) -> u64 {
    let mut x = u64::from(v);
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

fn squash(v: u64) -> u32 {
    let mut x = v & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x >> 16)) & 0x0000_0000_FFFF_FFFF;
    x as u32
}

fn encode_in(lon: f64, lat: f64, lat_min: f64, lat_max: f64) -> u64 {
    let lat_offset = (lat - lat_min) / (lat_max - lat_min) * f64::from(1u32 << STEP);
    let long_offset = (lon - LONG_MIN) / (LONG_MAX - LONG_MIN) * f64::from(1u32 << STEP);
    spread(lat_offset as u32) | (spread(long_offset as u32) << 1)
}

/// Whether (lon, lat) is a point Redis indexes.
pub fn valid(lon: f64, lat: f64) -> bool {
    (LONG_MIN..=LONG_MAX).contains(&lon) && (LAT_MIN..=LAT_MAX).contains(&lat)
}

/// The score of a valid point.
pub fn encode(lon: f64, lat: f64) -> u64 {
    encode_in(lon, lat, LAT_MIN, LAT_MAX)
}

/// The centre of the cell a score names, as (lon, lat).
pub fn decode(score: f64) -> (f64, f64) {
    let bits = score as u64;
    let lat_i = squash(bits);
    let lon_i = squash(bits >> 1);
    let scale = f64::from(1u32 << STEP);
    let lat_lo = LAT_MIN + (f64::from(lat_i) / scale) * (LAT_MAX - LAT_MIN);
    let lat_hi = LAT_MIN + ((f64::from(lat_i) + 1.0) / scale) * (LAT_MAX - LAT_MIN);
    let lon_lo = LONG_MIN + (f64::from(lon_i) / scale) * (LONG_MAX - LONG_MIN);
    let lon_hi = LONG_MIN + ((f64::from(lon_i) + 1.0) / scale) * (LONG_MAX - LONG_MIN);
    let lon = ((lon_lo + lon_hi) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let lat = ((lat_lo + lat_hi) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

fn deg_rad(d: f64) -> f64 {
    d * (std::f64::consts::PI / 180.0)
}

/// The haversine distance in metres (`geohashGetDistance`).
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let (lon1r, lon2r) = (deg_rad(lon1), deg_rad(lon2));
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return EARTH_RADIUS_M * (deg_rad(lat2) - deg_rad(lat1)).abs();
    }
    let (lat1r, lat2r) = (deg_rad(lat1), deg_rad(lat2));
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

/// The standard eleven-character geohash of a score's point.
pub fn hash_string(score: f64) -> String {
    let (lon, lat) = decode(score);
    let bits = encode_in(lon, lat, -90.0, 90.0);
    (0..11)
        .map(|i| {
            let idx = if i == 10 {
                0
            } else {
                (bits >> (52 - (i + 1) * 5)) & 0x1f
            };
            char::from(ALPHABET[idx as usize])
        })
        .collect()
}

/// A distance as Redis's `fixedpoint_d2string` with four decimals.
pub fn format_distance(d: f64) -> String {
    let v = (d * 10_000.0).round_ties_even() as i64;
    let sign = if v < 0 { "-" } else { "" };
    let v = v.unsigned_abs();
    format!("{sign}{}.{:04}", v / 10_000, v % 10_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_round_trip_through_scores() {
        let s = encode(13.361389, 38.115556);
        assert_eq!(s, 3479099956230698);
        let (lon, lat) = decode(s as f64);
        assert!((lon - 13.361389).abs() < 1e-5 && (lat - 38.115556).abs() < 1e-5);
        assert_eq!(hash_string(s as f64), "sqc8b49rny0");
        let (lon2, lat2) = decode(encode(15.087269, 37.502669) as f64);
        assert_eq!(
            format_distance(distance(lon, lat, lon2, lat2)),
            "166274.1516"
        );
    }
}
