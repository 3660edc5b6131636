//! Whether what recall found bears on the query at all, and how many of its lines a block
//! takes. Pure: the search index supplies each line's scores and the scale they are read
//! against; this decides.
//!
//! The evidence, as measured on the tuning parts of LoCoMo and BEAM (docs/benchmarks.md):
//!
//! - **Words.** A line's BM25 over what a line holding every weighed word of the query would
//!   score (`TurnTable::lexical_ceiling`: each word weighted by its rarity in the tenant, a
//!   word the tenant never holds as rare as one it holds once, a date the query names left
//!   out, each named author's score in). A line matching the query's rare words, or its
//!   person, passes; one sharing a lone common word ("pool", "configure") does not. It reads
//!   a tenant of one message as well as one of millions: the scale is that tenant's own.
//! - **Meaning, word by word.** Soft word matching near 1 (each query word has a close
//!   word in the line) passes a line that says the same in other words.
//! - **People.** A query that names people, none of whom wrote anything in the scope, asks
//!   about someone this memory has not heard from there.
//! - **Names it never heard.** A query naming something (a capitalized word inside a
//!   sentence: "Flask", "Melanie") that no line of the tenant holds asks about what this
//!   memory does not know.
//!
//! A line's cosine to the query, even against what unrelated text scores, told little more
//! on these sets than the two above, and is not used.

use serde::{Deserialize, Serialize};

/// How a block is judged (`[relevance]`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RelevanceConfig {
    /// Judge at all: without it a block fills its budget with the best lines, whatever
    /// they are (the behaviour before relevance was judged).
    pub judge: bool,
    /// A line bears on the query when its BM25 is at least this share of what a line
    /// matching every weighed word of the query would score...
    pub min_share: f64,
    /// ...or when soft word matching finds every query word closely in it (the mean of each
    /// word's best similarity is at least this).
    pub min_words: f64,
    /// A block takes lines, best first, until one scores below this share of the best line's
    /// score (the budget is a ceiling, not a target)...
    pub stop_below: f64,
    /// ...but takes at least this many (an answer is often a few lines beside the one that
    /// matched best).
    pub at_least: usize,
}

impl Default for RelevanceConfig {
    fn default() -> Self {
        Self { judge: true, min_share: 0.16, min_words: 0.9, stop_below: 0.5, at_least: 8 }
    }
}

impl RelevanceConfig {
    /// A block that fills its budget, as before relevance was judged.
    pub const FILL: Self =
        Self { judge: false, min_share: 0.0, min_words: 0.0, stop_below: 0.0, at_least: 0 };
}

/// What the judgement reads of one candidate line.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LineEvidence {
    /// Its ranking score.
    pub score: f64,
    /// Its BM25, when it matched words of the query.
    pub lexical: Option<f64>,
    /// Its soft word matching score, when it has one.
    pub words: Option<f64>,
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
}

/// The judgement of a recall's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// Nothing found bears on the query: the block is empty.
    Nothing,
    /// The first `lines` of the ranking (best first) may go into the block.
    Lines(usize),
}

impl Judgement {
    pub fn lines(self) -> usize {
        match self {
            Judgement::Nothing => 0,
            Judgement::Lines(n) => n,
        }
    }
}

/// Whether `line` bears on the query on its own evidence.
pub fn line_bears(line: &LineEvidence, query: &QueryEvidence, config: &RelevanceConfig) -> bool {
    let share = match (line.lexical, query.lexical_ceiling > 0.0) {
        (Some(bm25), true) => bm25 / query.lexical_ceiling,
        _ => 0.0,
    };
    share >= config.min_share || line.words.is_some_and(|w| w >= config.min_words)
}

/// Judges `lines`, the ranking best first: nothing when no line bears on the query (or it
/// names only people absent from the scope); else the lines down to the first that scores
/// well below the best.
pub fn judge(lines: &[LineEvidence], query: &QueryEvidence, config: &RelevanceConfig) -> Judgement {
    if !config.judge {
        return Judgement::Lines(lines.len());
    }
    let bears = lines.iter().any(|line| line_bears(line, query, config));
    if query.names_absent || query.unknown_names || !bears {
        return Judgement::Nothing;
    }
    let best = lines.first().map_or(0.0, |line| line.score);
    let kept = lines.iter().take_while(|line| line.score >= config.stop_below * best).count();
    Judgement::Lines(kept.max(config.at_least.min(lines.len())).max(1))
}

