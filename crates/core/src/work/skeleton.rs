//! The skeleton of an episode of agent work (what it touched, how much it looked and acted,
//! what failed) and the story the LLM-free path tells from it.

use serde::{Deserialize, Serialize};

use super::{Action, closes_work};
use crate::{
    Message, Role, Timestamp,
    telling::keywords::word_count,
    telling::{Summary, SummaryConfig, summarize},
};

/// A file an episode touched, and how many of its actions did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HotFile {
    pub path: String,
    pub touches: usize,
}

/// The facts of an episode of work, counted from its messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skeleton {
    /// The user's prompts, and the first and last of them (sequence numbers).
    pub prompts: usize,
    pub first_prompt: Option<u64>,
    pub last_prompt: Option<u64>,
    /// Actions that read or searched.
    pub investigate: usize,
    /// Actions that edited, wrote or ran commands.
    pub execute: usize,
    /// Actions that failed.
    pub failures: usize,
    /// The files touched most, most first (at most five).
    pub hot_files: Vec<HotFile>,
    /// What failed, in order, each once (commands, searches or files).
    pub failed: Vec<String>,
    /// The commits made (their command lines).
    pub commits: Vec<String>,
    /// From the first message to the last, in milliseconds.
    pub duration_ms: i64,
}

const HOT_FILES: usize = 5;

/// The skeleton of `messages` (one episode, in order), if any of them is an agent's action.
pub fn skeleton(messages: &[Message]) -> Option<Skeleton> {
    let actions: Vec<Action> =
        messages.iter().filter_map(|m| Action::of_metadata(&m.metadata)).collect();
    if actions.is_empty() {
        return None;
    }
    let prompts: Vec<u64> =
        messages.iter().filter(|m| m.role == Role::User).map(|m| m.seq).collect();
    let mut files: Vec<HotFile> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    for action in &actions {
        for path in &action.files {
            match files.iter_mut().find(|f| &f.path == path) {
                Some(file) => file.touches += 1,
                None => files.push(HotFile { path: path.clone(), touches: 1 }),
            }
        }
        let what = action.what();
        if action.failed && !failed.contains(&what) {
            failed.push(what);
        }
    }
    // Most touched first; among equals, the first touched.
    files.sort_by_key(|f| std::cmp::Reverse(f.touches));
    files.truncate(HOT_FILES);
    let times = messages.iter().map(|m| m.timestamp);
    let (start, end) = (times.clone().min(), times.max());
    Some(Skeleton {
        prompts: prompts.len(),
        first_prompt: prompts.first().copied(),
        last_prompt: prompts.last().copied(),
        investigate: actions.iter().filter(|a| a.kind.investigates()).count(),
        execute: actions.iter().filter(|a| a.kind.executes()).count(),
        failures: actions.iter().filter(|a| a.failed).count(),
        hot_files: files,
        failed,
        commits: actions.iter().filter(|a| a.commits()).filter_map(|a| a.subject.clone()).collect(),
        duration_ms: match (start, end) {
            (Some(Timestamp(s)), Some(Timestamp(e))) => e - s,
            _ => 0,
        },
    })
}

/// How an agent worked, in words: "3 reads or searches, 4 edits or commands, 1 failure" (the
/// failures only when there were some).
pub fn action_counts(investigate: usize, execute: usize, failures: usize) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = vec![
        plural(investigate, "read or search", "reads or searches"),
        plural(execute, "edit or command", "edits or commands"),
    ];
    if failures > 0 {
        parts.push(plural(failures, "failure", "failures"));
    }
    parts.join(", ")
}

impl Skeleton {
    /// "3 reads or searches, 4 edits or commands, 1 failure".
    pub fn counts(&self) -> String {
        action_counts(self.investigate, self.execute, self.failures)
    }

    /// The hot files' paths, most touched first.
    pub fn files(&self) -> Vec<&str> {
        self.hot_files.iter().map(|f| f.path.as_str()).collect()
    }
}

