//! [`ObjectStore`] on S3-compatible storage through `rust-s3` (library `s3`), blocking.
//!
//! - Create-only puts send `If-None-Match: *`; 412 is [`PutOutcome::Exists`], 409 is
//!   [`PutOutcome::Conflict`], a timeout, reset or 5xx is [`PutOutcome::Unknown`].
//! - On Tigris (endpoint on `tigris.dev` or `storage.dev`, or [`S3Config::tigris`] set), fenced
//!   writes and the reads that decide a fence send `X-Tigris-Consistent: true` so they run on
//!   the bucket's leader region.
//! - rust-s3's own retries are switched off ([`s3::set_retries`]`(0)`): the fence protocol
//!   owns every retry decision, and a hidden retry of a read could sleep for seconds.
//! - Custom endpoints use path-style addressing (moto, MinIO and Tigris all accept it).

use std::env;
use std::ops::Range;
use std::time::Duration;

use http::{HeaderMap, HeaderValue};
use s3::Bucket;
use s3::creds::Credentials;
use s3::error::S3Error;
use s3::region::Region;

use super::{ObjectMeta, ObjectStore, PutOutcome};
use crate::replica::error::StoreError;

/// How long one request may take before it counts as a timeout (outcome unknown).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Tigris' header asking for leader-consistent conditional writes and reads.
pub const TIGRIS_CONSISTENT: &str = "X-Tigris-Consistent";
/// Tigris' global endpoint (region `auto`).
pub const TIGRIS_ENDPOINT: &str = "https://t3.storage.dev";
/// Bytes of an error body kept in messages.
const BODY_EXCERPT_MAX: usize = 300;

/// Where and as whom to connect.
#[derive(Clone)]
pub struct S3Config {
    /// The bucket name.
    pub bucket: String,
    /// The endpoint URL (`http://127.0.0.1:PORT`, `https://t3.storage.dev`); `None` is AWS.
    pub endpoint: Option<String>,
    /// The signing region (`auto` for Tigris).
    pub region: String,
    /// Access key id.
    pub access_key: String,
    /// Secret access key.
    pub secret_key: String,
    /// Session token for temporary credentials.
    pub session_token: Option<String>,
    /// Send `X-Tigris-Consistent: true` on fenced writes and fence reads.
    pub tigris: bool,
    /// Per-request timeout.
    pub request_timeout: Duration,
}

impl std::fmt::Debug for S3Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Config")
            .field("bucket", &self.bucket)
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("access_key", &self.access_key)
            .field("secret_key", &"<redacted>")
            .field("tigris", &self.tigris)
            .finish()
    }
}

fn env_nonempty(name: &str) -> Option<String> {
    env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl S3Config {
    /// Reads the usual variables: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_SESSION_TOKEN`, `AWS_REGION` (or `AWS_DEFAULT_REGION`), and the endpoint from
    /// `endpoint`, else `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`. The region defaults to
    /// `auto` on Tigris and `us-east-1` elsewhere.
    pub fn from_env(bucket: &str, endpoint: Option<&str>) -> Result<S3Config, StoreError> {
        let endpoint = endpoint
            .map(str::to_owned)
            .or_else(|| env_nonempty("AWS_ENDPOINT_URL_S3"))
            .or_else(|| env_nonempty("AWS_ENDPOINT_URL"));
        let tigris = endpoint.as_deref().is_some_and(is_tigris);
        let region = env_nonempty("AWS_REGION")
            .or_else(|| env_nonempty("AWS_DEFAULT_REGION"))
            .unwrap_or_else(|| if tigris { "auto" } else { "us-east-1" }.to_owned());
        let access_key = env_nonempty("AWS_ACCESS_KEY_ID").ok_or_else(|| {
            StoreError::Config(
                "AWS_ACCESS_KEY_ID is not set: export the bucket's access key".into(),
            )
        })?;
        let secret_key = env_nonempty("AWS_SECRET_ACCESS_KEY").ok_or_else(|| {
            StoreError::Config(
                "AWS_SECRET_ACCESS_KEY is not set: export the bucket's secret key".into(),
            )
        })?;
        Ok(S3Config {
            bucket: bucket.to_owned(),
            endpoint,
            region,
            access_key,
            secret_key,
            session_token: env_nonempty("AWS_SESSION_TOKEN"),
            tigris,
            request_timeout: REQUEST_TIMEOUT,
        })
    }
}

/// Whether an endpoint is Tigris'.
pub fn is_tigris(endpoint: &str) -> bool {
    let host = endpoint
        .split("://")
        .nth(1)
        .unwrap_or(endpoint)
        .split(['/', ':'])
        .next()
        .unwrap_or("");
    host.ends_with("tigris.dev") || host.ends_with("storage.dev")
}

/// An S3 bucket.
#[derive(Clone)]
pub struct S3Store {
    /// Plain requests.
    bucket: Box<Bucket>,
    /// Requests that must see the latest state (Tigris: with the consistency header).
    strong: Box<Bucket>,
    config: S3Config,
}

impl std::fmt::Debug for S3Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Store")
            .field("config", &self.config)
            .finish()
    }
}

