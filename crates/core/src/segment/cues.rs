//! What a prompt's own words say of its place in the work: the discourse markers people use to
//! go on with a task ("Also ...", "Do that", "... too", "Yes, ...") or to leave it
//! ("Unrelated: ...", "Different thing: ...", "Let's switch to ..."). A follow-up names little
//! that is new ("Make it friendlier", "Cut the examples"): shared keywords alone cut it off
//! from its task. The markers are English; a prompt in another language has none, and its
//! keywords decide alone.

/// How a prompt says it relates to the work before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PromptCue {
    /// It goes on with the work: a continuation, an answer to the agent, a back-reference.
    Continues,
    /// It announces something else.
    Shifts,
    /// It says neither: its keywords decide.
    Silent,
}

/// Phrases that announce a change of task when they open a sentence or a clause ("Unrelated:
/// ...", "OK, different question", "Great. Now let's switch to ..."); inside one they say
/// nothing ("create a new task in the scheduler", "fix the unrelated test").
const SHIFTS: &[&[&str]] = &[
    &["unrelated"],
    &["different", "thing"],
    &["different", "question"],
    &["different", "topic"],
    &["different", "task"],
    &["another", "thing"],
    &["another", "question"],
    &["another", "task"],
    &["new", "task"],
    &["new", "topic"],
    &["next", "task"],
    &["next", "thing"],
    &["moving", "on"],
    &["let's", "move", "on"],
    &["let's", "switch"],
    &["switching"],
    &["change", "of", "topic"],
    &["on", "another", "note"],
    &["by", "the", "way"],
    &["btw"],
    &["separately"],
];

/// Words that may come before a clause's announcement: "OK, now, by the way ...".
const LEAD_INS: &[&str] = &[
    "ok", "okay", "now", "so", "and", "also", "great", "thanks", "good", "alright", "right",
    "anyway", "oh", "hmm", "well", "then",
];

/// How many of a prompt's first clauses can announce a change of task (what comes later,
/// a pasted log or a list, is not the user's framing).
const ANNOUNCING_CLAUSES: usize = 3;

/// First words that go on: joining the last request ("Also", "And", "Then"), answering the
/// agent's question or proposal ("Yes", "No", "Ok", "Fine"), or asking to redo its last output
/// ("Shorter", "More detail").
const OPENS_CONTINUING: &[&str] = &[
    "also", "and", "then", "but", "plus", "yes", "yeah", "yep", "no", "nope", "ok", "okay", "fine",
    "sure", "alright", "agreed", "instead", "shorter", "longer", "simpler", "more", "less",
];

/// Opening words that take up what the agent just did ("Good, add a test for ...", "Makes
/// sense. Please apply the fix"), unless a "now" or "next" after them starts something new
/// ("Great. Now write the release notes").
const ACKNOWLEDGEMENTS: &[&[&str]] = &[
    &["good"],
    &["great"],
    &["nice"],
    &["perfect"],
    &["cool"],
    &["thanks"],
    &["makes", "sense"],
    &["sounds"],
    &["go", "ahead"],
];

/// Opening phrases that ask for a variant of what was just discussed ("What about daylight
/// saving?") or join the last request from inside the sentence ("Can you also ...").
const OPENS_A_VARIANT: &[&[&str]] = &[&["what", "about"], &["how", "about"], &["also"]];

/// Sounds of thinking that carry nothing: the word after them is the prompt's first.
const INTERJECTIONS: &[&str] = &["hmm", "hm", "ah", "oh", "well", "um", "uh"];

/// Phrases anywhere that point back at what was said or done ("as well", "the same check",
/// "the features you found"). A clause-final "too" does as well; "too long" does not.
const POINTS_BACK: &[&[&str]] = &[
    &["as", "well"],
    &["instead"],
    &["the", "same"],
    &["you", "found"],
    &["you", "said"],
    &["you", "suggested"],
    &["you", "mentioned"],
    &["you", "proposed"],
    &["you", "wrote"],
];

/// Pronouns that, among a prompt's first words, stand for what the agent just did or said
/// ("Do that", "Change it to 0.8", "Is it safe ..."). "This" and "these" are left out: they
/// as often point ahead, at a pasted error ("Look at this trace: ...").
const BACK_PRONOUNS: &[&str] = &["it", "that", "those", "them"];

/// How many opening words carry a change of task or a back-pointing pronoun.
const OPENING_WORDS: usize = 4;