/// An episode told without a model: as agent work if it holds actions, else by its sentences.
pub fn told_extractively(messages: &[Message], config: &SummaryConfig) -> Summary {
    work_story(messages, config).unwrap_or_else(|| summarize(messages, config))
}

/// The longest an intent quoted from a prompt may be, in words.
const INTENT_WORDS: usize = 30;

/// An episode of work told without a model: its title from what the user asked (not from the
/// tools' output), its summary the story's parts (intent, what happened, completed, notes)
/// from the opening prompt and the skeleton. `None` when the episode holds no action.
pub fn work_story(messages: &[Message], config: &SummaryConfig) -> Option<Summary> {
    let skeleton = skeleton(messages)?;
    let prompts: Vec<Message> = messages.iter().filter(|m| m.role == Role::User).cloned().collect();
    // The words the user used say what the work is about; tool output would drown them.
    let from_prompts = (!prompts.is_empty()).then(|| summarize(&prompts, config));
    let everything = summarize(messages, config);
    let (title, keywords) = match from_prompts {
        Some(told) if !told.title.is_empty() => {
            let mut keywords = told.keywords;
            for k in everything.keywords {
                if keywords.len() >= config.max_keywords {
                    break;
                }
                if !keywords.contains(&k) {
                    keywords.push(k);
                }
            }
            (told.title, keywords)
        }
        _ => (everything.title, everything.keywords),
    };
    let intent = prompts
        .iter()
        .find(|m| word_count(&m.content) >= 3 && !closes_work(&m.content))
        .or(prompts.first())
        .map(|m| first_sentence(&m.content, INTENT_WORDS));
    let mut parts = Vec::new();
    if let Some(intent) = intent.filter(|i| !i.is_empty()) {
        parts.push(format!("Intent: {}", end_sentence(&intent)));
    }
    parts.push(format!("What happened: {}.", skeleton.counts()));
    if !skeleton.hot_files.is_empty() {
        parts.push(format!("Files: {}.", skeleton.files().join(", ")));
    }
    if !skeleton.commits.is_empty() {
        parts.push(format!("Completed: {}.", skeleton.commits.join("; ")));
    }
    if !skeleton.failed.is_empty() {
        parts.push(format!("Notes: failed: {}.", skeleton.failed.join("; ")));
    }
    Some(Summary { title, summary: parts.join(" "), keywords })
}

/// The first sentence of `text`, at most `max_words` words (an ellipsis says where it was cut).
fn first_sentence(text: &str, max_words: usize) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let end = line
        .char_indices()
        .find(|&(i, c)| {
            matches!(c, '.' | '!' | '?') && line[i + c.len_utf8()..].starts_with([' ', '\t'])
        })
        .map_or(line.len(), |(i, c)| i + c.len_utf8());
    let words: Vec<&str> = line[..end].split_whitespace().collect();
    if words.len() > max_words {
        format!("{}…", words[..max_words].join(" "))
    } else {
        words.join(" ")
    }
}

