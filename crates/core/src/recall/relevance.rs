//! Whether what recall found bears on the query at all, and which of its lines a block
//! takes. Pure: the search index supplies each line's scores and the scale they are read
//! against; this decides.
//!
//! A line's relevance is the probability that it bears on the query, read two ways, each a
//! logistic model fitted on the tuning parts of every set at once (`epimem eval
//! fit-relevance`; docs/benchmarks.md):
//!
//! - **Words.** The line's BM25 over what a line holding every weighed word of the query would
//!   score (`TurnTable::lexical_ceiling`: each word weighted by its rarity in the tenant, a date
//!   the query names left out, each named author's score in), less for a long line, which
//!   holds a share of any query's words by chance (BEAM's 300-word replies held a quarter of
//!   a new task's words as often as a question's answer did). It reads a tenant of one
//!   message as well as one of millions: the scale is that tenant's own. A question names what
//!   it asks about, so its words find it.
//! - **Meaning.** How far the line's cosine to the query stands above the scope's other lines
//!   (the tenth best); more when the query is a person speaking of themselves ("I'm performing
//!   at the party tonight"), less when it asks or runs long. A conversation only implies what
//!   it is about: its words rarely meet the memory's, its meaning does. The raw cosine is no
//!   input: a technical chat is close to every technical prompt, a large memory holds a close
//!   line by chance, and neither says the line bears.
//!
//! A line's relevance is the higher of the two. A block speaks when one of its lines reaches
//! `speak`, and takes the lines, best ranked first, whose relevance reaches `take`. Two hand
//! rules stay, because they hold on every set: a query naming people none of whom spoke in the
//! scope, or something no line of the tenant holds (after misspelled names are read as the
//! names they slip from), asks about what this memory does not know.

use serde::{Deserialize, Serialize};

/// The words channel's inputs, in the order of [`Logistic::weights`].
pub const WORDS_FEATURES: [&str; 2] = ["share", "long"];
/// The meaning channel's inputs, in the order of [`Logistic::weights`].
pub const MEANING_FEATURES: [&str; 4] = ["standing", "speaks_of_self", "asks", "length"];

/// The sign each input's weight may take, by its principle (`+1` raises relevance, `-1`
/// lowers it): a fit that gives one the other sign leaves it out.
pub const WORDS_SIGNS: [i8; 2] = [1, -1];
pub const MEANING_SIGNS: [i8; 4] = [1, 1, -1, -1];

/// A logistic model over `N` inputs: `bias + Σ weights[i] · x[i]`, through the logistic
/// function.
pub trait Logistic<const N: usize> {
    fn bias(&self) -> f64;
    fn weights(&self) -> [f64; N];
    /// The model with these weights.
    fn with(bias: f64, weights: [f64; N]) -> Self;

    /// The log-odds of `x`.
    fn logit(&self, x: &[f64; N]) -> f64 {
        self.bias() + self.weights().iter().zip(x).map(|(w, v)| w * v).sum::<f64>()
    }
}

/// The words channel's weights ([`WORDS_FEATURES`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WordsWeights {
    pub bias: f64,
    pub share: f64,
    pub long: f64,
}

impl Logistic<2> for WordsWeights {
    fn bias(&self) -> f64 {
        self.bias
    }
    fn weights(&self) -> [f64; 2] {
        [self.share, self.long]
    }
    fn with(bias: f64, [share, long]: [f64; 2]) -> Self {
        Self { bias, share, long }
    }
}

/// The meaning channel's weights ([`MEANING_FEATURES`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeaningWeights {
    pub bias: f64,
    pub standing: f64,
    pub speaks_of_self: f64,
    pub asks: f64,
    pub length: f64,
}

impl Logistic<4> for MeaningWeights {
    fn bias(&self) -> f64 {
        self.bias
    }
    fn weights(&self) -> [f64; 4] {
        [self.standing, self.speaks_of_self, self.asks, self.length]
    }
    fn with(bias: f64, [standing, speaks_of_self, asks, length]: [f64; 4]) -> Self {
        Self { bias, standing, speaks_of_self, asks, length }
    }
}