impl S3Store {
    /// A handle on the bucket; sends no request.
    pub fn new(config: S3Config) -> Result<S3Store, StoreError> {
        s3::set_retries(0);
        if config.bucket.len() < 3 {
            return Err(StoreError::Config(format!(
                "bucket name {:?} is too short (S3 needs at least 3 characters)",
                config.bucket
            )));
        }
        let region = match &config.endpoint {
            Some(endpoint) => {
                if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
                    return Err(StoreError::Config(format!(
                        "endpoint {endpoint:?} must start with http:// or https://"
                    )));
                }
                Region::Custom {
                    region: config.region.clone(),
                    endpoint: endpoint.trim_end_matches('/').to_owned(),
                }
            }
            None => config
                .region
                .parse()
                .map_err(|e| StoreError::Config(format!("region {:?}: {e}", config.region)))?,
        };
        let credentials = Credentials::new(
            Some(&config.access_key),
            Some(&config.secret_key),
            None,
            config.session_token.as_deref(),
            None,
        )
        .map_err(|e| StoreError::Config(format!("credentials: {e}")))?;
        let bucket = Bucket::new(&config.bucket, region, credentials)
            .map_err(|e| StoreError::Config(format!("bucket {}: {e}", config.bucket)))?;
        let mut bucket = if config.endpoint.is_some() {
            bucket.with_path_style()
        } else {
            bucket
        };
        bucket.set_request_timeout(Some(config.request_timeout));
        let mut strong = bucket.clone();
        if config.tigris {
            strong.add_header(TIGRIS_CONSISTENT, "true");
        }
        Ok(S3Store {
            bucket,
            strong,
            config,
        })
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &S3Config {
        &self.config
    }

    /// Creates the bucket (tests and first-time setup); an existing bucket owned by the same
    /// account is fine. rust-s3 always sends a LocationConstraint, which S3 (and moto) refuse
    /// for `us-east-1`: create buckets there with another tool.
    pub fn create_bucket(&self) -> Result<(), StoreError> {
        let response = Bucket::create_with_path_style(
            &self.config.bucket,
            self.bucket.region(),
            self.bucket
                .credentials()
                .map_err(|e| StoreError::Config(format!("credentials: {e}")))?,
            s3::BucketConfiguration::default(),
        )
        .map_err(|e| self.transport(&self.config.bucket, e))?;
        let status = response.response_code;
        let already_ours =
            status == 409 && response.response_text.contains("BucketAlreadyOwnedByYou");
        if (200..=299).contains(&status) || already_ours {
            Ok(())
        } else {
            Err(self.status_error(&self.config.bucket, status, &response.response_text))
        }
    }

    fn endpoint(&self) -> String {
        self.config
            .endpoint
            .clone()
            .unwrap_or_else(|| format!("AWS {}", self.config.region))
    }

    fn full(&self, key: &str) -> String {
        format!("s3://{}/{key}", self.config.bucket)
    }

    /// An error the HTTP layer raised before any status arrived.
    fn transport(&self, key: &str, error: S3Error) -> StoreError {
        match &error {
            S3Error::Atto(inner) => {
                let reached = match inner.kind() {
                    attohttpc::ErrorKind::Io(io) => {
                        !matches!(
                            io.kind(),
                            std::io::ErrorKind::ConnectionRefused
                                | std::io::ErrorKind::AddrNotAvailable
                                | std::io::ErrorKind::NetworkUnreachable
                                | std::io::ErrorKind::HostUnreachable
                                | std::io::ErrorKind::NotFound
                        ) && !io.to_string().contains("failed to lookup address")
                    }
                    attohttpc::ErrorKind::ConnectNotSupported
                    | attohttpc::ErrorKind::InvalidBaseUrl
                    | attohttpc::ErrorKind::InvalidUrlHost
                    | attohttpc::ErrorKind::InvalidUrlPort => false,
                    _ => true,
                };
                if reached {
                    StoreError::Transient {
                        key: self.full(key),
                        reason: error.to_string(),
                    }
                } else {
                    StoreError::Unreachable {
                        endpoint: self.endpoint(),
                        key: self.full(key),
                        reason: error.to_string(),
                    }
                }
            }
            S3Error::Io(_) => StoreError::Transient {
                key: self.full(key),
                reason: error.to_string(),
            },
            _ => StoreError::Config(format!("{}: {error}", self.full(key))),
        }
    }

