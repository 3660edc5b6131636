//! Names the way people write them. In real chats a name is misspelled all the time: a
//! question naming "Katrina" where she writes as "Katrin", "Jonathon" for "Jonathan", "Geoff"
//! for "Jeff". A written name this memory never heard is read as a name it holds when it is a
//! slip or two away (by its length) or sounds the same. Pure: the search index says which
//! names it holds; this says which one a written word is.

use serde::Serialize;

/// A word of the query read as a name the memory holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NameReading {
    /// As the query wrote it.
    pub written: String,
    /// The name it was read as, in the query's case.
    pub read_as: String,
}

/// Where a name the memory holds comes from: who spoke, or what a line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldAs {
    /// A word of a speaker's name: read by a slip or by sound.
    Speaker,
    /// A word a line holds: read by a slip only, its first letter the same (a line holds
    /// thousands of words, and many sound alike).
    Word,
}

/// Slips (letters changed, added, dropped or swapped with the next) a name of `letters`
/// letters may hold and still be read as another: none under four letters (a slip makes
/// another name there), one up to seven, two from eight.
pub fn slips_allowed(letters: usize) -> usize {
    match letters {
        0..=3 => 0,
        4..=7 => 1,
        _ => 2,
    }
}

/// Letters changed, added, dropped or swapped with the next between `a` and `b`, in any case
/// (optimal string alignment).
pub fn slips(a: &str, b: &str) -> usize {
    strsim::osa_distance(&a.to_lowercase(), &b.to_lowercase())
}

/// Whether `a` and `b` sound the same (Double Metaphone: a code in common, of two sounds or
/// more, and not too far apart in letters: "Geoff" and "Jeff", "Stephen" and "Steven").
pub(crate) fn sound_alike(a: &str, b: &str) -> bool {
    // English sounds of English letters: the encoder slices its input by bytes, and panics
    // inside a letter of more than one ("Café").
    if !a.chars().chain(b.chars()).all(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    let encoder = rphonetic::DoubleMetaphone::default();
    let codes = |w: &str| {
        let r = encoder.double_metaphone(w);
        [r.primary(), r.alternate()]
    };
    let (ca, cb) = (codes(a), codes(b));
    let shared = ca.iter().any(|c| c.chars().count() >= 2 && cb.contains(c));
    shared && slips(a, b) <= a.chars().count().max(b.chars().count()) / 2
}

/// The name of `held` that `written` reads as, if any: the fewest slips within
/// [`slips_allowed`] of the longer of the two (a [`HeldAs::Word`] only with the same first
/// letter; a written word of three letters or more), else a speaker's name that sounds the
/// same; among equals, the first given (give the more common first).
/// A word the memory holds as it is written is no slip: the caller asks only of unheard ones.
pub fn read_as<'a>(
    written: &str,
    held: impl IntoIterator<Item = (&'a str, HeldAs)>,
) -> Option<&'a str> {
    let letters = written.chars().count();
    let first = written.chars().next().map(|c| c.to_lowercase().collect::<String>());
    let mut best: Option<(usize, &str)> = None;
    let mut by_sound: Option<&str> = None;
    for (name, held_as) in held {
        if name.eq_ignore_ascii_case(written) {
            continue;
        }
        let n = slips(written, name);
        // A slip may have dropped a letter: the longer spelling says how many are allowed.
        let allowed = slips_allowed(letters.max(name.chars().count()));
        let same_first = name.chars().next().map(|c| c.to_lowercase().collect::<String>()) == first;
        if n <= allowed
            && letters >= 3
            && (held_as == HeldAs::Speaker || same_first)
            && best.is_none_or(|(b, _)| n < b)
        {
            best = Some((n, name));
        }
        if held_as == HeldAs::Speaker && by_sound.is_none() && sound_alike(written, name) {
            by_sound = Some(name);
        }
    }
    best.map(|(_, name)| name).or(by_sound)
}

