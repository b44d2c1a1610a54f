//! The multi-part AOF manifest, as Redis 7+ writes it: one line per file,
//! `file <name> seq <n> type <b|h|i>`, the base (`b`) first, then the incremental files (`i`)
//! in sequence order; history files (`h`) are listed until deleted and never loaded.
//!
//! Names follow Redis: `<appendfilename>.<seq>.base.aof` (`.base.rdb` with an RDB preamble,
//! which echomq does not write), `<appendfilename>.<seq>.incr.aof`, and the manifest
//! `<appendfilename>.manifest`, all in `<dir>/<appenddirname>`.

use crate::error::ManifestError;

/// A file's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The base: the keyspace at the last rewrite.
    Base,
    /// Commands since.
    Incr,
    /// Left over from an older rewrite, not loaded.
    History,
}

/// One manifest line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AofFile {
    pub name: String,
    pub seq: u64,
    pub kind: Kind,
}

/// The files that make the AOF.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Manifest {
    pub base: Option<AofFile>,
    pub incrs: Vec<AofFile>,
    pub history: Vec<AofFile>,
}

impl Manifest {
    /// The manifest file's name.
    pub fn file_name(appendfilename: &str) -> String {
        format!("{appendfilename}.manifest")
    }

    /// A base file's name.
    pub fn base_name(appendfilename: &str, seq: u64) -> String {
        format!("{appendfilename}.{seq}.base.aof")
    }

    /// A base file's name when it is written as RDB (`aof-use-rdb-preamble yes`).
    pub fn rdb_base_name(appendfilename: &str, seq: u64) -> String {
        format!("{appendfilename}.{seq}.base.rdb")
    }

    /// An incremental file's name.
    pub fn incr_name(appendfilename: &str, seq: u64) -> String {
        format!("{appendfilename}.{seq}.incr.aof")
    }

    /// The sequence number the next base gets.
    pub fn next_base_seq(&self) -> u64 {
        self.base.as_ref().map_or(1, |b| b.seq + 1)
    }

    /// The sequence number the next incremental file gets.
    pub fn next_incr_seq(&self) -> u64 {
        self.incrs.last().map_or(1, |f| f.seq + 1)
    }

    /// The files to load, in order: the base, then the incremental files.
    pub fn loaded(&self) -> impl Iterator<Item = &AofFile> {
        self.base.iter().chain(&self.incrs)
    }

    /// Parses a manifest, with Redis's checks and wording.
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        Manifest::parse_lines(text).map_err(|(_, e)| e)
    }

    /// [`Manifest::parse`], with the number (from 1) of the line at fault; 0 when the whole
    /// manifest is (it lists no file).
    pub fn parse_lines(text: &str) -> Result<Manifest, (usize, ManifestError)> {
        let mut manifest = Manifest::default();
        for (n, line) in text.lines().enumerate() {
            let at = |e: ManifestError| (n + 1, e);
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words = split_words(line).ok_or(at(ManifestError::InvalidFormat))?;
            let (mut name, mut seq, mut kind) = (None, None, None);
            for pair in words.chunks(2) {
                let [key, value] = pair else {
                    return Err(at(ManifestError::InvalidFormat));
                };
                match key.as_str() {
                    "file" if value.contains(['/', '\\']) => {
                        return Err(at(ManifestError::FileIsPath));
                    }
                    "file" => name = Some(value.clone()),
                    "seq" => seq = value.parse::<u64>().ok(),
                    "type" => {
                        kind = match value.as_str() {
                            "b" => Some(Kind::Base),
                            "i" => Some(Kind::Incr),
                            "h" => Some(Kind::History),
                            _ => None,
                        }
                    }
                    // Redis skips keys it does not know, for forward compatibility.
                    _ => {}
                }
            }
            let (Some(name), Some(seq), Some(kind)) = (name, seq, kind) else {
                return Err(at(ManifestError::InvalidFormat));
            };
            let file = AofFile { name, seq, kind };
            match kind {
                Kind::Base if manifest.base.is_some() => {
                    return Err(at(ManifestError::DuplicateBase));
                }
                Kind::Base => manifest.base = Some(file),
                Kind::Incr => {
                    if manifest
                        .incrs
                        .last()
                        .is_some_and(|last| last.seq >= file.seq)
                    {
                        return Err(at(ManifestError::NonMonotonicSeq));
                    }
                    manifest.incrs.push(file);
                }
                Kind::History => manifest.history.push(file),
            }
        }
        if manifest.base.is_none() && manifest.incrs.is_empty() {
            return Err((0, ManifestError::Empty));
        }
        Ok(manifest)
    }

    /// The manifest's text.
    pub fn format(&self) -> String {
        let mut out = String::new();
        let all = self.base.iter().chain(&self.history).chain(&self.incrs);
        for file in all {
            let kind = match file.kind {
                Kind::Base => "b",
                Kind::Incr => "i",
                Kind::History => "h",
            };
            out.push_str(&format!(
                "file {} seq {} type {kind}\n",
                quote(&file.name),
                file.seq
            ));
        }
        out
    }
}

/// A name as Redis writes it: bare when it has no space, quote or control byte.
fn quote(name: &str) -> String {
    if name
        .bytes()
        .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\'' && b != b'\\')
    {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}

/// Splits a manifest line into words, `"..."` quoting allowed (with `\"` and `\\`).
fn split_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else {
            return Some(words);
        };
        let mut word = String::new();
        if first == '"' {
            chars.next();
            loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => word.push(chars.next()?),
                    c => word.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                word.push(c);
                chars.next();
            }
        }
        words.push(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_formats_redis_manifests() {
        let text = "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n";
        let m = Manifest::parse(text).unwrap();
        assert_eq!(m.base.as_ref().unwrap().name, "appendonly.aof.1.base.aof");
        assert_eq!(m.incrs.len(), 1);
        assert_eq!(m.format(), text);
        assert_eq!(m.next_base_seq(), 2);
        assert_eq!(m.next_incr_seq(), 2);
    }

    #[test]
    fn refuses_bad_manifests() {
        for text in [
            "",
            "file x seq 1",
            "file x seq a type i",
            "file a seq 2 type i\nfile b seq 1 type i",
            "file a seq 1 type b\nfile b seq 2 type b",
            "file \"a seq 1 type b",
        ] {
            assert!(Manifest::parse(text).is_err(), "{text:?}");
        }
    }
}
