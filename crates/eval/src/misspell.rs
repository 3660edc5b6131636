//! Names misspelled as people misspell them: a question naming "Katrina" where she writes as
//! "Katrin". Each name a question holds gets one letter changed, swapped with the next or
//! dropped (two, far apart, in a name of eight letters or more); the first letter is kept.
//! The same question is always misspelled the same way.

use std::collections::HashSet;

use epimem_core::recall::proper_nouns;

/// The names a conversation holds, in lower case: its speakers' and the words its lines
/// capitalize inside a sentence (`proper_nouns`) and never write in lower case ("Sweden", not
/// "Identity"), of four letters or more (a shorter one misspelled is another word more often
/// than a slip).
pub(crate) fn names_held<'a>(
    speakers: impl IntoIterator<Item = &'a str>,
    lines: impl IntoIterator<Item = &'a str> + Clone,
) -> HashSet<String> {
    let mut capitalized: HashSet<String> = HashSet::new();
    for line in lines.clone() {
        capitalized.extend(proper_nouns(line));
    }
    for line in lines {
        for word in line.split(|c: char| !c.is_alphanumeric()) {
            if word.chars().next().is_some_and(char::is_lowercase) {
                capitalized.remove(word);
            }
        }
    }
    let mut names: HashSet<String> =
        speakers.into_iter().flat_map(|s| s.split_whitespace()).map(str::to_lowercase).collect();
    names.extend(capitalized);
    names.retain(|n| n.chars().count() >= 4 && n.chars().all(char::is_alphabetic));
    names
}

/// `question` with every word that is one of `names` misspelled; `None` when it holds none.
pub(crate) fn misspelled(question: &str, names: &HashSet<String>) -> Option<String> {
    let mut rng = Rng::seeded(question);
    let mut any = false;
    let out: String = question
        .split_inclusive(|c: char| !c.is_alphanumeric())
        .map(|piece| {
            let word = piece.trim_end_matches(|c: char| !c.is_alphanumeric());
            if names.contains(&word.to_lowercase()) {
                any = true;
                format!("{}{}", misspell(word, &mut rng), &piece[word.len()..])
            } else {
                piece.to_owned()
            }
        })
        .collect();
    any.then_some(out)
}

/// One slip in `word` (two in a word of eight letters or more, in its two halves), never
/// the first letter.
fn misspell(word: &str, rng: &mut Rng) -> String {
    let mut letters: Vec<char> = word.chars().collect();
    let slips: &[(usize, usize)] = match letters.len() {
        0..=1 => return word.to_owned(),
        2..=7 => &[(1, usize::MAX)],
        n => &[(n / 2, usize::MAX), (1, n / 2 - 1)],
    };
    for &(from, to) in slips {
        let to = to.min(letters.len() - 1);
        if from > to {
            continue;
        }
        let at = from + rng.below(to - from + 1);
        match rng.below(3) {
            0 => {
                let was = letters[at].to_ascii_lowercase();
                let mut letter = was;
                while letter == was {
                    letter = char::from(b'a' + rng.below(26) as u8);
                }
                letters[at] = letter;
            }
            1 if at + 1 < letters.len() && letters[at] != letters[at + 1] => {
                letters.swap(at, at + 1);
            }
            _ => {
                letters.remove(at);
            }
        }
    }
    letters.into_iter().collect()
}

/// SplitMix64, seeded by the text it misspells.
struct Rng(u64);

impl Rng {
    fn seeded(text: &str) -> Self {
        Self(xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
    }

    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edits(a: &str, b: &str) -> usize {
        epimem_core::recall::slips(a, b)
    }

    #[test]
    fn names_are_misspelled_by_a_slip_or_two_the_same_way_every_time() {
        let lines = ["We met Katrina at the Louvre in Paris.", "My Identity, my identity."];
        let names = names_held(["Caroline", "Jon"], lines);
        assert!(names.contains("caroline") && names.contains("katrina"));
        assert!(!names.contains("jon"), "too short to misspell fairly");
        assert!(!names.contains("identity"), "written in lower case too: no name");
        let question = "What did Caroline and Katrina see in Paris?";
        let once = misspelled(question, &names).unwrap();
        assert_eq!(misspelled(question, &names).unwrap(), once, "seeded by the question");
        let words: Vec<&str> = once.split(' ').collect();
        assert_ne!(words[2], "Caroline");
        assert!(words[2].starts_with('C') && (1..=2).contains(&edits(words[2], "Caroline")));
        assert!(words[4].starts_with('K') && edits(words[4], "Katrina") == 1, "{once}");
        assert!(words[7].trim_end_matches('?') != "Paris" && once.ends_with('?'));
        assert_eq!(misspelled("What did she see?", &names), None);
    }
}
