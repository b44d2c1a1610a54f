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
use crate::reply::Reply;
use crate::types::zset::{geo, score};

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
