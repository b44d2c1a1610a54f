//! `GEOADD key [NX|XX] [CH] longitude latitude member [...]`, `GEOPOS key member...`,
//! `GEODIST key member1 member2 [M|KM|FT|MI]` and `GEOHASH key member...` over sorted sets
//! (see [`crate::types::zset::geo`]).
//!
//! GEOADD checks as Redis's `geoaddCommand`: a count of arguments after the options that is
//! no multiple of three, or NX with XX (`ERR syntax error`), then every coordinate (`ERR
//! value is not a valid float`, `ERR invalid longitude,latitude pair <lon>,<lat>` with six
//! decimals), then runs as `ZADD key [options] score member...` with the points' scores,
//! which is also what it propagates. GEOPOS replies `[lon, lat]` doubles per member (a null
//! array for a missing one); GEODIST checks the unit (`ERR unsupported unit provided. please
//! use M, KM, FT, MI`, more than one argument after the members `ERR syntax error`) before the
//! key and replies the distance with four decimals, nil when a member is missing; GEOHASH
//! replies eleven-character geohashes, nil for missing members.

use bytes::Bytes;

use crate::command::args::is;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, ZSET as ZSET_EVENTS};
use crate::reply::Reply;
use crate::types::Value;
use crate::types::zset::{ZSet, geo, score};

use super::read_zset;
use super::zadd::ZAdd;

/// GEOADD, GEOPOS, GEODIST, GEOHASH.
#[derive(Debug)]
pub struct Geo;

impl Geo {
    /// GEOADD.
    pub fn run_geoadd(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (mut xx, mut nx) = (false, false);
        let mut at = 2;
        while at < argv.len() {
            let a = argv[at];
            if is(a, "nx") {
                nx = true;
            } else if is(a, "xx") {
                xx = true;
            } else if !is(a, "ch") {
                break;
            }
            at += 1;
        }
        if (argv.len() - at) % 3 != 0 || (xx && nx) {
            return Err(Error::Syntax);
        }
        let mut form: Vec<Vec<u8>> = vec![b"zadd".to_vec()];
        form.extend(argv[1..at].iter().map(|a| a.to_vec()));
        for point in argv[at..].chunks_exact(3) {
            let lon = score::parse(point[0]).ok_or(Error::NotAFloat)?;
            let lat = score::parse(point[1]).ok_or(Error::NotAFloat)?;
            if !geo::valid(lon, lat) {
                return Err(Error::InvalidLonLat(format!("{lon:.6},{lat:.6}")));
            }
            form.push(geo::encode(lon, lat).to_string().into_bytes());
            form.push(point[2].to_vec());
        }
        let refs: Vec<&[u8]> = form.iter().map(Vec::as_slice).collect();
        ZAdd::run(db, snap, &refs)
    }

    /// GEOPOS.
    pub fn run_geopos(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        let z = read_zset(db, argv[1])?;
        Ok(Reply::Array(
            argv[2..]
                .iter()
                .map(|m| match z.and_then(|z| z.score(m)) {
                    None => Reply::NullArray,
                    Some(s) => {
                        let (lon, lat) = geo::decode(s);
                        Reply::Array(vec![score::reply(lon), score::reply(lat)])
                    }
                })
                .collect(),
        ))
    }

    /// GEODIST.
    pub fn run_geodist(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let to_meter = match argv.len() {
            4 => 1.0,
            5 => unit(argv[4])?,
            _ => return Err(Error::Syntax),
        };
        db.count_read(argv[1], false);
        let Some(z) = read_zset(db, argv[1])? else {
            return Ok(Reply::Null);
        };
        let (Some(a), Some(b)) = (z.score(argv[2]), z.score(argv[3])) else {
            return Ok(Reply::Null);
        };
        let ((lon1, lat1), (lon2, lat2)) = (geo::decode(a), geo::decode(b));
        let d = geo::distance(lon1, lat1, lon2, lat2) / to_meter;
        Ok(Reply::Bulk(Bytes::from(geo::format_distance(d))))
    }

    /// GEOHASH.
    pub fn run_geohash(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        let z = read_zset(db, argv[1])?;
        Ok(Reply::Array(
            argv[2..]
                .iter()
                .map(|m| match z.and_then(|z| z.score(m)) {
                    None => Reply::Null,
                    Some(s) => Reply::Bulk(Bytes::from(geo::hash_string(s))),
                })
                .collect(),
        ))
    }
}