/// The words of `text` that name something: capitalized inside a sentence (not its first
/// word, which any sentence capitalizes), not function words, not a single letter ("I"), in
/// lower case, each once.
pub fn proper_nouns(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut first = true;
    for piece in text.split_inclusive(['.', '?', '!', ':', ';', '\n']) {
        for word in piece.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-')) {
            let word = word.trim_matches(|c: char| !c.is_alphanumeric());
            let Some(initial) = word.chars().next() else { continue };
            let lower = word.to_lowercase();
            let lower = lower.split('\'').next().unwrap_or_default().to_owned();
            if !first
                && initial.is_uppercase()
                && lower.chars().count() > 1
                && !crate::is_stopword(&lower)
                && !names.contains(&lower)
            {
                names.push(lower);
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

    fn line(score: f64, lexical: Option<f64>, words: Option<f64>) -> LineEvidence {
        LineEvidence { score, lexical, words }
    }

    const QUERY: QueryEvidence =
        QueryEvidence { lexical_ceiling: 10.0, names_absent: false, unknown_names: false };

    #[test]
    fn a_block_is_empty_when_no_line_matches_enough_of_the_query() {
        let config = RelevanceConfig::default();
        // A lone common word: a tenth of the query.
        let weak = [line(1.0, Some(1.0), Some(0.5)), line(0.9, None, Some(0.6))];
        assert_eq!(judge(&weak, &QUERY, &config), Judgement::Nothing);
        assert_eq!(judge(&[], &QUERY, &config), Judgement::Nothing);
        // Its rare words, or every word said in other words.
        let matched = [line(1.0, Some(3.0), None), line(0.5, None, None)];
        assert_eq!(judge(&matched, &QUERY, &config), Judgement::Lines(2));
        let paraphrased = [line(1.0, None, Some(0.95))];
        assert_eq!(judge(&paraphrased, &QUERY, &config), Judgement::Lines(1));
        // A query with no word to weigh is judged by meaning alone.
        let no_words = QueryEvidence { lexical_ceiling: 0.0, ..QUERY };
        assert_eq!(judge(&matched, &no_words, &config), Judgement::Nothing);
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
        let unknown = QueryEvidence { unknown_names: true, ..QUERY };
        let matched = [line(1.0, Some(9.0), Some(1.0))];
        assert_eq!(judge(&matched, &unknown, &RelevanceConfig::default()), Judgement::Nothing);
    }

    #[test]
    fn people_absent_from_the_scope_empty_the_block() {
        let names_absent = QueryEvidence { names_absent: true, ..QUERY };
        let matched = [line(1.0, Some(9.0), Some(1.0))];
        let config = RelevanceConfig::default();
        assert_eq!(judge(&matched, &names_absent, &config), Judgement::Nothing);
        assert_eq!(judge(&matched, &names_absent, &RelevanceConfig::FILL), Judgement::Lines(1));
    }

    #[test]
    fn a_block_stops_where_lines_score_well_below_the_best() {
        let lines = [
            line(1.0, Some(5.0), None),
            line(0.6, None, None),
            line(0.41, None, None),
            line(0.39, Some(9.0), None),
            line(0.8, None, None),
        ];
        let config = RelevanceConfig { stop_below: 0.4, at_least: 0, ..RelevanceConfig::default() };
        assert_eq!(judge(&lines, &QUERY, &config), Judgement::Lines(3));
        assert_eq!(judge(&lines, &QUERY, &RelevanceConfig::FILL), Judgement::Lines(5));
        let at_least = RelevanceConfig { at_least: 4, ..config };
        assert_eq!(judge(&lines, &QUERY, &at_least), Judgement::Lines(4));
        let more_than_there = RelevanceConfig { at_least: 9, ..config };
        assert_eq!(judge(&lines, &QUERY, &more_than_there), Judgement::Lines(5));
    }
}
