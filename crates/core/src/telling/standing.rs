//! Whether a line sets a rule for what comes after it: "Always include the API version when I
//! ask about integrations", "Never push to main", "From now on, answer in French". A person
//! who says it expects it to be kept on every later request of its kind, so recall must not
//! lose it among the lines that only share its subject. English phrasing only.

use crate::{Role, telling::summary::split_sentences};

/// Phrases that make a sentence a standing instruction wherever they stand in it.
const STANDING_PHRASES: &[&str] =
    &["from now on", "whenever i ask", "when i ask about", "every time i ask", "each time i ask"];

/// Words before the rule's "always" or "never" that leave it an instruction ("Please always
/// …", "And never …").
const LEAD_INS: &[&str] = &["please", "and", "also", "so", "but", "just"];

/// Words after a sentence's first "always" or "never" that make it a remark, not a rule:
/// "Always here to help", "Never been there", "Always a pleasure", "Never mind".
const REMARKS: &[&str] = &[
    "a", "an", "the", "here", "there", "so", "good", "great", "happy", "glad", "fun", "nice", "up",
    "on", "by", "ready", "welcome", "been", "be", "had", "heard", "done", "seen", "thought",
    "felt", "knew", "got", "went", "met", "made", "did", "was", "were", "is", "am", "are", "mind",
];

/// Which of an episode's lines set a standing rule: a person's line, told to an assistant or a
/// tool (the episode holds one of their lines), that [`states_standing_instruction`]. Between
/// people "Always here to help!" and "Never tried it" are remarks; told to an assistant,
/// "Always …" is how a rule is given.
pub fn standing_instructions<'a>(
    lines: impl Iterator<Item = (Role, &'a str)> + Clone,
) -> Vec<bool> {
    let told_to_machine = lines.clone().any(|(role, _)| role != Role::User);
    lines
        .map(|(role, text)| {
            told_to_machine && role == Role::User && states_standing_instruction(text)
        })
        .collect()
}

/// Whether `text` holds a sentence that sets a standing rule: one that begins, after a polite
/// lead-in, with "always" or "never" and then what to do (not a remark: "never mind", "always
/// here", "never tried it"), or that says when the rule applies ("from now on", "whenever I
/// ask", "when I ask about").
pub fn states_standing_instruction(text: &str) -> bool {
    rule_sentences(text).next().is_some()
}

/// The sentences of `text` that set a standing rule ([`states_standing_instruction`]), in
/// order, without their closing mark: what a rule is told as, without the request around it.
pub fn rule_sentences(text: &str) -> impl Iterator<Item = &str> {
    split_sentences(text).map(|s| s.trim_end_matches(['.', '!', '?'])).filter(|sentence| {
        let lower = sentence.to_lowercase();
        if STANDING_PHRASES.iter().any(|p| contains_phrase(&lower, p)) {
            return true;
        }
        let mut words = lower
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .filter(|w| !w.is_empty())
            .skip_while(|w| LEAD_INS.contains(w));
        match (words.next(), words.next()) {
            (Some("always" | "never"), Some(next)) => {
                !REMARKS.contains(&next) && !next.ends_with("ing") && !next.ends_with("ed")
            }
            _ => false,
        }
    })
}

/// Whether `phrase` occurs in `text` as whole words.
fn contains_phrase(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_for_later_requests_are_standing_instructions() {
        for text in [
            "Always include exact API version numbers when I ask about integration details.",
            "Never use unwrap in library code.",
            "Please always run the tests before you commit",
            "Thanks! From now on, answer in French.",
            "Whenever I ask for a recipe, give the quantities in grams.",
            "ok. and never push to main directly",
        ] {
            assert!(states_standing_instruction(text), "{text}");
        }
    }

    #[test]
    fn habits_advice_and_asides_are_not() {
        for text in [
            "I always forget where I put my keys.",
            "The build always fails on Mondays.",
            "Never mind, it works now.",
            "You should always check the logs first?",
            "Always.",
            "It was the best trip I've ever had, and I'll never forget it",
            "What did I ask about yesterday?",
            "No prob! Always here to help.",
            "Never tried it, but it's supposed to be awesome.",
            "Always running around, exploring and having a great time.",
            "Never heard of it.",
            "Always a blessing.",
        ] {
            assert!(!states_standing_instruction(text), "{text}");
        }
    }

    #[test]
    fn a_rule_is_told_as_its_own_sentences() {
        let prompt = "Fix the flaky webhook test. Always run cargo fmt on src/main.rs before you \
                      commit! Thanks\nNever bump serde past 1.0.200.";
        assert_eq!(
            rule_sentences(prompt).collect::<Vec<_>>(),
            [
                "Always run cargo fmt on src/main.rs before you commit",
                "Never bump serde past 1.0.200"
            ]
        );
        assert_eq!(rule_sentences("Fix the webhook test.").count(), 0);
    }

    #[test]
    fn only_a_person_telling_an_assistant_sets_a_rule() {
        let rule = "Always include the API version when I ask about integrations.";
        let to_assistant = [(Role::User, rule), (Role::Assistant, "Noted.")];
        assert_eq!(standing_instructions(to_assistant.into_iter()), [true, false]);
        // The assistant's own advice is not the user's rule.
        let advice = [(Role::User, "How do I pin it?"), (Role::Assistant, rule)];
        assert_eq!(standing_instructions(advice.into_iter()), [false, false]);
        // Between two people it is a remark, whatever its words.
        let chat = [(Role::User, rule), (Role::User, "Sure thing.")];
        assert_eq!(standing_instructions(chat.into_iter()), [false, false]);
    }
}