/// Reads the markers of `prompt`. A change of task wins over a continuation: "Great. Now let's
/// switch to the README" leaves the task, whatever its first word.
pub(crate) fn prompt_cue(prompt: &str) -> PromptCue {
    // Read once: the clauses' words, and the prompt's as one run.
    let clauses: Vec<Vec<String>> =
        clauses(prompt).map(words).filter(|words| !words.is_empty()).collect();
    if announces_a_change(&clauses) {
        return PromptCue::Shifts;
    }
    let all: Vec<String> = clauses.iter().flatten().cloned().collect();
    let spoken = all.iter().take_while(|w| INTERJECTIONS.contains(&w.as_str())).count();
    let words = &all[spoken..];
    let opening = &words[..words.len().min(OPENING_WORDS)];
    let acknowledged = ACKNOWLEDGEMENTS
        .iter()
        .find(|a| starts_with(words, a))
        .is_some_and(|a| !matches!(words.get(a.len()).map(String::as_str), Some("now" | "next")));
    if acknowledged
        || words.first().is_some_and(|w| OPENS_CONTINUING.contains(&w.as_str()))
        || POINTS_BACK.iter().any(|phrase| contains(words, phrase))
        || OPENS_A_VARIANT.iter().any(|phrase| contains(opening, phrase))
        || ends_a_clause_with_too(&clauses)
        || opening.iter().any(|w| BACK_PRONOUNS.contains(&w.as_str()))
    {
        return PromptCue::Continues;
    }
    PromptCue::Silent
}

/// Whether one of the first clauses opens, after its lead-in words, with a change of task.
fn announces_a_change(clauses: &[Vec<String>]) -> bool {
    clauses.iter().take(ANNOUNCING_CLAUSES).any(|words| {
        let lead = words.iter().take_while(|w| LEAD_INS.contains(&w.as_str())).count();
        SHIFTS.iter().any(|phrase| starts_with(&words[lead..], phrase))
    })
}

/// The sentences and clauses of `text`, split at punctuation and line breaks; splitting each
/// into words gives the words of the whole text, since punctuation parts words anyway.
fn clauses(text: &str) -> impl Iterator<Item = &str> {
    text.split(['.', ',', ';', ':', '!', '?', '(', ')', '\n'])
}

/// The lowercased words of `text`, apostrophes kept ("let's").
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// "Cache the target dir too, ..." and "... as well, too." add to the last request; a "too"
/// before the word it qualifies ("too long") does not.
fn ends_a_clause_with_too(clauses: &[Vec<String>]) -> bool {
    clauses.iter().any(|words| words.last().is_some_and(|w| w == "too"))
}

fn starts_with(words: &[String], phrase: &[&str]) -> bool {
    words.len() >= phrase.len() && words.iter().zip(phrase).all(|(a, b)| a == b)
}

fn contains(words: &[String], phrase: &[&str]) -> bool {
    words.windows(phrase.len()).any(|w| w.iter().zip(phrase).all(|(a, b)| a == b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_cue(cue: PromptCue, prompts: &[&str]) {
        for prompt in prompts {
            assert_eq!(prompt_cue(prompt), cue, "{prompt}");
        }
    }

    #[test]
    fn follow_ups_continue() {
        assert_cue(
            PromptCue::Continues,
            &[
                "Also add a line saying PostgreSQL is optional.",
                "and split the bars by plan, free vs pro, stacked",
                "Make it friendlier and mention that the freeze lifts Monday morning.",
                "Do that, and add a test.",
                "back. did that get committed?",
                "Cache the target dir too, builds take forever.",
                "Then commit it, and add the same check to the episodes endpoint.",
                "Remove the unused tokio features you found.",
                "Yes, try the delayed revoke approach.",
                "Shorter, and put breaking changes first.",
                "Good, add a test for that invalid date case.",
                "Makes sense. Please apply the fix and run it 50 times.",
                "Hmm. Then go with chrono-tz after all.",
                "What about daylight saving, e.g. Berlin?",
                "can you also add the median latency per week as a column",
                "Sounds right. Make the grace period a flag, 24h by default.",
            ],
        );
    }

    #[test]
    fn announced_changes_shift_even_after_a_continuing_word() {
        assert_cue(
            PromptCue::Shifts,
            &[
                "Unrelated: the staging database password is rotated tomorrow.",
                "Different thing: a user asked whether epimem runs on a Raspberry Pi.",
                "Great. Now let's switch to the README.",
                "ok, by the way, how do I rotate the staging password?",
                "OK different question, how do I run only the postgres tests locally?",
                "switching gears, the mcp server crashes on an empty params field",
            ],
        );
    }

    #[test]
    fn a_self_contained_request_says_nothing() {
        assert_cue(
            PromptCue::Silent,
            &[
                "The docs site build is broken on main, mdbook complains about a missing file.",
                "Look at this stack trace and tell me what panicked.",
                "Write a Python script that reads the CSV export and plots weekly signups.",
                // "That" far into a long request points inside it, not back.
                "Rename the crate epimem-store everywhere and check that the examples build.",
                // A word that only contains a marker is not the marker.
                "Tooling: set up cargo-deny for the workspace licenses.",
                // Inside a clause, the words of an announcement announce nothing.
                "Create a new task in the scheduler for the nightly export.",
                "Commit the two fixes separately and push.",
                "Switch reqwest to rustls to drop native-tls.",
                // "Too" before what it qualifies says how much, not "also".
                "The MCP tool descriptions are too long, Claude truncates them.",
                // An acknowledgement followed by "now" closes the last step and starts another.
                "Great. Now write the release notes for v0.4 from the commits.",
            ],
        );
    }
}
