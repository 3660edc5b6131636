//! Timeline rollups told by the model: a period summed up from its children's summaries.

use serde_json::{Value, json};

use super::{AnswerError, ChatPrompt, json_in};
use crate::NodeSummary;

const SYSTEM: &str = "\
You sum up a period of someone's conversations and work (a day, a week, a month or a year) \
from the summaries of what it holds, for a table of contents they will browse later. Give a \
title of 3 to 12 words naming what the period was mostly about, up to 6 bullets of the things \
worth remembering (one short sentence each, most important first), up to 8 keywords, and up \
to 6 names of the people, places and named things it involved. Use only what the summaries \
say.";

/// The prompt summing up `period` (say, "the week of 2026-02-23 to 2026-03-01") from its
/// children, in time order.
pub fn rollup_prompt(period: &str, children: &[NodeSummary]) -> ChatPrompt {
    let mut user = format!("The period: {period}. What it holds ({}):\n", children.len());
    for child in children {
        user.push_str(&format!("- {} ({} episode(s))", child.title.trim(), child.episodes));
        if !child.bullets.is_empty() {
            user.push_str(": ");
            user.push_str(&child.bullets.join("; "));
        }
        if !child.keywords.is_empty() {
            user.push_str(&format!(" [{}]", child.keywords.join(", ")));
        }
        if !child.names.is_empty() {
            user.push_str(&format!(" (names: {})", child.names.join(", ")));
        }
        user.push('\n');
    }
    let strings = json!({"type": "array", "items": {"type": "string"}});
    let schema = json!({
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "bullets": strings,
            "keywords": strings,
            "names": strings
        },
        "required": ["title", "bullets", "keywords", "names"],
        "additionalProperties": false
    });
    ChatPrompt { system: SYSTEM.to_owned(), user, schema_name: "period_summary", schema }
}

/// Reads a rollup: a title (not empty), at most 6 bullets, 8 keywords (lower case) and 6
/// names (those of `counted` if it gives none); the counts and the salience are not the
/// model's to give and stay those of `counted`.
pub fn parse_rollup(answer: &str, counted: &NodeSummary) -> Result<NodeSummary, AnswerError> {
    let value = json_in(answer)?;
    let clean = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let title = clean(value.get("title").and_then(Value::as_str).unwrap_or(""));
    if title.is_empty() {
        return Err(AnswerError("\"title\" is missing or empty".into()));
    }
    let list = |name: &str, max: usize| -> Vec<String> {
        value
            .get(name)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(clean)
            .filter(|s| !s.is_empty())
            .take(max)
            .collect()
    };
    Ok(NodeSummary {
        title,
        bullets: list("bullets", 6),
        keywords: list("keywords", 8).into_iter().map(|k| k.to_lowercase()).collect(),
        names: Some(list("names", 6)).filter(|n| !n.is_empty()).unwrap_or(counted.names.clone()),
        episodes: counted.episodes,
        messages: counted.messages,
        salience: counted.salience,
        bullet_salience: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child(title: &str, bullets: &[&str], keywords: &[&str]) -> NodeSummary {
        NodeSummary {
            title: title.into(),
            bullets: bullets.iter().map(|b| (*b).to_owned()).collect(),
            keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
            names: vec!["Ana".into()],
            episodes: 2,
            messages: 9,
            salience: 9.5,
            bullet_salience: Vec::new(),
        }
    }

    #[test]
    fn the_prompt_lists_the_children_in_order() {
        let children = [
            child("Webhook test fails after the merge", &[], &["webhook", "merge"]),
            child(
                "webhook, test and port",
                &["Webhook test fixed", "Port wait added"],
                &["webhook", "port"],
            ),
        ];
        let prompt = rollup_prompt("the week of 2026-02-23 to 2026-03-01", &children);
        insta::assert_snapshot!(format!("SYSTEM:\n{}\n\nUSER:\n{}", prompt.system, prompt.user));
    }

    #[test]
    fn a_rollup_keeps_the_counts_and_bounds_the_lists() {
        let counted = child("x", &[], &[]);
        let bullets: Vec<String> = (0..9).map(|i| format!("point {i}")).collect();
        let answer = json!({"title": " Fixing  the payments CI ", "bullets": bullets, "keywords": ["CI", "Webhook", ""]});
        let node = parse_rollup(&answer.to_string(), &counted).unwrap();
        assert_eq!(node.title, "Fixing the payments CI");
        assert_eq!(node.bullets.len(), 6);
        assert_eq!(node.keywords, ["ci", "webhook"]);
        assert_eq!((node.episodes, node.messages), (2, 9), "counted, not the model's");
        assert_eq!(node.salience, 9.5);
        assert_eq!(node.names, ["Ana"], "none given: the counted ones");
        let named = json!({"title": "A week", "bullets": [], "keywords": [], "names": ["Lisbon"]});
        assert_eq!(parse_rollup(&named.to_string(), &counted).unwrap().names, ["Lisbon"]);
        assert!(parse_rollup("{\"bullets\": []}", &counted).is_err());
    }
}
