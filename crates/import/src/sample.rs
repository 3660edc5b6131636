//! Made-up exports of any size, for benchmarks and tests: what a user with years of chats
//! would bring.

use serde_json::{Value, json};

/// A ChatGPT `conversations.json` of `conversations` conversations, `per_conversation`
/// messages on each one's kept branch (user and assistant in turn), every fifth conversation
/// with an edited message whose first version (and answer) is an abandoned branch.
pub fn chatgpt_export(conversations: usize, per_conversation: usize) -> String {
    let all: Vec<Value> = (0..conversations).map(|c| conversation(c, per_conversation)).collect();
    serde_json::to_string_pretty(&all).expect("JSON values serialize")
}

fn conversation(c: usize, per_conversation: usize) -> Value {
    let start = 1_600_000_000.0 + c as f64 * 3_600.0;
    let mut mapping = serde_json::Map::new();
    let root = format!("c{c}-root");
    mapping
        .insert(root.clone(), json!({"id": root, "message": null, "parent": null, "children": []}));
    let mut parent = root;
    for n in 0..per_conversation {
        let id = format!("c{c}-m{n}");
        let (role, text) = if n % 2 == 0 {
            ("user", format!("Question {n} of chat {c}: how do I keep basil number {c} alive?"))
        } else {
            ("assistant", format!("Answer {n} of chat {c}: water basil {c} when the soil is dry."))
        };
        if c.is_multiple_of(5) && n == 2 {
            // The first version of an edited message, and its answer: left behind.
            let old = format!("c{c}-old");
            mapping
                .insert(old.clone(), node(&old, role, "A first try, edited away.", start, &parent));
        }
        mapping.insert(id.clone(), node(&id, role, &text, start + n as f64 * 30.0, &parent));
        parent = id;
    }
    json!({
        "title": format!("Basil {c}"),
        "create_time": start,
        "mapping": mapping,
        "current_node": parent,
        "conversation_id": format!("sample-{c}"),
    })
}

fn node(id: &str, role: &str, text: &str, at: f64, parent: &str) -> Value {
    json!({
        "id": id,
        "message": {
            "id": id, "author": {"role": role}, "create_time": at,
            "content": {"content_type": "text", "parts": [text]}, "metadata": {},
        },
        "parent": parent,
        "children": [],
    })
}
