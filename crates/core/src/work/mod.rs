//! Agent work: what a coding agent did between a user's prompts, as observations.
//!
//! An action is recorded as a `tool` message whose content describes it in one line (`Edit
//! src/auth.rs`, `$ cargo test [failed]`), followed by what it printed, and whose metadata
//! holds the [`Action`] under `"action"`. The skeleton of an episode of work, its LLM-free
//! story and the patterns across sessions are read back from those messages.

mod context;
mod patterns;
mod prompt;
mod skeleton;

use serde::{Deserialize, Serialize};

pub use context::{
    PromptMatch, RuleLine, SessionLine, StartBlock, StartContext, WorkItem, prompt_matches,
    render_prompt_context, render_start_context,
};
pub use patterns::{
    FailurePattern, IntentPattern, SessionWork, failure_patterns, recurring_intents,
};
pub use prompt::{PROMPT_EPISODES, PromptHit, prompt_recalled};
pub use skeleton::{HotFile, Skeleton, action_counts, skeleton, told_extractively, work_story};

/// What kind of thing an action did: investigating (reading, searching) or executing
/// (editing, writing, running commands).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    FileRead,
    FileEdit,
    FileWrite,
    Search,
    Command,
    Other,
}

impl ActionKind {
    /// The kind of a Claude Code tool, by its name; tools it does not know (MCP tools, agents,
    /// to-do lists) are `Other`.
    pub fn of_tool(tool: &str) -> Self {
        match tool {
            // Claude Code's and Codex CLI's names, then Gemini CLI's, then opencode's.
            "Read" | "NotebookRead" | "read_file" | "read_many_files" | "read" => Self::FileRead,
            "Edit" | "MultiEdit" | "NotebookEdit" | "apply_patch" | "replace" | "edit"
            | "multiedit" | "patch" => Self::FileEdit,
            "Write" | "write_file" | "write" => Self::FileWrite,
            "Grep" | "Glob" | "LS" | "WebSearch" | "WebFetch" | "grep_search" | "glob"
            | "list_directory" | "google_web_search" | "web_fetch" | "grep" | "list"
            | "webfetch" | "websearch" => Self::Search,
            "Bash" | "BashOutput" | "run_shell_command" | "bash" => Self::Command,
            _ => Self::Other,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::FileRead => "file_read",
            Self::FileEdit => "file_edit",
            Self::FileWrite => "file_write",
            Self::Search => "search",
            Self::Command => "command",
            Self::Other => "other",
        }
    }

    /// Reading and searching: finding out.
    pub fn investigates(self) -> bool {
        matches!(self, Self::FileRead | Self::Search)
    }

    /// Editing, writing and running: changing things.
    pub fn executes(self) -> bool {
        matches!(self, Self::FileEdit | Self::FileWrite | Self::Command)
    }
}

/// One tool action of an agent, as kept in its message's metadata under `"action"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    pub kind: ActionKind,
    /// The tool's name as the agent called it (`Bash`, `Edit`, `mcp__github__search`).
    pub tool: String,
    /// The files it read or changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// What it ran or looked for: a command line, a search pattern, an address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(default)]
    pub failed: bool,
}

/// The metadata key an action is kept under.
pub const ACTION_KEY: &str = "action";

/// What a failed action leaves as its line's last word, so the words of a line say it failed.
const FAILED_MARK: &str = " [failed]";

impl Action {
    /// The action of a message, from its metadata; `None` for anything else.
    pub fn of_metadata(metadata: &serde_json::Value) -> Option<Action> {
        Action::deserialize(metadata.get(ACTION_KEY)?).ok()
    }

    /// The action in one line: `Edit src/auth.rs`, `$ cargo test [failed]`, `Grep "refund"`.
    pub fn describe(&self) -> String {
        let mut line = match (self.kind, &self.subject) {
            (ActionKind::Command, Some(command)) => format!("$ {}", one_line(command)),
            (_, subject) => {
                let mut line = self.tool.clone();
                if let Some(subject) = subject {
                    line.push_str(&format!(" {:?}", one_line(subject)));
                }
                for file in &self.files {
                    line.push(' ');
                    line.push_str(file);
                }
                line
            }
        };
        if self.failed {
            line.push_str(FAILED_MARK);
        }
        line
    }