fn end_sentence(text: &str) -> String {
    if text.ends_with(['.', '!', '?', '…']) { text.to_owned() } else { format!("{text}.") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::{ACTION_KEY, ActionKind};

    pub(crate) fn prompt(seq: u64, at: i64, text: &str) -> Message {
        message(seq, at, Role::User, text, serde_json::json!({}))
    }

    pub(crate) fn act(seq: u64, at: i64, action: Action) -> Message {
        let content = action.describe();
        message(seq, at, Role::Tool, &content, serde_json::json!({ ACTION_KEY: action }))
    }

    fn message(
        seq: u64,
        at: i64,
        role: Role,
        content: &str,
        metadata: serde_json::Value,
    ) -> Message {
        Message {
            seq,
            key: format!("k{seq}"),
            role,
            speaker: None,
            content: content.into(),
            timestamp: Timestamp(at * 1000),
            metadata,
            tokens: 5,
        }
    }

    pub(crate) fn action(
        kind: ActionKind,
        tool: &str,
        files: &[&str],
        subject: Option<&str>,
        failed: bool,
    ) -> Action {
        Action {
            kind,
            tool: tool.into(),
            files: files.iter().map(|f| f.to_string()).collect(),
            subject: subject.map(str::to_owned),
            failed,
        }
    }

    fn debugging() -> Vec<Message> {
        vec![
            prompt(1, 0, "The refund webhook test fails since the merge. Can you find out why?"),
            act(
                2,
                10,
                action(ActionKind::Command, "Bash", &[], Some("cargo test refund_webhook"), true),
            ),
            act(3, 20, action(ActionKind::FileRead, "Read", &["src/webhook.rs"], None, false)),
            act(4, 25, action(ActionKind::Search, "Grep", &[], Some("mock_server"), false)),
            message(
                5,
                40,
                Role::Assistant,
                "The mock server starts asynchronously.",
                serde_json::json!({}),
            ),
            act(6, 60, action(ActionKind::FileEdit, "Edit", &["tests/webhook.rs"], None, false)),
            act(7, 70, action(ActionKind::FileEdit, "Edit", &["src/webhook.rs"], None, false)),
            act(8, 80, action(ActionKind::FileRead, "Read", &["src/webhook.rs"], None, false)),
            act(
                9,
                90,
                action(ActionKind::Command, "Bash", &[], Some("cargo test refund_webhook"), false),
            ),
            act(
                10,
                100,
                action(
                    ActionKind::Command,
                    "Bash",
                    &[],
                    Some("git commit -am 'Wait for the mock port'"),
                    false,
                ),
            ),
        ]
    }

    #[test]
    fn the_skeleton_counts_what_the_agent_did() {
        let s = skeleton(&debugging()).unwrap();
        assert_eq!((s.prompts, s.first_prompt, s.last_prompt), (1, Some(1), Some(1)));
        assert_eq!((s.investigate, s.execute, s.failures), (3, 5, 1));
        assert_eq!(s.files(), ["src/webhook.rs", "tests/webhook.rs"]);
        assert_eq!(s.hot_files[0].touches, 3);
        assert_eq!(s.failed, ["cargo test refund_webhook"]);
        assert_eq!(s.commits, ["git commit -am 'Wait for the mock port'"]);
        assert_eq!(s.duration_ms, 100_000);
        assert_eq!(skeleton(&debugging()[..1]), None, "a prompt alone is no work");
    }

    #[test]
    fn the_story_names_the_intent_and_what_happened() {
        let story = work_story(&debugging(), &SummaryConfig::default()).unwrap();
        insta::assert_snapshot!(format!(
            "{}\n{}\n{:?}",
            story.title, story.summary, story.keywords
        ));
    }

    #[test]
    fn a_long_prompt_is_quoted_to_its_first_sentence_or_cut_at_a_word() {
        assert_eq!(first_sentence("Fix the build. Then push it.", 30), "Fix the build.");
        assert_eq!(first_sentence("v1.2 is out. Bump it", 30), "v1.2 is out.");
        let long = "word ".repeat(40);
        assert_eq!(first_sentence(&long, 3), "word word word…");
    }

    /// The UI, the tools and the hooks show either telling without telling them apart.
    #[test]
    fn the_extractive_story_names_the_same_parts_as_the_models() {
        let extractive = work_story(&debugging(), &SummaryConfig::default()).unwrap().summary;
        let story = crate::llm::Story {
            title: "Fixing the refund webhook test".into(),
            intent: "Find why the refund webhook test fails".into(),
            what_happened: "The test waited too little for the mock server".into(),
            learned: String::new(),
            completed: "It passes".into(),
            notes: "A first try failed".into(),
        };
        let parts = ["Intent: ", "What happened: ", "Learned: ", "Completed: ", "Notes: "];
        let named = |text: &str| -> Vec<&str> {
            parts.iter().copied().filter(|p| text.contains(p)).collect()
        };
        assert_eq!(named(&extractive), named(&story.narrative()), "{extractive}");
        assert!(extractive.starts_with("Intent: The refund webhook test fails"), "{extractive}");
    }
}
