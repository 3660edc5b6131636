//! Consolidation: one call reads a few episodes and the facts known so far, and proposes what
//! to add, confirm, change or retract.

use serde_json::{Value, json};

use super::{AnswerError, ChatPrompt, WindowMessage, json_in, message_lines};
use crate::facts::FactAction;

/// An episode as the model sees it.
#[derive(Debug, Clone, Copy)]
pub struct EpisodeToConsolidate<'a> {
    pub title: &'a str,
    pub summary: &'a str,
    pub messages: &'a [WindowMessage<'a>],
}

/// What the model proposed, and what was refused (ids it invented, actions without
/// provenance), each with why.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedConsolidation {
    pub actions: Vec<FactAction>,
    pub rejected: Vec<String>,
}

const SYSTEM: &str = "\
You keep a list of lasting facts about the people and the work in a conversation: \
preferences, relationships, plans, decisions, states of affairs that will still matter later. \
Not events that only happened once, and not small talk. Read the new episodes and compare them \
with the known facts. For each fact the episodes bear on, give one action:
- new: a fact not known yet (fact_id empty, text the fact).
- reinforce: the episodes confirm a known fact (its fact_id, text empty).
- update: a known fact changed (its fact_id, text the fact as it is now).
- invalidate: a known fact is no longer true (its fact_id, text empty).
Every action names the episodes it comes from in episode_ids (e1, e2, ...). Write each fact as \
one short sentence in the third person that names who it is about. Give no action when \
nothing lasting was said.";

