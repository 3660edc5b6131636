//! The rules that weigh a candidate turn beyond what its retrievers scored, in one place, each
//! with the principle it encodes. Pure: what the index knows of a turn goes in, factors come
//! out; fusing the retrievers' scores (`fusion.rs`) and lending to neighbours (`ranking.rs`)
//! are the other two steps of turn ranking.

use crate::recall::RankingConfig;

/// What ranking knows of the episode a candidate turn belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpisodeSignals {
    /// How well the episode answers the query as a whole, 0 to 1 (`context_with_neighbors`).
    pub context: f64,
    /// Whether the episode is from a date the query names.
    pub dated: bool,
    /// Memory strength as a recall factor, `floor + (1 − floor) · R` (`Memory::recall_weight`).
    pub strength: f64,
}

/// What ranking knows of one line besides its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineSignals {
    /// Written by someone the query names.
    pub by_named_author: bool,
    /// Ends in a question mark.
    pub asks: bool,
    /// Written by an assistant, a tool or the system rather than a person.
    pub by_machine: bool,
    /// Its episode holds tool output: a coding agent at work, not a chat.
    pub in_work: bool,
    /// A person's rule for what comes after it ("Always … when I ask about …",
    /// `states_standing_instruction`).
    pub instructs: bool,
}

/// How well an episode answers the query, given its own fused score (0 to 1) and those of the
/// episodes just before and after it. A cut can fall inside a story: an episode answers at
/// least as well as the one beside it, a little discounted (`context_neighbor_share`).
pub fn context_with_neighbors(
    own: f64,
    adjacent: impl IntoIterator<Item = f64>,
    config: &RankingConfig,
) -> f64 {
    adjacent.into_iter().fold(own, |best, n| best.max(config.context_neighbor_share * n))
}

/// The factor a turn's fused score is multiplied by for its episode, before it lends to its
/// neighbours:
/// - an episode that answers the query as a whole vouches for each of its lines
///   (`1 + episode_context_weight · context`);
/// - a day the query names is when the answer was told, or in the week after (`date_boost`);
/// - a memory that has faded yields to a fresh one that answers about as well (`strength`).
pub fn episode_factor(s: &EpisodeSignals, config: &RankingConfig) -> f64 {
    let date = if s.dated { 1.0 + config.date_boost } else { 1.0 };
    (1.0 + config.episode_context_weight * s.context) * date * s.strength
}

/// The factor a turn's score is multiplied by for who wrote it and how, after spreading (so
/// the line beside it still borrows its score whole):
/// - what a query asks about a person is mostly in that person's own lines (LoCoMo: 96% of the
///   evidence of questions naming one speaker, against 77% of the lines returned without
///   this; `author_boost`);
/// - a line that asks tells less than the line that answers (LoCoMo: 13% of the evidence ends
///   in a question mark, against 25% of all lines; `question_weight`);
/// - what a person says of themselves is the memory, while a model can say its reply again
///   (BEAM: 76% of the evidence is the user's lines, against 25-38% of the ten best turns
///   without this; `assistant_weight`); but where an agent works with tools, its lines and
///   the tools' are what was found and done, the record itself (our coding-agent
///   sessions' questions: 76% of the evidence);
/// - a rule a person set for later requests ("Always … when I ask about …") is kept on every
///   request of its kind, so it must come back with them, not only with requests that share
///   its words (BEAM's questions whose evidence is such a rule: the rule among the ten best
///   turns for 36% of them without this, 61% with it on the tuning part; `instruction_boost`).
pub fn line_factor(s: &LineSignals, config: &RankingConfig) -> f64 {
    let mut factor = 1.0;
    if s.by_named_author {
        factor *= 1.0 + config.author_boost;
    }
    if s.asks {
        factor *= config.question_weight;
    }
    if s.by_machine && !s.in_work {
        factor *= config.assistant_weight;
    }
    if s.instructs {
        factor *= 1.0 + config.instruction_boost;
    }
    factor
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn each_rule_applies_its_setting() {
        let config = RankingConfig::default();
        let plain = LineSignals::default();
        assert_eq!(line_factor(&plain, &config), 1.0);
        let named = LineSignals { by_named_author: true, ..plain };
        assert_eq!(line_factor(&named, &config), 1.0 + config.author_boost);
        let asks = LineSignals { asks: true, ..plain };
        assert_eq!(line_factor(&asks, &config), config.question_weight);
        let machine = LineSignals { by_machine: true, ..plain };
        assert_eq!(line_factor(&machine, &config), config.assistant_weight);
        let agent_at_work = LineSignals { in_work: true, ..machine };
        assert_eq!(line_factor(&agent_at_work, &config), 1.0);
        let person_at_work = LineSignals { in_work: true, ..plain };
        assert_eq!(line_factor(&person_at_work, &config), 1.0);
        let rule = LineSignals { instructs: true, ..plain };
        assert_eq!(line_factor(&rule, &config), 1.0 + config.instruction_boost);

        let quiet = EpisodeSignals { context: 0.0, dated: false, strength: 1.0 };
        assert_eq!(episode_factor(&quiet, &config), 1.0);
        let dated = EpisodeSignals { dated: true, ..quiet };
        assert_eq!(episode_factor(&dated, &config), 1.0 + config.date_boost);
        let faded = EpisodeSignals { strength: 0.8, ..quiet };
        assert_eq!(episode_factor(&faded, &config), 0.8);
        assert_eq!(context_with_neighbors(0.2, [1.0, 0.1], &config), config.context_neighbor_share);
        assert_eq!(context_with_neighbors(0.9, [0.5], &config), 0.9);
        assert_eq!(context_with_neighbors(0.3, [], &config), 0.3);
    }

    proptest! {
        #[test]
        fn better_signals_never_lower_the_factor(
            context in 0.0f64..1.0, more in 0.0f64..1.0, strength in 0.5f64..1.0, dated: bool,
        ) {
            let config = RankingConfig::default();
            let s = EpisodeSignals { context, dated, strength };
            let f = episode_factor(&s, &config);
            prop_assert!(f > 0.0);
            let richer = EpisodeSignals { context: (context + more).min(1.0), ..s };
            let stronger = EpisodeSignals { strength: 1.0, ..s };
            let on_the_day = EpisodeSignals { dated: true, ..s };
            for better in [richer, stronger, on_the_day] {
                prop_assert!(episode_factor(&better, &config) >= f);
            }
        }
    }
}
