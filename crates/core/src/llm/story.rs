//! Episodes of agent work told as stories: what was meant, what happened, what was learned,
//! what got done.

use serde_json::{Value, json};

use super::{AnswerError, ChatPrompt, WindowMessage, json_in, message_lines};

/// An episode of agent work as the model tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Story {
    pub title: String,
    pub intent: String,
    pub what_happened: String,
    pub learned: String,
    pub completed: String,
    pub notes: String,
}

impl Story {
    /// The story as one paragraph, its parts named; empty parts are left out.
    pub fn narrative(&self) -> String {
        let parts = [
            ("Intent", &self.intent),
            ("What happened", &self.what_happened),
            ("Learned", &self.learned),
            ("Completed", &self.completed),
            ("Notes", &self.notes),
        ];
        parts
            .iter()
            .filter(|(_, text)| !text.trim().is_empty())
            .map(|(name, text)| {
                let text = text.trim();
                let end = if text.ends_with(['.', '!', '?']) { "" } else { "." };
                format!("{name}: {text}{end}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

const SYSTEM: &str = "\
You write down an episode of work between a user and a coding agent, from its messages (the \
user's requests, the agent's replies, the tools it ran), so that the agent can pick up the \
thread later. Give: a title of 5 to 15 words; the intent (what the user wanted, one sentence); \
what happened (the main steps and their outcome, at most three sentences); what was learned \
(facts about the code, the tools or the user's preferences worth remembering; empty if none); \
what was completed (empty if nothing); notes (open questions, failures, next steps; empty if \
none). Third person, past tense, no invented details.";

/// The prompt telling the episode of these messages.
pub fn story_prompt(messages: &[WindowMessage<'_>]) -> ChatPrompt {
    let mut user = format!("The episode ({} messages):\n", messages.len());
    user.push_str(&message_lines(messages));
    let text = json!({"type": "string"});
    let schema = json!({
        "type": "object",
        "properties": {
            "title": text, "intent": text, "what_happened": text,
            "learned": text, "completed": text, "notes": text
        },
        "required": ["title", "intent", "what_happened", "learned", "completed", "notes"],
        "additionalProperties": false
    });
    ChatPrompt { system: SYSTEM.to_owned(), user, schema_name: "episode_story", schema }
}

/// Reads a story; its title and what happened must not be empty, the other parts may be.
pub fn parse_story(answer: &str) -> Result<Story, AnswerError> {
    let value = json_in(answer)?;
    let field = |name: &str| -> String {
        value
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let story = Story {
        title: field("title").split(' ').take(15).collect::<Vec<_>>().join(" "),
        intent: field("intent"),
        what_happened: field("what_happened"),
        learned: field("learned"),
        completed: field("completed"),
        notes: field("notes"),
    };
    for (name, text) in [("title", &story.title), ("what_happened", &story.what_happened)] {
        if text.is_empty() {
            return Err(AnswerError(format!("\"{name}\" is missing or empty")));
        }
    }
    Ok(story)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timestamp;

    #[test]
    fn the_prompt_shows_requests_replies_and_tools() {
        let at = Timestamp::parse_rfc3339("2026-05-03T09:00:00Z").unwrap();
        let messages = [
            WindowMessage {
                author: "user",
                timestamp: at,
                content: "The refund webhook test fails since the merge",
            },
            WindowMessage {
                author: "tool",
                timestamp: at.plus_millis(30_000),
                content: "cargo test refund_webhook: FAILED (timeout waiting for port 8081)",
            },
            WindowMessage {
                author: "assistant",
                timestamp: at.plus_millis(60_000),
                content: "The mock server starts asynchronously; the test now waits for its port. It passes.",
            },
        ];
        let prompt = story_prompt(&messages);
        insta::assert_snapshot!(format!("SYSTEM:\n{}\n\nUSER:\n{}", prompt.system, prompt.user));
    }

    #[test]
    fn a_story_reads_as_one_paragraph_of_named_parts() {
        let answer = json!({"title": "Fixing  the refund webhook test", "intent": "Make the refund webhook test pass",
            "what_happened": "The agent found the mock server started late and made the test wait for its port",
            "learned": "The payments mock server starts asynchronously.", "completed": "The test passes", "notes": ""});
        let story = parse_story(&answer.to_string()).unwrap();
        assert_eq!(story.title, "Fixing the refund webhook test");
        assert_eq!(
            story.narrative(),
            "Intent: Make the refund webhook test pass. What happened: The agent found the mock server started late and made the test wait for its port. Learned: The payments mock server starts asynchronously. Completed: The test passes."
        );
    }

    #[test]
    fn a_story_without_a_title_or_events_is_refused() {
        let error =
            parse_story(&json!({"title": " ", "what_happened": "x"}).to_string()).unwrap_err();
        assert!(error.to_string().contains("\"title\""), "{error}");
        let error = parse_story(&json!({"title": "t"}).to_string()).unwrap_err();
        assert!(error.to_string().contains("\"what_happened\""), "{error}");
    }
}
