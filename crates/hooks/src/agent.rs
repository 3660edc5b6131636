//! The coding agents whose hooks epimem reads: what each calls its events, where it keeps
//! its settings, and how its hooks are set up. Claude Code, Codex CLI and Gemini CLI run a
//! command per event with JSON on standard input and read `hookSpecificOutput` on standard
//! output; they differ in the events' names, a hook's timeout unit and where the reply is.
//! opencode has no command hooks: a plugin epimem writes (`opencode-plugin.js`) sends the
//! hook Claude Code's event names.

use serde::{Deserialize, Serialize};

use crate::event::EventKind;

/// A coding agent epimem records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    #[default]
    Claude,
    Codex,
    Gemini,
    Opencode,
}

impl Agent {
    pub const ALL: [Agent; 4] = [Self::Claude, Self::Codex, Self::Gemini, Self::Opencode];

    /// The name `--agent` takes and the metadata keeps.
    pub fn name(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Opencode => "opencode",
        }
    }

    /// What a person calls it.
    pub fn title(self) -> &'static str {
        match self {
            Self::Claude => "Claude Code",
            Self::Codex => "Codex CLI",
            Self::Gemini => "Gemini CLI",
            Self::Opencode => "opencode",
        }
    }

    /// The events epimem installs a hook for, by the agent's names for them.
    pub fn events(self) -> &'static [(&'static str, EventKind)] {
        use EventKind::*;
        match self {
            Self::Claude => &[
                ("SessionStart", SessionStart),
                ("UserPromptSubmit", UserPromptSubmit),
                ("PostToolUse", PostToolUse),
                ("PostToolUseFailure", PostToolUseFailure),
                ("Stop", Stop),
                ("SessionEnd", SessionEnd),
            ],
            // Codex reports a failed command as a PostToolUse whose output says so.
            Self::Codex => &[
                ("SessionStart", SessionStart),
                ("UserPromptSubmit", UserPromptSubmit),
                ("PostToolUse", PostToolUse),
                ("Stop", Stop),
                ("SessionEnd", SessionEnd),
            ],
            Self::Gemini => &[
                ("SessionStart", SessionStart),
                ("BeforeAgent", UserPromptSubmit),
                ("AfterTool", PostToolUse),
                ("AfterAgent", Stop),
                ("SessionEnd", SessionEnd),
            ],
            // What epimem's plugin sends: opencode's sessions have no end event.
            Self::Opencode => &[
                ("SessionStart", SessionStart),
                ("UserPromptSubmit", UserPromptSubmit),
                ("PostToolUse", PostToolUse),
                ("Stop", Stop),
            ],
        }
    }

    /// The kind of the event the agent names `name`, if epimem listens to it.
    pub fn kind_of(self, name: &str) -> Option<EventKind> {
        self.events().iter().find(|(n, _)| *n == name).map(|&(_, kind)| kind)
    }

    /// A hook's `timeout` in the agent's unit: ten seconds (Gemini counts milliseconds).
    pub fn hook_timeout(self) -> u64 {
        match self {
            Self::Gemini => 10_000,
            Self::Claude | Self::Codex | Self::Opencode => 10,
        }
    }

    /// Whether the agent's replies are read from its transcript (Claude Code's JSON lines,
    /// which hold every reply of a turn), rather than from the event that ends the turn.
    pub fn reads_transcript(self) -> bool {
        self == Self::Claude
    }
}

/// An agent by its name; the error names the agents there are.
impl std::str::FromStr for Agent {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|a| a.name() == name).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|a| a.name()).collect();
            format!("no agent {name:?}; expected one of {}", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_listens_to_a_start_a_prompt_a_tool_and_a_reply() {
        for agent in Agent::ALL {
            assert_eq!(agent.name().parse(), Ok(agent));
            for kind in [
                EventKind::SessionStart,
                EventKind::UserPromptSubmit,
                EventKind::PostToolUse,
                EventKind::Stop,
            ] {
                assert!(agent.events().iter().any(|&(_, k)| k == kind), "{agent:?} {kind:?}");
            }
        }
        assert_eq!(Agent::Gemini.kind_of("BeforeAgent"), Some(EventKind::UserPromptSubmit));
        assert_eq!(Agent::Gemini.kind_of("UserPromptSubmit"), None);
        assert_eq!(Agent::Codex.kind_of("PreToolUse"), None);
    }
}
