//! Memory review: one call rates each recalled memory against the conversation that followed.

use serde_json::{Value, json};

use super::{AnswerError, ChatPrompt, WindowMessage, json_in, message_lines};
use crate::fsrs::Rating;

/// A memory as the reviewer sees it.
#[derive(Debug, Clone, Copy)]
pub struct MemoryToReview<'a> {
    pub title: &'a str,
    pub summary: &'a str,
    /// The queries that returned it.
    pub queries: &'a [String],
}

const SYSTEM: &str = "\
You judge how useful memories were. Each memory below was recalled for the queries listed \
with it; after that, the conversation shown went on. Rate every memory by how it was used in \
that conversation:
- again: not used at all; it was noise.
- hard: related, but connecting it to the conversation took inference.
- good: directly relevant; it visibly shaped what was said.
- easy: central; the conversation could not have gone on as it did without it.
Answer with one rating per memory, naming it by its id (m1, m2, ...).";

/// The prompt rating `memories` against `conversation`; memory `i` is named `m{i+1}`.
pub fn review_prompt(
    conversation: &[WindowMessage<'_>],
    memories: &[MemoryToReview<'_>],
) -> ChatPrompt {
    let mut user =
        format!("The conversation after the recall ({} messages):\n", conversation.len());
    user.push_str(&message_lines(conversation));
    user.push_str("\nMemories to rate:\n");
    for (i, m) in memories.iter().enumerate() {
        let queries: Vec<String> = m.queries.iter().map(|q| format!("{:?}", q.trim())).collect();
        user.push_str(&format!(
            "m{}: {} — {}\n    recalled for: {}\n",
            i + 1,
            one_line(m.title),
            one_line(m.summary),
            queries.join(", ")
        ));
    }
    let schema = json!({
        "type": "object",
        "properties": {
            "ratings": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "memory_id": {"type": "string"},
                        "rating": {"type": "string", "enum": ["again", "hard", "good", "easy"]}
                    },
                    "required": ["memory_id", "rating"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["ratings"],
        "additionalProperties": false
    });
    ChatPrompt { system: SYSTEM.to_owned(), user, schema_name: "memory_ratings", schema }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What the reviewer rated: `(memory index, rating)`, each memory at most once (its first
/// rating). Ids the prompt did not give (invented ones) and unknown ratings are left out, and
/// a memory without a rating is not reviewed; an answer that is not JSON or has no list of
/// ratings is an error.
pub fn parse_review(answer: &str, memories: usize) -> Result<Vec<(usize, Rating)>, AnswerError> {
    let value = json_in(answer)?;
    let Some(items) = value.get("ratings").and_then(Value::as_array) else {
        return Err(AnswerError("no \"ratings\" array".into()));
    };
    let mut rated: Vec<(usize, Rating)> = Vec::new();
    for item in items {
        let id = item.get("memory_id").and_then(Value::as_str).unwrap_or("");
        let index = id.trim().strip_prefix('m').and_then(|n| n.parse::<usize>().ok());
        let rating = item.get("rating").and_then(Value::as_str).and_then(Rating::parse);
        if let (Some(index @ 1..), Some(rating)) = (index, rating)
            && index <= memories
            && !rated.iter().any(|(i, _)| *i == index - 1)
        {
            rated.push((index - 1, rating));
        }
    }
    Ok(rated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timestamp;

    #[test]
    fn the_prompt_shows_what_followed_and_each_memory_with_its_queries() {
        let at = Timestamp::parse_rfc3339("2026-05-03T09:00:00Z").unwrap();
        let conversation = [
            WindowMessage {
                author: "user",
                timestamp: at,
                content: "Which pass did we say covers Sintra?",
            },
            WindowMessage {
                author: "assistant",
                timestamp: at.plus_millis(60_000),
                content: "The Viva Viagem card\ncovers the train.",
            },
        ];
        let queries = ["sintra train".to_owned(), "travel card".to_owned()];
        let memories = [
            MemoryToReview {
                title: "Lisbon trip: Sintra day trip, travel card",
                summary: "They planned a day in Sintra.",
                queries: &queries,
            },
            MemoryToReview {
                title: "Sister's new job",
                summary: "Caroline's sister got the job.",
                queries: &queries[..1],
            },
        ];
        let prompt = review_prompt(&conversation, &memories);
        insta::assert_snapshot!(format!("SYSTEM:\n{}\n\nUSER:\n{}", prompt.system, prompt.user));
    }

    #[test]
    fn ratings_are_read_by_id_and_invented_ids_are_left_out() {
        let answer = json!({"ratings": [
            {"memory_id": "m2", "rating": "easy"},
            {"memory_id": "m1", "rating": "again"},
            {"memory_id": "m7", "rating": "good"},
            {"memory_id": "ep_1234", "rating": "good"},
            {"memory_id": "m0", "rating": "good"},
            {"memory_id": "m1", "rating": "easy"},
            {"memory_id": "m3", "rating": "medium"}
        ]});
        let rated = parse_review(&answer.to_string(), 3).unwrap();
        assert_eq!(rated, [(1, Rating::Easy), (0, Rating::Again)]);
    }

    #[test]
    fn an_answer_without_ratings_is_an_error() {
        assert!(parse_review("nothing to say", 2).unwrap_err().to_string().contains("no JSON"));
        assert!(
            parse_review("{\"scores\": []}", 2).unwrap_err().to_string().contains("\"ratings\"")
        );
        assert_eq!(parse_review("{\"ratings\": []}", 2).unwrap(), []);
    }
}