/// A unit's metres (`extractUnitOrReply`).
fn unit(arg: &[u8]) -> Result<f64> {
    if is(arg, "m") {
        Ok(1.0)
    } else if is(arg, "km") {
        Ok(1000.0)
    } else if is(arg, "ft") {
        Ok(0.3048)
    } else if is(arg, "mi") {
        Ok(1609.34)
    } else {
        Err(Error::Text(
            "unsupported unit provided. please use M, KM, FT, MI",
        ))
    }
}

/// How GEORADIUS and GEOSEARCH were called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Search {
    Radius { by_member: bool, store_ok: bool },
    Geosearch { store: bool },
}

#[derive(Debug, Clone, Copy)]
enum Shape {
    Circle(f64),
    Box(f64, f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    None,
    Asc,
    Desc,
}

fn parse_float(arg: &[u8], msg: &'static str) -> Result<f64> {
    score::parse(arg).ok_or(Error::Text(msg))
}

/// `<radius> <unit>` (`extractDistanceOrReply`): the radius and the unit's metres.
fn radius(argv: &[&[u8]]) -> Result<(f64, f64)> {
    let r = parse_float(argv[0], "need numeric radius")?;
    if r < 0.0 {
        return Err(Error::Text("radius cannot be negative"));
    }
    Ok((r, unit(argv[1])?))
}

/// `<width> <height> <unit>` (`extractBoxOrReply`).
fn bbox(argv: &[&[u8]]) -> Result<(f64, f64, f64)> {
    let w = parse_float(argv[0], "need numeric width")?;
    let h = parse_float(argv[1], "need numeric height")?;
    if h < 0.0 || w < 0.0 {
        return Err(Error::Text("height or width cannot be negative"));
    }
    Ok((w, h, unit(argv[2])?))
}

fn lon_lat(argv: &[&[u8]]) -> Result<(f64, f64)> {
    let lon = score::parse(argv[0]).ok_or(Error::NotAFloat)?;
    let lat = score::parse(argv[1]).ok_or(Error::NotAFloat)?;
    if !geo::valid(lon, lat) {
        return Err(Error::InvalidLonLat(format!("{lon:.6},{lat:.6}")));
    }
    Ok((lon, lat))
}

fn member_point(z: &ZSet, member: &[u8]) -> Result<(f64, f64)> {
    z.score(member)
        .map(geo::decode)
        .ok_or(Error::Text("could not decode requested zset member"))
}

/// GEORADIUS, GEORADIUSBYMEMBER, their `_RO` forms, GEOSEARCH and GEOSEARCHSTORE.
///
/// Checks as Redis's `georadiusGeneric`: WRONGTYPE, the centre and radius of the GEORADIUS
/// forms, the options in order (COUNT must be > 0; STORE and STOREDIST only where the form
/// stores; FROMMEMBER/FROMLONLAT and BYRADIUS/BYBOX only in GEOSEARCH, one of each), then
/// STORE with a WITH* option, a missing FROM* or BY*, ANY without COUNT. Every point of the
/// set is tested against the shape as Redis tests the points of its neighbour boxes; COUNT
/// without ANY sorts ascending. Results without ASC or DESC come in score order, which need
/// not be the order Redis's box walk gives. The STORE forms store scores (or distances with
/// STOREDIST) with `georadiusstore|geosearchstore`, one change per point, propagated
/// verbatim; an empty result deletes the destination (`del`).
#[derive(Debug)]
pub struct GeoSearch;

impl GeoSearch {
    /// GEORADIUS.
    pub fn run_georadius(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let how = Search::Radius {
            by_member: false,
            store_ok: true,
        };
        GeoSearch::run(db, snap, argv, how)
    }

    /// GEORADIUS_RO.
    pub fn run_georadius_ro(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let how = Search::Radius {
            by_member: false,
            store_ok: false,
        };
        GeoSearch::run(db, snap, argv, how)
    }

    /// GEORADIUSBYMEMBER.
    pub fn run_georadiusbymember(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let how = Search::Radius {
            by_member: true,
            store_ok: true,
        };
        GeoSearch::run(db, snap, argv, how)
    }