    /// An error for a non-2xx status (404 is handled by callers that accept absence).
    fn status_error(&self, key: &str, status: u16, body: &str) -> StoreError {
        match status {
            401 | 403 => StoreError::Unauthorized {
                key: self.full(key),
                status,
            },
            404 if body.contains("NoSuchBucket") => StoreError::NoSuchBucket {
                bucket: self.config.bucket.clone(),
                endpoint: self.endpoint(),
            },
            408 | 429 | 500..=599 => StoreError::Transient {
                key: self.full(key),
                reason: format!("HTTP {status}"),
            },
            _ => StoreError::Rejected {
                key: self.full(key),
                status,
                body: excerpt(body),
            },
        }
    }

    fn pick(&self, strong: bool) -> &Bucket {
        if strong { &self.strong } else { &self.bucket }
    }

    /// A GET-like request's outcome: bytes, `None` for a missing key, or an error.
    fn read(
        &self,
        key: &str,
        result: Result<s3::request::ResponseData, S3Error>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let response = result.map_err(|e| self.transport(key, e))?;
        let status = response.status_code();
        match status {
            200..=299 => Ok(Some(response.to_vec())),
            // 416: a range past the end of a non-empty object.
            416 => Ok(Some(Vec::new())),
            404 => {
                let body = String::from_utf8_lossy(response.as_slice()).into_owned();
                if body.contains("NoSuchBucket") {
                    Err(self.status_error(key, status, &body))
                } else {
                    Ok(None)
                }
            }
            _ => Err(self.status_error(key, status, &String::from_utf8_lossy(response.as_slice()))),
        }
    }
}

fn excerpt(body: &str) -> String {
    let mut end = body.len().min(BODY_EXCERPT_MAX);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    body.get(..end).unwrap_or_default().trim().to_owned()
}

impl ObjectStore for S3Store {
    fn put_if_absent(
        &self,
        key: &str,
        body: &[u8],
        strong: bool,
    ) -> Result<PutOutcome, StoreError> {
        let mut headers = HeaderMap::new();
        headers.insert("If-None-Match", HeaderValue::from_static("*"));
        if strong && self.config.tigris {
            headers.insert(TIGRIS_CONSISTENT, HeaderValue::from_static("true"));
        }
        let response = match self
            .bucket
            .put_object_with_headers(key, body, Some(headers))
        {
            Ok(response) => response,
            Err(e) => {
                return match self.transport(key, e) {
                    StoreError::Transient { reason, .. } => Ok(PutOutcome::Unknown(reason)),
                    other => Err(other),
                };
            }
        };
        match response.status_code() {
            200..=299 => Ok(PutOutcome::Created),
            412 => Ok(PutOutcome::Exists),
            409 => Ok(PutOutcome::Conflict),
            status @ (408 | 429 | 500..=599) => Ok(PutOutcome::Unknown(format!("HTTP {status}"))),
            // rust-s3 hands back a PUT's ETag in place of its body; a PUT can only miss the
            // bucket.
            404 => Err(self.status_error(key, 404, "NoSuchBucket")),
            status => {
                Err(self.status_error(key, status, &String::from_utf8_lossy(response.as_slice())))
            }
        }
    }

    fn put(&self, key: &str, body: &[u8]) -> Result<(), StoreError> {
        let response = self
            .bucket
            .put_object(key, body)
            .map_err(|e| self.transport(key, e))?;
        match response.status_code() {
            200..=299 => Ok(()),
            404 => Err(self.status_error(key, 404, "NoSuchBucket")),
            status => {
                Err(self.status_error(key, status, &String::from_utf8_lossy(response.as_slice())))
            }
        }
    }

    fn get(&self, key: &str, strong: bool) -> Result<Option<Vec<u8>>, StoreError> {
        self.read(key, self.pick(strong).get_object(key))
    }

    fn get_range(&self, key: &str, range: Range<u64>) -> Result<Option<Vec<u8>>, StoreError> {
        if range.start >= range.end {
            // rust-s3 asserts start <= end; an empty range needs no request but must still
            // tell a missing object apart.
            return Ok(self.head(key, false)?.map(|_| Vec::new()));
        }
        self.read(
            key,
            self.bucket
                .get_object_range(key, range.start, Some(range.end - 1)),
        )
    }

    fn head(&self, key: &str, strong: bool) -> Result<Option<ObjectMeta>, StoreError> {
        let (head, status) = self
            .pick(strong)
            .head_object(key)
            .map_err(|e| self.transport(key, e))?;
        match status {
            200..=299 => Ok(Some(ObjectMeta {
                key: key.to_owned(),
                len: head
                    .content_length
                    .and_then(|len| u64::try_from(len).ok())
                    .unwrap_or(0),
            })),
            // A HEAD has no body to tell a missing bucket from a missing key.
            404 => Ok(None),
            status => Err(self.status_error(key, status, "")),
        }
    }

    fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ObjectMeta>, StoreError> {
        let mut out = Vec::new();
        let mut token = None;
        let mut after = start_after.map(str::to_owned);
        while out.len() < limit {
            let page = self.bucket.list_page(
                prefix.to_owned(),
                None,
                token.take(),
                after.take(),
                Some((limit - out.len()).min(1000)),
            );
            let (result, status) = match page {
                Ok(page) => page,
                // A refusal comes back as an XML error body that does not parse as a listing;
                // ask again with a GET of the prefix to learn the status.
                Err(S3Error::SerdeXml(_)) => {
                    return Err(match self.bucket.get_object(prefix) {
                        Ok(r) => self.status_error(
                            prefix,
                            r.status_code(),
                            &String::from_utf8_lossy(r.as_slice()),
                        ),
                        Err(e) => self.transport(prefix, e),
                    });
                }
                Err(e) => return Err(self.transport(prefix, e)),
            };
            if !(200..=299).contains(&status) {
                return Err(self.status_error(prefix, status, ""));
            }
            out.extend(result.contents.into_iter().map(|o| ObjectMeta {
                key: o.key,
                len: o.size,
            }));
            match result.next_continuation_token {
                Some(next) if result.is_truncated => token = Some(next),
                _ => break,
            }
        }
        out.truncate(limit);
        Ok(out)
    }

    fn describe(&self) -> String {
        format!("s3://{} at {}", self.config.bucket, self.endpoint())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tigris_endpoints_are_recognised() {
        assert!(is_tigris("https://t3.storage.dev"));
        assert!(is_tigris("https://fly.storage.tigris.dev/"));
        assert!(!is_tigris("http://127.0.0.1:9000"));
        assert!(!is_tigris("https://s3.amazonaws.com"));
    }

    #[test]
    fn tigris_gets_the_consistency_header_on_strong_requests_only() {
        let config = S3Config {
            bucket: "fence".into(),
            endpoint: Some(TIGRIS_ENDPOINT.into()),
            region: "auto".into(),
            access_key: "tid_x".into(),
            secret_key: "tsec_y".into(),
            session_token: None,
            tigris: true,
            request_timeout: REQUEST_TIMEOUT,
        };
        let store = S3Store::new(config.clone()).unwrap();
        assert_eq!(
            store
                .strong
                .extra_headers()
                .get(TIGRIS_CONSISTENT)
                .map(|v| v.as_bytes()),
            Some(&b"true"[..])
        );
        assert!(
            store
                .bucket
                .extra_headers()
                .get(TIGRIS_CONSISTENT)
                .is_none()
        );
        assert!(store.bucket.is_path_style());
        let plain = S3Store::new(S3Config {
            tigris: false,
            ..config
        })
        .unwrap();
        assert!(
            plain
                .strong
                .extra_headers()
                .get(TIGRIS_CONSISTENT)
                .is_none()
        );
    }

    #[test]
    fn bad_configuration_is_refused_before_any_request() {
        let config = S3Config {
            bucket: "ok-bucket".into(),
            endpoint: Some("ftp://x".into()),
            region: "us-east-1".into(),
            access_key: "a".into(),
            secret_key: "b".into(),
            session_token: None,
            tigris: false,
            request_timeout: REQUEST_TIMEOUT,
        };
        assert!(matches!(
            S3Store::new(config.clone()),
            Err(StoreError::Config(_))
        ));
        let short = S3Config {
            bucket: "x".into(),
            endpoint: Some("http://127.0.0.1:1".into()),
            ..config
        };
        assert!(matches!(S3Store::new(short), Err(StoreError::Config(_))));
    }

    #[test]
    fn an_unreachable_endpoint_is_a_typed_error_naming_it() {
        let config = S3Config {
            bucket: "bucket".into(),
            // Port 1 on loopback: nothing listens, the connection is refused at once.
            endpoint: Some("http://127.0.0.1:1".into()),
            region: "us-east-1".into(),
            access_key: "a".into(),
            secret_key: "b".into(),
            session_token: None,
            tigris: false,
            request_timeout: Duration::from_secs(5),
        };
        let store = S3Store::new(config).unwrap();
        match store.get("commits/00000000000000000001", true) {
            Err(StoreError::Unreachable { endpoint, key, .. }) => {
                assert_eq!(endpoint, "http://127.0.0.1:1");
                assert!(key.contains("commits/00000000000000000001"));
            }
            other => panic!("expected Unreachable, got {other:?}"),
        }
    }
}
