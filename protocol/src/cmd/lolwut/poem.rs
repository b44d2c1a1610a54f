//! LOLWUT 8: a stanza after Nanni Balestrini's *Tape Mark I* (1961), the poem an IBM 7090
//! composed from verses of three texts, as the Almanacco Letterario Bompiani (1962) describes
//! the algorithm.
//!
//! `LOLWUT [IT]`: the verses in English, or with `IT` in Balestrini's Italian. The verses are
//! shuffled; then each next verse is the first remaining one whose first metrical fraction
//! meets the previous verse's second and that comes from another text, until ten verses or
//! none fits. The stanza is upper-cased, its `/` metrical marks blanked.

/// One verse: its English and Italian texts, its two metrical fractions (`n/d`), and the text
/// it comes from (1: Michihito Hachiya's *Diary of Hiroshima*, 2: Paul Goldwin's *The Mystery
/// of the Elevator*, 3: Lao Tse's *Tao Te Ching*).
struct Verse {
    en: &'static str,
    it: &'static str,
    first: &'static [u8; 3],
    second: &'static [u8; 3],
    source: u8,
}

const fn verse(
    en: &'static str,
    it: &'static str,
    first: &'static [u8; 3],
    second: &'static [u8; 3],
    source: u8,
) -> Verse {
    Verse {
        en,
        it,
        first,
        second,
        source,
    }
}

/// The verses, in Redis's order (the shuffle starts from it).
#[rustfmt::skip]
const VERSES: [Verse; 15] = [
    verse(" The blinding / globe / of fire ", " l accecante   /  globo  /  di fuoco  ", b"1/4", b"2/3", 1),
    verse(" It expands / rapidly ", " si espande   /  rapidamente  ", b"1/2", b"3/4", 1),
    verse(" Thirty times / brighter / than the sun ", " trenta volte  / piu luminoso  / del sole ", b"2/3", b"2/4", 1),
    verse(" When it reaches / the stratosphere ", " quando  raggiunge / la stratosfera  ", b"3/4", b"1/2", 1),
    verse(" The summit / of the cloud ", " la  sommita  /  della nuvola ", b"1/3", b"2/3", 1),
    verse(" Assumes / the well-known shape / of a mushroom ", " assume   / la ben nota forma  / di fungo ", b"2/4", b"3/4", 1),
    verse(" The head / pressed / upon the shoulder ", " la testa / premuta  / sulla spalla  ", b"1/4", b"2/4", 2),
    verse(" The hair / between the lips ", " i  capelli   /  tra le labbra ", b"1/4", b"2/4", 2),
    verse(" They lay / motionless / without speaking ", " giacquero  /   immobili / senza parlare ", b"2/3", b"2/3", 2),
    verse(" Till he moved / his fingers / slowly ", " finche non mosse  /  le dita  / lentamente    ", b"3/4", b"1/3", 2),
    verse(" Trying / to grasp ", " cercando / di afferrare  ", b"3/4", b"1/2", 2),
    verse(" While the multitude / of things / comes into being ", " mentre la moltitudine  /  delle cose  /   accade   ", b"1/2", b"1/2", 3),
    verse(" I envisage / their return ", " io contemplo  /  il loro ritorno    ", b"2/3", b"3/4", 3),
    verse(" Although / things / flourish ", " malgrado / che le cose  /  fioriscano    ", b"1/2", b"2/3", 3),
    verse(" They all return / to / their roots ", " esse tornano  / tutte    / alla loro radice   ", b"2/3", b"1/4", 3),
];

/// The most verses a stanza has.
const STANZA_VERSES_MAX: usize = 10;

/// What follows the stanza, before the version.
const AFTERWORD: &str = "\nIn 1961, Nanni Balestrini created one of the first computer-generated \
poems, TAPE MARK I, using an IBM 7090 mainframe. Each execution combined verses from three \
literary sources following algorithmic rules based on metrical compatibility and group \
constraints. This LOLWUT command reproduces Balestrini's original algorithm, generating new \
stanzas through the same computational poetry process described in Almanacco Letterario \
Bompiani, 1962.\n\nhttps://en.wikipedia.org/wiki/Digital_poetry\n\
https://www.youtube.com/watch?v=8i7uFCK7G0o (English subs)\n\n\
Use: LOLWUT IT for the original Italian output. Redis ver. ";

pub(super) fn run(args: &[&[u8]]) -> Vec<u8> {
    let italian = args.first().is_some_and(|a| super::is(a, "it"));
    let mut text = Vec::new();
    for verse in stanza(&mut super::Rand::new()) {
        let line = if italian { verse.it } else { verse.en };
        text.extend(line.bytes().map(|b| match b {
            b'/' => b' ',
            b => b.to_ascii_uppercase(),
        }));
        text.push(b'\n');
    }
    text.extend_from_slice(AFTERWORD.as_bytes());
    text.extend_from_slice(crate::REDIS_VERSION.as_bytes());
    text.push(b'\n');
    text
}

/// Whether `next` may follow `previous`: its first fraction's numerator meets the previous
/// verse's second numerator, or its denominator meets either part of it, and it comes from
/// another text.
fn follows(next: &Verse, previous: &Verse) -> bool {
    let (n, p) = (next.first, previous.second);
    (n[0] == p[0] || n[2] == p[0] || n[2] == p[2]) && next.source != previous.source
}

/// A stanza from a shuffle of the verses (Fisher–Yates, from the last place down).
fn stanza(rand: &mut super::Rand) -> Vec<&'static Verse> {
    let mut left: Vec<&Verse> = VERSES.iter().collect();
    for i in (1..left.len()).rev() {
        let j = rand.next() as usize % (i + 1);
        left.swap(i, j);
    }
    let mut stanza: Vec<&Verse> = Vec::with_capacity(STANZA_VERSES_MAX);
    while stanza.len() < STANZA_VERSES_MAX {
        let found = left
            .iter()
            .position(|v| stanza.last().is_none_or(|previous| follows(v, previous)));
        match found {
            Some(i) => stanza.push(left.remove(i)),
            None => break,
        }
    }
    stanza
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stanzas_chain_verses_of_alternating_texts() {
        let mut rand = super::super::Rand::new();
        for _ in 0..200 {
            let stanza = stanza(&mut rand);
            assert!(!stanza.is_empty() && stanza.len() <= STANZA_VERSES_MAX);
            for pair in stanza.windows(2) {
                assert!(follows(pair[1], pair[0]));
            }
        }
    }
}