/// `name` written in the case of `like`: capitalized when it is, else as held.
pub fn in_case_of(name: &str, like: &str) -> String {
    let capital = like.chars().next().is_some_and(char::is_uppercase);
    let mut chars = name.chars();
    match (capital, chars.next()) {
        (true, Some(c)) => c.to_uppercase().chain(chars).collect(),
        _ => name.to_owned(),
    }
}

/// `text` with each reading's written word replaced by what it was read as (whole words).
pub fn reread(text: &str, readings: &[NameReading]) -> String {
    if readings.is_empty() {
        return text.to_owned();
    }
    text.split_inclusive(|c: char| !c.is_alphanumeric())
        .map(|piece| {
            let word = piece.trim_end_matches(|c: char| !c.is_alphanumeric());
            match readings.iter().find(|r| r.written == word) {
                Some(r) => format!("{}{}", r.read_as, &piece[word.len()..]),
                None => piece.to_owned(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEAKERS: [(&str, HeldAs); 4] = [
        ("katrin", HeldAs::Speaker),
        ("jonathan", HeldAs::Speaker),
        ("jeff", HeldAs::Speaker),
        ("steven", HeldAs::Speaker),
    ];

    #[test]
    fn a_slip_or_a_sound_reads_as_the_name() {
        assert_eq!(read_as("Katrina", SPEAKERS), Some("katrin"), "a letter added");
        assert_eq!(read_as("Jonathon", SPEAKERS), Some("jonathan"), "a letter changed");
        assert_eq!(read_as("Jonahtan", SPEAKERS), Some("jonathan"), "two swapped");
        assert_eq!(read_as("Jnathan", SPEAKERS), Some("jonathan"), "a letter dropped");
        assert_eq!(read_as("Geoff", SPEAKERS), Some("jeff"), "the same sound");
        assert_eq!(read_as("Stephen", SPEAKERS), Some("steven"), "the same sound");
        assert_eq!(read_as("Melanie", SPEAKERS), None, "someone else");
        assert_eq!(read_as("Jef", SPEAKERS), Some("jeff"), "a letter dropped from a short name");
        assert_eq!(read_as("Je", SPEAKERS), None, "too short to tell a slip");
        assert_eq!(read_as("Katrin", SPEAKERS), None, "held as written: no slip");
        assert_eq!(read_as("Café", [("cafe", HeldAs::Speaker)]), Some("cafe"), "a slip, no sound");
        assert!(!sound_alike("Café", "Kafe") && !sound_alike("Zoë", "Zoe"));
    }

    #[test]
    fn longer_names_may_hold_two_slips_and_words_keep_their_first_letter() {
        let words = [("postgresql", HeldAs::Word), ("flask", HeldAs::Word)];
        assert_eq!(read_as("Postgersql", words), Some("postgresql"));
        assert_eq!(read_as("Postgrsqll", words), Some("postgresql"), "two slips in ten letters");
        assert_eq!(read_as("Flsak", words), Some("flask"));
        assert_eq!(read_as("Glask", words), None, "a word's first letter is kept");
        assert_eq!(read_as("Flaskk", [("flask", HeldAs::Speaker)]), Some("flask"));
        assert_eq!(read_as("Phlask", words), None, "no sound for a line's words");
    }

    #[test]
    fn the_fewest_slips_win() {
        let held = [("marian", HeldAs::Speaker), ("maria", HeldAs::Speaker)];
        assert_eq!(read_as("Mariia", held), Some("maria"), "one slip from Maria, two from Marian");
        assert_eq!(read_as("Mariaa", held), Some("marian"), "equals: the first given");
    }

    #[test]
    fn a_query_is_read_again_with_its_names() {
        let readings = [NameReading { written: "Katrina".into(), read_as: "Katrin".into() }];
        assert_eq!(
            reread("Did Katrina's cat, Katrinas, eat?", &readings),
            "Did Katrin's cat, Katrinas, eat?"
        );
        assert_eq!(in_case_of("katrin", "Katrina"), "Katrin");
        assert_eq!(in_case_of("katrin", "katrina"), "katrin");
    }
}
