//! Names the way people write them, as every index reads them: a word of the query this
//! memory never heard is read as a name it holds when it is a slip or two from it, or sounds
//! the same (`epimem_core::recall::read_as`). Each index says which words it holds and which of its
//! words are near one; the rule is here, once.

use epimem_core::{
    recall::{HeldAs, NameReading, in_case_of, is_calendar_word, proper_noun_spans, read_as},
    telling::is_stopword,
};

use crate::{SearchError, TailLine};

/// What an index holds, as name reading asks it.
pub trait HeldNames {
    /// The words of its speakers' names (lower case).
    fn speakers(&self) -> Vec<String>;
    /// Whether `word` (lower case) is a word of a speaker's name (an index that keeps them in
    /// a map answers without listing them).
    fn is_speaker(&self, word: &str) -> bool {
        self.speakers().iter().any(|s| s == word)
    }
    /// Whether it holds `word` (lower case) in a line or a speaker's name.
    fn holds(&self, word: &str) -> Result<bool, SearchError>;
    /// Its lines' words a slip or two (by length) from `word` (lower case), with the same
    /// first letter, the more common first. A word stemmed by the index is given as stored.
    fn near(&self, word: &str) -> Result<Vec<String>, SearchError>;
    /// `word` (lower case) as the index stores its lines' words (stemmed, say): what `near`'s
    /// words are compared with.
    fn stored(&self, word: &str) -> String {
        word.to_owned()
    }
}

/// The words of `query` this memory (the index `held`, and the lines of `tail`) never heard,
/// each with the name it is read as: a speaker's, by a slip or by sound; for a word
/// capitalized inside a sentence, a word its lines hold, by a slip, when no speaker's name is
/// near. A capitalized word near a speaker's name is read as it even when a line holds it (an
/// index stems "Melanie" to "melani"). Each word once. Most queries hold no such word: the
/// speakers are listed, and the tail's lines read, only for one that may be.
pub fn read_names(
    query: &str,
    tail: &[TailLine<'_>],
    held: &dyn HeldNames,
) -> Result<Vec<NameReading>, SearchError> {
    let tail_speakers = || {
        let mut authors: Vec<&str> = tail.iter().map(|line| line.author).collect();
        authors.sort_unstable();
        authors.dedup();
        authors.into_iter().flat_map(epimem_core::name_words).collect::<Vec<String>>()
    };
    let in_tail = |word: &str| {
        tail.iter().any(|line| {
            [line.author, line.content].iter().any(|text| {
                text.split(|c: char| !c.is_alphanumeric()).any(|w| w.eq_ignore_ascii_case(word))
            })
        })
    };
    let capitalized: Vec<String> =
        proper_noun_spans(query).into_iter().map(|(_, lower)| lower).collect();
    let mut speakers: Option<Vec<String>> = None;
    let mut readings: Vec<NameReading> = Vec::new();
    for written in query.split(|c: char| !c.is_alphanumeric()) {
        let lower = written.to_lowercase();
        if lower.chars().count() < 3
            || !written.chars().all(char::is_alphabetic)
            || is_stopword(&lower)
            || is_calendar_word(&lower)
            || readings.iter().any(|r| r.written == written)
            || held.is_speaker(&lower)
        {
            continue;
        }
        let capital = capitalized.contains(&lower);
        let heard = held.holds(&lower)? || in_tail(&lower);
        // A word in lower case the memory holds is that word.
        if heard && !capital {
            continue;
        }
        let speakers = speakers.get_or_insert_with(|| {
            let mut all = held.speakers();
            all.extend(tail_speakers());
            all.sort();
            all.dedup();
            all
        });
        if speakers.contains(&lower) {
            continue;
        }
        // A speaker first: a capitalized word a line holds may be a speaker's name as the
        // index stems it ("Melani" for "Melanie").
        let name = match read_as(&lower, speakers.iter().map(|s| (s.as_str(), HeldAs::Speaker))) {
            Some(name) => Some(name.to_owned()),
            None if capital && !heard => {
                let near = held.near(&lower)?;
                let stored = held.stored(&lower);
                read_as(&stored, near.iter().map(|w| (w.as_str(), HeldAs::Word))).map(str::to_owned)
            }
            None => None,
        };
        if let Some(name) = name {
            let read_as = in_case_of(&name, written);
            readings.push(NameReading { written: written.to_owned(), read_as });
        }
    }
    Ok(readings)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Memory;

    impl HeldNames for Memory {
        fn speakers(&self) -> Vec<String> {
            vec!["katrin".into(), "jonathan".into(), "jane".into()]
        }
        fn holds(&self, word: &str) -> Result<bool, SearchError> {
            Ok(["katrin", "jonathan", "jonatha", "jane", "flask", "paris", "said", "jun"]
                .contains(&word))
        }
        fn near(&self, word: &str) -> Result<Vec<String>, SearchError> {
            Ok(["flask", "paris", "jun"]
                .into_iter()
                .filter(|w| epimem_core::recall::slips(w, word) <= 1)
                .map(str::to_owned)
                .collect())
        }
    }

    #[test]
    fn unheard_words_are_read_as_the_names_they_slip_from() {
        let read = read_names("What did Katrina say about Flsak in Pariss?", &[], &Memory).unwrap();
        let pairs: Vec<(&str, &str)> =
            read.iter().map(|r| (r.written.as_str(), r.read_as.as_str())).collect();
        assert_eq!(pairs, [("Katrina", "Katrin"), ("Flsak", "Flask"), ("Pariss", "Paris")]);
        // A lower-case slip is read as a speaker only; a word the memory holds is no slip.
        let read =
            read_names("what did jonathon and katrin say about flsak", &[], &Memory).unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!((read[0].written.as_str(), read[0].read_as.as_str()), ("jonathon", "jonathan"));
        assert!(read_names("What did Melanie paint?", &[], &Memory).unwrap().is_empty());
        // Held as a stem of the speaker's name, capitalized: the speaker.
        let read = read_names("What did Jonatha say?", &[], &Memory).unwrap();
        assert_eq!(read[0].read_as, "Jonathan");
    }

    /// A month the memory never wrote is when, not who: "June" stays June (and the query's
    /// date with it), though a speaker "Jane" and a word "jun" are a slip away.
    #[test]
    fn months_and_weekdays_are_never_read_as_names() {
        let read = read_names("What did Katrina do in June 2023, on a Monday?", &[], &Memory);
        let pairs: Vec<(String, String)> =
            read.unwrap().into_iter().map(|r| (r.written, r.read_as)).collect();
        assert_eq!(pairs, [("Katrina".to_owned(), "Katrin".to_owned())]);
    }
}