    /// What this action is called in a pattern: its command or search, else its files.
    pub fn what(&self) -> String {
        match &self.subject {
            Some(subject) if self.kind == ActionKind::Command => one_line(subject),
            _ if !self.files.is_empty() => self.files.join(", "),
            Some(subject) => format!("{} {:?}", self.tool, one_line(subject)),
            None => self.tool.clone(),
        }
    }

    /// Whether this action committed work to git (a resolution: what was done is kept).
    pub fn commits(&self) -> bool {
        self.kind == ActionKind::Command
            && !self.failed
            && self.subject.as_deref().is_some_and(runs_git_commit)
    }
}

/// Whether a message's text holds a successful `git commit` as [`Action::describe`] writes it:
/// the segmenters see text, not metadata. Any line counts, not only the first: an agent that
/// reports several actions in one message (`Edit src/ci.yml`, then `$ git commit -am …`) has
/// committed as surely as one that reports them one by one.
pub fn closes_work(content: &str) -> bool {
    content.lines().any(|line| {
        line.strip_prefix("$ ").is_some_and(|command| {
            !line.ends_with(FAILED_MARK.trim_start()) && runs_git_commit(command)
        })
    })
}

/// `git commit` (its global options allowed between) as one command of a command line
/// (`git add -A && git commit -m …`).
fn runs_git_commit(command: &str) -> bool {
    command.split(['&', ';', '|', '\n']).any(|part| {
        let mut words = part.split_whitespace().skip_while(|w| *w != "git").skip(1);
        while let Some(word) = words.next() {
            match word {
                "-C" | "-c" => {
                    words.next();
                }
                w if w.starts_with('-') => {}
                w => return w == "commit",
            }
        }
        false
    })
}

/// Text on one line, white space folded.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(line: &str, failed: bool) -> Action {
        Action {
            kind: ActionKind::Command,
            tool: "Bash".into(),
            files: vec![],
            subject: Some(line.into()),
            failed,
        }
    }

    #[test]
    fn tools_have_kinds() {
        assert_eq!(ActionKind::of_tool("Read"), ActionKind::FileRead);
        assert_eq!(ActionKind::of_tool("MultiEdit"), ActionKind::FileEdit);
        assert_eq!(ActionKind::of_tool("Grep"), ActionKind::Search);
        assert_eq!(ActionKind::of_tool("Bash"), ActionKind::Command);
        assert_eq!(ActionKind::of_tool("mcp__github__create_issue"), ActionKind::Other);
        assert!(ActionKind::Search.investigates() && !ActionKind::Search.executes());
        assert!(ActionKind::FileWrite.executes());
    }

    #[test]
    fn a_commit_closes_work_and_a_failed_one_does_not() {
        for (line, failed, closes) in [
            ("git commit -m 'Fix the refund webhook'", false, true),
            ("git add -A && git commit -am wip", false, true),
            ("git -C repo commit --amend", false, true),
            ("git commit -m x", true, false),
            ("git log --grep commit", false, false),
            ("git status; echo commit", false, false),
            ("cargo test", false, false),
        ] {
            let action = command(line, failed);
            assert_eq!(action.commits(), closes, "{line}");
            assert_eq!(closes_work(&action.describe()), closes, "{line}");
        }
        let edit = Action {
            kind: ActionKind::FileEdit,
            tool: "Edit".into(),
            files: vec!["git commit".into()],
            subject: None,
            failed: false,
        };
        assert!(!closes_work(&edit.describe()));
    }

    #[test]
    fn a_commit_reported_after_another_action_closes_work() {
        let edit = "Edit .github/workflows/test.yml";
        let commit = command("git commit -am 'CI: test on macOS'", false).describe();
        let failed = command("git commit -am 'CI: test on macOS'", true).describe();
        assert!(closes_work(&format!("{edit}\n{commit}\n[main 0e4d7c1] CI: test on macOS")));
        assert!(!closes_work(&format!("{edit}\n{failed}\nnothing to commit")));
        // Output that mentions a commit is not one.
        assert!(!closes_work("$ git bisect run ./check.sh\n4c1d0e2 is the first bad commit"));
    }

    #[test]
    fn actions_read_back_from_metadata() {
        let action = command("cargo test -p payments", true);
        let metadata = serde_json::json!({ ACTION_KEY: action, "session": "s1" });
        assert_eq!(Action::of_metadata(&metadata), Some(action.clone()));
        assert_eq!(Action::of_metadata(&serde_json::json!({})), None);
        assert_eq!(action.describe(), "$ cargo test -p payments [failed]");
        assert_eq!(action.what(), "cargo test -p payments");
    }
}