/// How a block is judged (`[relevance]`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RelevanceConfig {
    /// Judge at all: without it a block fills its budget with the best lines, whatever
    /// they are (the behaviour before relevance was judged).
    pub judge: bool,
    /// A block is made when one of its lines' relevance reaches this...
    pub speak: f64,
    /// ...and takes, best ranked first, the lines whose relevance reaches this and whose
    /// ranking score is at least `stop_below` of the best line's (the budget is a ceiling,
    /// not a target)...
    pub take: f64,
    pub stop_below: f64,
    /// ...and the best ranked `at_least` whatever they are (in a small memory scores are
    /// far apart), and of the best ranked `beside` those of an episode one of whose lines
    /// reaches `speak` (an answer is often a line beside the one that matched; a line of
    /// another memory comes only if it bears itself).
    pub at_least: usize,
    pub beside: usize,
    /// The words channel (`epimem eval fit-relevance` prints both).
    pub words: WordsWeights,
    /// The meaning channel.
    pub meaning: MeaningWeights,
}

impl Default for RelevanceConfig {
    fn default() -> Self {
        Self {
            judge: true,
            speak: 0.45,
            take: 0.1,
            stop_below: 0.5,
            at_least: 2,
            beside: 8,
            words: WordsWeights::with(-1.759, [9.824, -0.909]),
            meaning: MeaningWeights::with(-4.937, [26.066, 4.917, -2.263, -0.853]),
        }
    }
}

impl RelevanceConfig {
    /// A block that fills its budget, as before relevance was judged.
    pub const FILL: Self = Self {
        judge: false,
        speak: 0.0,
        take: 0.0,
        stop_below: 0.0,
        at_least: 0,
        beside: 0,
        words: WordsWeights { bias: 0.0, share: 0.0, long: 0.0 },
        meaning: MeaningWeights {
            bias: 0.0,
            standing: 0.0,
            speaks_of_self: 0.0,
            asks: 0.0,
            length: 0.0,
        },
    };

    /// Whether the thresholds are probabilities, and `take` is no stricter than `speak`.
    pub fn check(&self) -> Result<(), String> {
        for (name, value) in [("speak", self.speak), ("take", self.take)] {
            if !(0.0..=1.0).contains(&value) {
                return Err(format!("relevance.{name}: {value} is not from 0 to 1"));
            }
        }
        Ok(())
    }
}

/// What the judgement reads of one candidate line.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LineEvidence {
    /// Its ranking score.
    pub score: f64,
    /// Its episode, as a number the lines of one episode share.
    pub episode: u32,
    /// Its BM25, when it matched words of the query.
    pub lexical: Option<f64>,
    /// Its length in words, as BM25 counted them (when it matched words).
    pub length: Option<u32>,
    /// Its cosine to the query, when it has one.
    pub similarity: Option<f64>,
}

/// How a query is put: what it says of who is speaking and what they want.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueryForm {
    /// It speaks of the one who writes it ("I", "my", "we"): their own past bears on it.
    pub speaks_of_self: bool,
    /// It asks (a question mark, or a question word first).
    pub asks: bool,
    /// Its content words (not function words).
    pub words: usize,
}

/// What the index tells of the query as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QueryEvidence {
    /// `TurnTable::lexical_ceiling`.
    pub lexical_ceiling: f64,
    /// The query names authors of the tenant, and no candidate line is by one of them.
    pub names_absent: bool,
    /// The query names something no line of the tenant holds (`TurnTable::unknown_names`).
    pub unknown_names: bool,
    /// What the scope's lines score in cosine without bearing on the query: the tenth best
    /// line's (the last's, where there are fewer). A line's standing is its cosine above this.
    pub reference_similarity: f64,
    pub form: QueryForm,
}

/// The judgement of a recall's lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// Nothing found bears on the query: the block is empty.
    Nothing,
    /// These lines of the ranking (indices, best first) may go into the block.
    Lines(Vec<usize>),
}