/// The prompt for `episodes` against `facts` (the valid facts' texts): fact `j` is named
/// `f{j+1}`, episode `i` `e{i+1}`.
pub fn consolidation_prompt(episodes: &[EpisodeToConsolidate<'_>], facts: &[&str]) -> ChatPrompt {
    let mut user = String::from("Known facts:\n");
    if facts.is_empty() {
        user.push_str("(none yet)\n");
    }
    for (j, fact) in facts.iter().enumerate() {
        user.push_str(&format!(
            "f{}: {}\n",
            j + 1,
            fact.split_whitespace().collect::<Vec<_>>().join(" ")
        ));
    }
    user.push_str("\nNew episodes:\n");
    for (i, e) in episodes.iter().enumerate() {
        user.push_str(&format!("e{}: {} — {}\n", i + 1, e.title.trim(), e.summary.trim()));
        user.push_str(&message_lines(e.messages));
    }
    let schema = json!({
        "type": "object",
        "properties": {
            "actions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["new", "reinforce", "update", "invalidate"]},
                        "fact_id": {"type": "string"},
                        "text": {"type": "string"},
                        "episode_ids": {"type": "array", "items": {"type": "string"}}
                    },
                    "required": ["action", "fact_id", "text", "episode_ids"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["actions"],
        "additionalProperties": false
    });
    ChatPrompt { system: SYSTEM.to_owned(), user, schema_name: "fact_actions", schema }
}

/// Reads the proposed actions for `facts` known facts and `episodes` episodes. An action that
/// names a fact or an episode the prompt did not show, cites no episode, or lacks its text is
/// refused (and said why); an answer that is not JSON or has no list of actions is an error.
pub fn parse_consolidation(
    answer: &str,
    facts: usize,
    episodes: usize,
) -> Result<ParsedConsolidation, AnswerError> {
    let value = json_in(answer)?;
    let Some(items) = value.get("actions").and_then(Value::as_array) else {
        return Err(AnswerError("no \"actions\" array".into()));
    };
    let mut parsed = ParsedConsolidation { actions: Vec::new(), rejected: Vec::new() };
    for (n, item) in items.iter().enumerate() {
        match action(item, facts, episodes) {
            Ok(action) => parsed.actions.push(action),
            Err(why) => parsed.rejected.push(format!("action {n}: {why}")),
        }
    }
    Ok(parsed)
}

fn action(item: &Value, facts: usize, episodes: usize) -> Result<FactAction, String> {
    let field = |name: &str| item.get(name).and_then(Value::as_str).unwrap_or("").trim().to_owned();
    let index = |id: &str, prefix: char, count: usize| -> Result<usize, String> {
        match id.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok()) {
            Some(n @ 1..) if n <= count => Ok(n - 1),
            _ => Err(format!("{id:?} is not one of the ids given")),
        }
    };
    let mut cited = Vec::new();
    for id in item.get("episode_ids").and_then(Value::as_array).into_iter().flatten() {
        let i = index(id.as_str().unwrap_or("").trim(), 'e', episodes)?;
        if !cited.contains(&i) {
            cited.push(i);
        }
    }
    if cited.is_empty() {
        return Err("it names no episode it comes from".into());
    }
    let text = || {
        let text = field("text");
        if text.is_empty() { Err("its text is empty".to_owned()) } else { Ok(text) }
    };
    let fact = || index(&field("fact_id"), 'f', facts);
    Ok(match field("action").as_str() {
        "new" => FactAction::New { text: text()?, episodes: cited },
        "reinforce" => FactAction::Reinforce { fact: fact()?, episodes: cited },
        "update" => FactAction::Update { fact: fact()?, text: text()?, episodes: cited },
        "invalidate" => FactAction::Invalidate { fact: fact()?, episodes: cited },
        other => return Err(format!("{other:?} is not new, reinforce, update or invalidate")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timestamp;

    #[test]
    fn the_prompt_lists_the_known_facts_and_the_new_episodes() {
        let at = Timestamp::parse_rfc3339("2026-05-03T09:00:00Z").unwrap();
        let first = [WindowMessage {
            author: "Ana",
            timestamp: at,
            content: "We moved to Lisbon last week!",
        }];
        let second = [WindowMessage {
            author: "Ana",
            timestamp: at.plus_millis(3_600_000),
            content: "Rui the dog loves the beach.",
        }];
        let episodes = [
            EpisodeToConsolidate {
                title: "Ana moved to Lisbon",
                summary: "Ana says they moved.",
                messages: &first,
            },
            EpisodeToConsolidate {
                title: "The dog at the beach",
                summary: "Ana talks about Rui.",
                messages: &second,
            },
        ];
        let prompt =
            consolidation_prompt(&episodes, &["Ana lives in Porto", "Ana has a dog named Rui"]);
        insta::assert_snapshot!(format!("SYSTEM:\n{}\n\nUSER:\n{}", prompt.system, prompt.user));
    }

    #[test]
    fn actions_are_read_and_invented_ids_refused() {
        let answer = json!({"actions": [
            {"action": "update", "fact_id": "f1", "text": "Ana lives in Lisbon", "episode_ids": ["e1"]},
            {"action": "reinforce", "fact_id": "f2", "text": "", "episode_ids": ["e2", "e2"]},
            {"action": "new", "fact_id": "", "text": "Ana likes the beach", "episode_ids": ["e2"]},
            {"action": "invalidate", "fact_id": "f9", "text": "", "episode_ids": ["e1"]},
            {"action": "new", "fact_id": "", "text": "Made up", "episode_ids": ["ep_4b1c"]},
            {"action": "new", "fact_id": "", "text": "No source", "episode_ids": []},
            {"action": "new", "fact_id": "", "text": " ", "episode_ids": ["e1"]},
            {"action": "merge", "fact_id": "f1", "text": "x", "episode_ids": ["e1"]}
        ]});
        let parsed = parse_consolidation(&answer.to_string(), 2, 2).unwrap();
        assert_eq!(
            parsed.actions,
            [
                FactAction::Update {
                    fact: 0,
                    text: "Ana lives in Lisbon".into(),
                    episodes: vec![0]
                },
                FactAction::Reinforce { fact: 1, episodes: vec![1] },
                FactAction::New { text: "Ana likes the beach".into(), episodes: vec![1] },
            ]
        );
        let why = parsed.rejected.join("\n");
        for expected in [
            "\"f9\" is not one of the ids",
            "\"ep_4b1c\" is not one",
            "names no episode",
            "text is empty",
            "\"merge\"",
        ] {
            assert!(why.contains(expected), "{expected} in {why}");
        }
    }

    #[test]
    fn an_answer_without_actions_is_an_error() {
        assert!(parse_consolidation("{\"facts\": []}", 0, 1).is_err());
        assert!(parse_consolidation("{\"actions\": []}", 0, 1).unwrap().actions.is_empty());
    }
}
