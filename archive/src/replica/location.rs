//! `s3://bucket/prefix` as given on the command line.

use std::fmt;
use std::str::FromStr;

/// A bucket and a key prefix inside it (no leading or trailing slash; may be empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// Bucket name.
    pub bucket: String,
    /// Key prefix every object of the replica lives under.
    pub prefix: String,
}

/// Why a location did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a replica location ({why}): write s3://BUCKET/PREFIX")]
pub struct LocationError {
    input: String,
    why: &'static str,
}

impl FromStr for Location {
    type Err = LocationError;

    fn from_str(input: &str) -> Result<Location, LocationError> {
        let err = |why| LocationError {
            input: input.to_owned(),
            why,
        };
        let rest = input.strip_prefix("s3://").ok_or(err("no s3:// scheme"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.';
        if bucket.len() < 3 || bucket.len() > 63 || !bucket.chars().all(valid) {
            return Err(err(
                "bucket names are 3-63 characters of a-z, 0-9, '-' and '.'",
            ));
        }
        let prefix = prefix.trim_matches('/');
        if prefix.split('/').any(|part| part == "." || part == "..") || prefix.contains("//") {
            return Err(err("prefix segments may not be empty, '.' or '..'"));
        }
        Ok(Location {
            bucket: bucket.to_owned(),
            prefix: prefix.to_owned(),
        })
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bucket_and_prefix() {
        let l: Location = "s3://my-bucket/a/b/".parse().unwrap();
        assert_eq!((l.bucket.as_str(), l.prefix.as_str()), ("my-bucket", "a/b"));
        let l: Location = "s3://my-bucket".parse().unwrap();
        assert_eq!(l.prefix, "");
        for bad in [
            "my-bucket/x",
            "s3://UP/x",
            "s3://ab/x",
            "s3://ok-b/../x",
            "s3://ok-b/a//b",
        ] {
            assert!(bad.parse::<Location>().is_err(), "{bad}");
        }
    }
}