impl Judgement {
    /// Whether the block may hold the `i`th line of the ranking.
    pub fn takes(&self, i: usize) -> bool {
        match self {
            Judgement::Nothing => false,
            Judgement::Lines(lines) => lines.binary_search(&i).is_ok(),
        }
    }
}

/// A line's words channel inputs ([`WORDS_FEATURES`]): its share of the query's weighed words
/// (at most 1), and how far past twenty words it runs (`ln(words / 20)`, at least 0).
pub fn words_features(line: &LineEvidence, query: &QueryEvidence) -> [f64; 2] {
    let share = match (line.lexical, query.lexical_ceiling > 0.0) {
        (Some(bm25), true) => (bm25 / query.lexical_ceiling).min(1.0),
        _ => 0.0,
    };
    let long = line.length.map_or(0.0, |n| (f64::from(n.max(1)) / 20.0).ln().max(0.0));
    [share, long]
}

/// A line's meaning channel inputs ([`MEANING_FEATURES`]): how far its cosine stands above
/// the reference (0 for a line without one), and the query's form.
pub fn meaning_features(line: &LineEvidence, query: &QueryEvidence) -> [f64; 4] {
    let standing = line.similarity.map_or(0.0, |s| s - query.reference_similarity);
    let form = query.form;
    [
        standing,
        f64::from(u8::from(form.speaks_of_self)),
        f64::from(u8::from(form.asks)),
        (1.0 + form.words as f64).ln(),
    ]
}

/// The probability that `line` bears on the query: the higher of its two channels'.
pub fn relevance(line: &LineEvidence, query: &QueryEvidence, config: &RelevanceConfig) -> f64 {
    let words = config.words.logit(&words_features(line, query));
    let meaning = config.meaning.logit(&meaning_features(line, query));
    logistic(words.max(meaning))
}

fn logistic(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// Judges `lines`, the ranking best first: nothing when no line's relevance reaches `speak`
/// (or the query names only people absent from the scope, or something the tenant never
/// held); else the lines whose relevance reaches `take` and whose score is at least
/// `stop_below` of the best, the first `at_least`, and of the first `beside` those beside a
/// line that bears.
pub fn judge(lines: &[LineEvidence], query: &QueryEvidence, config: &RelevanceConfig) -> Judgement {
    if !config.judge {
        return Judgement::Lines((0..lines.len()).collect());
    }
    if query.names_absent || query.unknown_names {
        return Judgement::Nothing;
    }
    let relevance: Vec<f64> = lines.iter().map(|line| relevance(line, query, config)).collect();
    if !relevance.iter().any(|&r| r >= config.speak) {
        return Judgement::Nothing;
    }
    let best = lines.first().map_or(0.0, |line| line.score);
    let bearing: Vec<u32> = relevance
        .iter()
        .zip(lines)
        .filter(|&(&r, _)| r >= config.speak)
        .map(|(_, line)| line.episode)
        .collect();
    Judgement::Lines(
        relevance
            .iter()
            .zip(lines)
            .enumerate()
            .filter(|&(i, (&r, line))| {
                r >= config.take && line.score >= config.stop_below * best
                    || i < config.at_least
                    || i < config.beside && bearing.contains(&line.episode)
            })
            .map(|(i, _)| i)
            .collect(),
    )
}

/// The line whose cosine is the reference a line's standing is read against: the tenth best.
const REFERENCE_RANK: usize = 10;

/// The reference of [`QueryEvidence::reference_similarity`] among `similarities` (the vector
/// candidates'): the tenth best, else the lowest, else 0.
pub fn reference_similarity(similarities: impl IntoIterator<Item = f64>) -> f64 {
    let mut all: Vec<f64> = similarities.into_iter().collect();
    all.sort_by(|a, b| b.total_cmp(a));
    all.get(REFERENCE_RANK - 1).or(all.last()).copied().unwrap_or(0.0)
}

/// Words that say the writer speaks of themselves.
const FIRST_PERSON: &[&str] = &[
    "i",
    "i'd",
    "i'll",
    "i'm",
    "i've",
    "me",
    "mine",
    "my",
    "myself",
    "our",
    "ours",
    "ourselves",
    "us",
    "we",
    "we'd",
    "we'll",
    "we're",
    "we've",
];

/// Words that open a question.
const QUESTION_WORDS: &[&str] =
    &["how", "what", "when", "where", "which", "who", "whom", "whose", "why"];

/// How `text` is put ([`QueryForm`]).
pub fn query_form(text: &str) -> QueryForm {
    let words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('’', "'"))
        .collect();
    let asks = text.trim_end().ends_with('?')
        || words.first().is_some_and(|w| QUESTION_WORDS.contains(&w.as_str()));
    QueryForm {
        speaks_of_self: words.iter().any(|w| FIRST_PERSON.contains(&w.as_str())),
        asks,
        words: words
            .iter()
            .filter(|w| {
                w.chars().count() > 2
                    && !crate::telling::is_stopword(w)
                    && !FIRST_PERSON.contains(&w.as_str())
            })
            .count(),
    }
}