    /// GEORADIUSBYMEMBER_RO.
    pub fn run_georadiusbymember_ro(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let how = Search::Radius {
            by_member: true,
            store_ok: false,
        };
        GeoSearch::run(db, snap, argv, how)
    }

    /// GEOSEARCH.
    pub fn run_geosearch(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        GeoSearch::run(db, snap, argv, Search::Geosearch { store: false })
    }

    /// GEOSEARCHSTORE.
    pub fn run_geosearchstore(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        GeoSearch::run(db, snap, argv, Search::Geosearch { store: true })
    }

    fn run(db: &mut Db, snap: &Snapshot, argv: &[&[u8]], how: Search) -> Result<Reply> {
        let src = match how {
            Search::Geosearch { store: true } => argv[2],
            _ => argv[1],
        };
        db.count_read(src, false);
        let z = read_zset(db, src)?;
        let mut center = (0.0, 0.0);
        let mut shape = Shape::Circle(0.0);
        let mut conversion = 1.0;
        let base = match how {
            Search::Radius {
                by_member: false, ..
            } => {
                center = lon_lat(&argv[2..4])?;
                let (r, c) = radius(&argv[4..6])?;
                shape = Shape::Circle(r);
                conversion = c;
                6
            }
            Search::Radius {
                by_member: true, ..
            } => {
                if let Some(z) = z {
                    center = member_point(z, argv[2])?;
                    let (r, c) = radius(&argv[3..5])?;
                    shape = Shape::Circle(r);
                    conversion = c;
                }
                5
            }
            Search::Geosearch { store } => {
                if store {
                    3
                } else {
                    2
                }
            }
        };
        let geosearch = matches!(how, Search::Geosearch { .. });
        let store_ok = matches!(how, Search::Radius { store_ok: true, .. });
        let (mut withdist, mut withhash, mut withcoord) = (false, false, false);
        let (mut frommember, mut fromloc, mut byradius, mut bybox) = (false, false, false, false);
        let mut sort = Sort::None;
        let mut any = false;
        let mut count: i64 = 0;
        let mut storekey: Option<&[u8]> = match how {
            Search::Geosearch { store: true } => Some(argv[1]),
            _ => None,
        };
        let mut storedist = false;
        let rest = &argv[base.min(argv.len())..];
        let remaining = rest.len();
        let mut i = 0;
        while i < remaining {
            let a = rest[i];
            if is(a, "withdist") {
                withdist = true;
            } else if is(a, "withhash") {
                withhash = true;
            } else if is(a, "withcoord") {
                withcoord = true;
            } else if is(a, "any") {
                any = true;
            } else if is(a, "asc") {
                sort = Sort::Asc;
            } else if is(a, "desc") {
                sort = Sort::Desc;
            } else if is(a, "count") && i + 1 < remaining {
                count = crate::command::args::parse_i64(rest[i + 1])?;
                if count <= 0 {
                    return Err(Error::CountNotPositive);
                }
                i += 1;
            } else if (is(a, "store") || is(a, "storedist"))
                && i + 1 < remaining
                && store_ok
                && !geosearch
            {
                storekey = Some(rest[i + 1]);
                storedist = is(a, "storedist");
                i += 1;
            } else if is(a, "storedist") && matches!(how, Search::Geosearch { store: true }) {
                storedist = true;
            } else if is(a, "frommember") && i + 1 < remaining && geosearch && !fromloc {
                if let Some(z) = z {
                    center = member_point(z, rest[i + 1])?;
                }
                frommember = true;
                i += 1;
            } else if is(a, "fromlonlat") && i + 2 < remaining && geosearch && !frommember {
                center = lon_lat(&rest[i + 1..i + 3])?;
                fromloc = true;
                i += 2;
            } else if is(a, "byradius") && i + 2 < remaining && geosearch && !bybox {
                let (r, c) = radius(&rest[i + 1..i + 3])?;
                shape = Shape::Circle(r);
                conversion = c;
                byradius = true;
                i += 2;
            } else if is(a, "bybox") && i + 3 < remaining && geosearch && !byradius {
                let (w, h, c) = bbox(&rest[i + 1..i + 4])?;
                shape = Shape::Box(w, h);
                conversion = c;
                bybox = true;
                i += 3;
            } else {
                return Err(Error::Syntax);
            }
            i += 1;
        }
        let name = String::from_utf8_lossy(argv[0]).into_owned();
        if storekey.is_some() && (withdist || withhash || withcoord) {
            return Err(Error::GeoStoreWith(if geosearch {
                "GEOSEARCHSTORE"
            } else {
                "STORE option in GEORADIUS"
            }));
        }
        if geosearch && !(frommember || fromloc) {
            return Err(Error::GeoExactlyOne(
                "FROMMEMBER or FROMLONLAT",
                name.clone(),
            ));
        }
        if geosearch && !(byradius || bybox) {
            return Err(Error::GeoExactlyOne("BYRADIUS and BYBOX", name));
        }
        if any && count == 0 {
            return Err(Error::Text("the ANY argument requires COUNT argument"));
        }
        let Some(z) = z else {
            if let Some(dst) = storekey {
                if db.remove(dst).is_some() {
                    db.notify(GENERIC, "del", dst);
                    db.changed(1, argv);
                }
                return Ok(Reply::Int(0));
            }
            return Ok(Reply::Array(Vec::new()));
        };
        if count != 0 && sort == Sort::None && !any {
            sort = Sort::Asc;
        }
        let limit = if count > 0 {
            count as usize
        } else {
            usize::MAX
        };
        // (member, score, lon, lat, distance in metres)
        let mut found: Vec<(Bytes, f64, f64, f64, f64)> = Vec::new();
        for e in z.order().iter() {
            let (lon, lat) = geo::decode(e.score);
            let d = match shape {
                Shape::Circle(r) => {
                    let d = geo::distance(center.0, center.1, lon, lat);
                    if d > r * conversion {
                        continue;
                    }
                    d
                }
                Shape::Box(w, h) => {
                    let lat_d = geo::distance(0.0, lat, 0.0, center.1);
                    if lat_d > h * conversion / 2.0 {
                        continue;
                    }
                    if geo::distance(lon, lat, center.0, lat) > w * conversion / 2.0 {
                        continue;
                    }
                    geo::distance(center.0, center.1, lon, lat)
                }
            };
            found.push((Bytes::copy_from_slice(e.member), e.score, lon, lat, d));
            if any && found.len() >= limit {
                break;
            }
        }
        match sort {
            Sort::Asc => found.sort_by(|a, b| a.4.total_cmp(&b.4)),
            Sort::Desc => found.sort_by(|a, b| b.4.total_cmp(&a.4)),
            Sort::None => {}
        }
        found.truncate(limit);
        if let Some(dst) = storekey {
            let n = found.len();
            if n == 0 {
                if db.remove(dst).is_some() {
                    db.notify(GENERIC, "del", dst);
                    db.changed(1, argv);
                }
                return Ok(Reply::Int(0));
            }
            let mut out = ZSet::new_skiplist();
            for (m, s, _, _, d) in found {
                out.insert_unchecked(if storedist { d / conversion } else { s }, m);
            }
            out.maybe_to_listpack(&snap.encoding);
            db.insert(dst, Value::ZSet(Box::new(out)));
            let event = if geosearch {
                "geosearchstore"
            } else {
                "georadiusstore"
            };
            db.notify(ZSET_EVENTS, event, dst);
            db.changed(n as u64, argv);
            return Ok(Reply::Int(n as i64));
        }
        let options = usize::from(withdist) + usize::from(withhash) + usize::from(withcoord);
        Ok(Reply::Array(
            found
                .into_iter()
                .map(|(m, s, lon, lat, d)| {
                    if options == 0 {
                        return Reply::Bulk(m);
                    }
                    let mut item = vec![Reply::Bulk(m)];
                    if withdist {
                        item.push(Reply::Bulk(Bytes::from(geo::format_distance(
                            d / conversion,
                        ))));
                    }
                    if withhash {
                        item.push(Reply::Int(s as i64));
                    }
                    if withcoord {
                        item.push(Reply::Array(vec![score::reply(lon), score::reply(lat)]));
                    }
                    Reply::Array(item)
                })
                .collect(),
        ))
    }
}