/// The words of `text` that name something: capitalized inside a sentence (not its first
/// word, which any sentence capitalizes), not function words, not a single letter ("I"), in
/// lower case, each once.
pub fn proper_nouns(text: &str) -> Vec<String> {
    proper_noun_spans(text).into_iter().map(|(_, word)| word).collect()
}

/// [`proper_nouns`], each with the word as written.
pub fn proper_noun_spans(text: &str) -> Vec<(&str, String)> {
    let mut names: Vec<(&str, String)> = Vec::new();
    let mut first = true;
    for piece in text.split_inclusive(['.', '?', '!', ':', ';', '\n']) {
        for word in piece.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-')) {
            let word = word.trim_matches(|c: char| !c.is_alphanumeric());
            let Some(initial) = word.chars().next() else { continue };
            let written = word.split('\'').next().unwrap_or_default();
            let lower = written.to_lowercase();
            if !first
                && initial.is_uppercase()
                && lower.chars().count() > 1
                && !crate::telling::is_stopword(&lower)
                && !names.iter().any(|(_, n)| *n == lower)
            {
                names.push((written, lower));
            }
            first = false;
        }
        first = true;
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(lexical: Option<f64>, similarity: Option<f64>) -> LineEvidence {
        LineEvidence { score: 1.0, episode: 0, lexical, length: Some(12), similarity }
    }

    fn query(form: QueryForm) -> QueryEvidence {
        QueryEvidence {
            lexical_ceiling: 10.0,
            reference_similarity: 0.2,
            form,
            ..Default::default()
        }
    }

    const ASKS: QueryForm = QueryForm { speaks_of_self: false, asks: true, words: 4 };
    const SAYS: QueryForm = QueryForm { speaks_of_self: true, asks: false, words: 6 };

    #[test]
    fn a_line_holding_the_rare_words_of_a_question_bears_on_it() {
        let config = RelevanceConfig::default();
        let q = query(ASKS);
        let lines = [line(Some(4.0), Some(0.5)), line(None, Some(0.3))];
        assert!(relevance(&lines[0], &q, &config) >= config.speak);
        assert_eq!(judge(&lines, &q, &config), Judgement::Lines(vec![0, 1]), "at least eight");
        // A lone common word: a tenth of the question.
        let weak = [line(Some(1.0), Some(0.35)), line(None, Some(0.3))];
        assert_eq!(judge(&weak, &q, &config), Judgement::Nothing);
        assert_eq!(judge(&[], &q, &config), Judgement::Nothing);
    }

    #[test]
    fn a_long_line_needs_more_of_the_words() {
        let config = RelevanceConfig::default();
        let q = query(ASKS);
        let short = LineEvidence { length: Some(15), ..line(Some(3.0), None) };
        let long = LineEvidence { length: Some(400), ..short };
        assert!(relevance(&short, &q, &config) > relevance(&long, &q, &config));
    }

    #[test]
    fn a_person_speaking_of_themselves_is_answered_by_meaning() {
        let config = RelevanceConfig::default();
        let close = line(None, Some(0.55));
        // The same line stands out for "I'm performing at the party", not for a question
        // about something else put in the same words' meaning.
        assert!(
            relevance(&close, &query(SAYS), &config) > relevance(&close, &query(ASKS), &config)
        );
        let far = line(None, Some(0.22));
        assert!(relevance(&far, &query(SAYS), &config) < config.speak, "nothing stands out");
    }

    #[test]
    fn people_absent_from_the_scope_and_unheard_names_empty_the_block() {
        let matched = [line(Some(9.0), Some(0.9))];
        let config = RelevanceConfig::default();
        for q in [
            QueryEvidence { names_absent: true, ..query(ASKS) },
            QueryEvidence { unknown_names: true, ..query(ASKS) },
        ] {
            assert_eq!(judge(&matched, &q, &config), Judgement::Nothing);
            assert_eq!(judge(&matched, &q, &RelevanceConfig::FILL), Judgement::Lines(vec![0]));
        }
    }

    #[test]
    fn a_block_takes_the_lines_that_reach_take_and_the_first_few_beside_them() {
        let config =
            RelevanceConfig { take: 0.3, at_least: 0, beside: 4, ..RelevanceConfig::default() };
        let q = query(ASKS);
        let at = |episode, line: LineEvidence| LineEvidence { episode, ..line };
        let lines = [
            at(0, line(Some(5.0), None)),
            // Beside the line that bears: it comes with it.
            at(0, line(None, Some(0.1))),
            at(1, line(Some(4.0), None)),
            // Of another memory, bearing nothing: it does not.
            at(2, line(None, None)),
        ];
        assert_eq!(judge(&lines, &q, &config), Judgement::Lines(vec![0, 1, 2]));
        let none_beside = RelevanceConfig { beside: 0, ..config };
        assert_eq!(judge(&lines, &q, &none_beside), Judgement::Lines(vec![0, 2]));
        assert_eq!(judge(&lines, &q, &RelevanceConfig::FILL), Judgement::Lines(vec![0, 1, 2, 3]));
        // A line scoring well below the best is not taken for its relevance alone.
        let mut low = lines;
        low[2].score = 0.3;
        assert_eq!(judge(&low, &q, &none_beside), Judgement::Lines(vec![0]));
        let first_few = RelevanceConfig { at_least: 4, ..none_beside };
        assert_eq!(judge(&low, &q, &first_few), Judgement::Lines(vec![0, 1, 2, 3]));
        assert!(Judgement::Lines(vec![0, 2]).takes(2) && !Judgement::Lines(vec![0, 2]).takes(1));
    }

    #[test]
    fn the_reference_is_the_tenth_best_similarity() {
        let sims = (0..20).map(|i| f64::from(i) / 20.0);
        assert_eq!(reference_similarity(sims), 0.5);
        assert_eq!(reference_similarity([0.3, 0.9, 0.1]), 0.1, "fewer: the lowest");
        assert_eq!(reference_similarity([]), 0.0);
    }

    #[test]
    fn the_form_of_a_query() {
        let form = query_form("I'm performing a magic trick at the party, what should I wear?");
        assert!(form.speaks_of_self && form.asks);
        assert_eq!(form.words, 5, "performing, magic, trick, party, wear");
        let task = query_form("Compose an engaging travel blog post about Hawaii.");
        assert!(!task.speaks_of_self && !task.asks);
        assert!(query_form("What did Caroline research").asks, "a question word first");
        assert!(query_form("Our trip was great").speaks_of_self);
        assert!(query_form("Bart’s party: I’ll dance").speaks_of_self, "a typographic apostrophe");
    }

    #[test]
    fn proper_nouns_are_capitalized_inside_a_sentence() {
        assert_eq!(
            proper_nouns("What did Melanie paint? Where is Flask's pool"),
            ["melanie", "flask"]
        );
        assert_eq!(proper_nouns("Caroline went home"), Vec::<String>::new(), "first words are not");
        assert_eq!(
            proper_nouns("Did I tell The Boss about iOS and PostgreSQL-16?"),
            ["boss", "postgresql-16"]
        );
        assert_eq!(proper_noun_spans("Is Katrina's cat ok?"), [("Katrina", "katrina".to_owned())]);
    }
}
