//! The real coding agents (Claude Code, Codex CLI, Gemini CLI, opencode, from npm at the versions
//! `scripts/agents.sh` pins) run headless against a scripted model on loopback, with the
//! hooks and the MCP server `epimem hooks install` sets up. What is asserted is what the
//! agents really did: the messages and tool calls recorded, the work unit cut, and what the
//! next session's model request carries.
//!
//! The agents are found in `EPIMEM_TEST_AGENTS` (the folder of their programs); without it
//! these tests say so and pass, unless `EPIMEM_REQUIRE_AGENTS` is set.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

use epimem_hooks::Agent;
use serde_json::Value;

use crate::common::{epimem_command, episodes_shown};

mod model;
mod sessions;

use model::{Request, Script, ScriptedModel};

/// Where the agents' programs are, if they were installed.
fn agents_bin() -> Option<PathBuf> {
    let dir = std::env::var_os("EPIMEM_TEST_AGENTS").map(PathBuf::from);
    let found = dir.filter(|d| d.join("claude").exists());
    assert!(
        found.is_some() || std::env::var_os("EPIMEM_REQUIRE_AGENTS").is_none(),
        "EPIMEM_REQUIRE_AGENTS is set but EPIMEM_TEST_AGENTS does not hold the agents \
         (run scripts/agents.sh)"
    );
    if found.is_none() {
        eprintln!("skipped: the coding agents are not installed (scripts/agents.sh)");
    }
    found
}

/// A developer's machine: a home folder of its own (the agents' settings and sessions), a
/// git repository to work in, epimem's database and configuration, and the scripted model.
pub(crate) struct Machine {
    dir: tempfile::TempDir,
    bin: PathBuf,
    home: PathBuf,
    pub(crate) project: PathBuf,
    db: PathBuf,
    config: PathBuf,
    pub(crate) model: ScriptedModel,
}

impl Machine {
    pub(crate) fn new() -> Option<Self> {
        Self::with_hooks("")
    }

    /// A machine whose `[hooks]` settings add `hooks` (a line such as `hand = "start"`).
    pub(crate) fn with_hooks(hooks: &str) -> Option<Self> {
        let bin = agents_bin()?;
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("shop");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(project.join("src")).unwrap();
        let git = Command::new("git").args(["init", "-q"]).current_dir(&project).status();
        if !git.is_ok_and(|s| s.success()) {
            std::fs::create_dir_all(project.join(".git")).unwrap();
        }
        let config = dir.path().join("epimem.toml");
        // The model-free embedder, named in the file: an agent need not pass its environment
        // to the MCP servers it starts (Codex does not). The tests close sessions
        // themselves, where the hooks would start it in the background.
        let settings = format!("embedder = \"hash\"\n\n[hooks]\nbackground = false\n{hooks}\n");
        std::fs::write(&config, settings).unwrap();
        let db = dir.path().join("memory.db");
        let machine = Self { bin, home, project, db, config, model: ScriptedModel::start(), dir };
        machine.set_up_agents();
        Some(machine)
    }

    /// What each agent needs to talk to the scripted model, as a user would configure it.
    fn set_up_agents(&self) {
        let url = self.model.url();
        let codex = self.home.join(".codex");
        std::fs::create_dir_all(&codex).unwrap();
        std::fs::write(
            codex.join("config.toml"),
            format!(
                "model = \"scripted\"\nmodel_provider = \"local\"\n\
                 check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n\n\
                 [model_providers.local]\nname = \"local\"\nbase_url = \"{url}/v1\"\n\
                 wire_api = \"responses\"\n\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                self.project.display()
            ),
        )
        .unwrap();
        let gemini = self.home.join(".gemini");
        std::fs::create_dir_all(&gemini).unwrap();
        // opencode's provider is the project's (`opencode.json`), as its documentation shows.
        let opencode = serde_json::json!({
            "provider": {"local": {"npm": "@ai-sdk/openai-compatible", "name": "local",
                "options": {"baseURL": format!("{url}/v1"), "apiKey": "sk-scripted"},
                "models": {"scripted": {"name": "scripted"}}}},
            "model": "local/scripted",
            "permission": {"bash": "allow"}
        });
        std::fs::write(self.project.join("opencode.json"), opencode.to_string()).unwrap();
        std::fs::write(
            gemini.join("settings.json"),
            r#"{"security": {"auth": {"selectedType": "gemini-api-key"}},
                "privacy": {"usageStatisticsEnabled": false},
                "telemetry": {"enabled": false}}"#,
        )
        .unwrap();
    }

    /// `epimem` on this machine's database and configuration.
    pub(crate) fn epimem(&self, args: &[&str]) -> Output {
        let out = epimem_command(&self.db)
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .env("HOME", &self.home)
            .env("CODEX_HOME", self.home.join(".codex"))
            .current_dir(&self.project)
            .output()
            .unwrap();
        assert!(out.status.success(), "epimem {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    /// `epimem hooks install --agent NAME` in the project.
    pub(crate) fn install(&self, agent: Agent) -> String {
        let out = self.epimem(&["hooks", "install", "--agent", agent.name()]);
        String::from_utf8(out.stdout).unwrap()
    }

    /// One headless session of `agent` on `prompt`, the model following `script`. Returns
    /// the model requests the session made.
    pub(crate) fn session(&self, agent: Agent, prompt: &str, script: Script) -> Vec<Request> {
        self.run_session(agent, prompt, script, None)
    }

    /// A Claude Code session `id` resumed headless with `prompt`.
    pub(crate) fn resume_claude(&self, id: &str, prompt: &str, script: Script) -> Vec<Request> {
        self.run_session(Agent::Claude, prompt, script, Some(id))
    }

    fn run_session(
        &self,
        agent: Agent,
        prompt: &str,
        script: Script,
        resume: Option<&str>,
    ) -> Vec<Request> {
        self.model.clear();
        self.model.script(script);
        let url = self.model.url();
        let mut command = Command::new(self.bin.join(agent.name()));
        match agent {
            Agent::Claude => {
                if let Some(id) = resume {
                    command.args(["--resume", id]);
                }
                command
                    .args(["-p", prompt, "--allowedTools", "Bash"])
                    .env("ANTHROPIC_BASE_URL", &url)
                    .env("ANTHROPIC_API_KEY", "sk-scripted")
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
            }
            Agent::Codex => {
                command
                    .args(["exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust"])
                    .arg("--dangerously-bypass-approvals-and-sandbox")
                    .arg(prompt)
                    .env("OPENAI_API_KEY", "sk-scripted");
            }
            // opencode fetches a model catalogue and installs its plugin package with npm at
            // start: the catalogue is not fetched, the package comes from the npm cache
            // `scripts/agents.sh` filled (nothing leaves loopback).
            Agent::Opencode => {
                let cache = self.bin.join("../../npm-cache");
                command
                    .args(["run", prompt])
                    .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                    .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                    .env("npm_config_offline", "true")
                    .env("npm_config_cache", cache);
            }
            Agent::Gemini => {
                command
                    .args(["-p", prompt, "--yolo"])
                    .env("GOOGLE_GEMINI_BASE_URL", &url)
                    .env("GEMINI_API_KEY", "scripted")
                    .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
            }
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.bin.clone()];
        dirs.extend(std::env::split_paths(&path));
        let started = std::time::Instant::now();
        let out = command
            .current_dir(&self.project)
            // What a shell sets: opencode takes its folder from it.
            .env("PWD", &self.project)
            .env("PATH", std::env::join_paths(dirs).unwrap())
            .env("HOME", &self.home)
            .env("CODEX_HOME", self.home.join(".codex"))
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("EPIMEM_EMBEDDER", "hash")
            .env_remove("EPIMEM_TENANT")
            .env_remove("EPIMEM_CONFIG")
            .env_remove("EPIMEM_LLM_URL")
            .env_remove("EPIMEM_DB")
            // Cargo's, for the test binary: the agents load their own libraries.
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap();
        let said = format!(
            "{} exited {}\nstdout: {}\nstderr: {}\nhooks log: {}",
            agent.title(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
        assert!(out.status.success(), "{said}");
        if std::env::var_os("EPIMEM_TEST_AGENTS_VERBOSE").is_some() {
            eprintln!("{said}\n(took {:?})", started.elapsed());
        }
        let requests = self.model.requests();
        assert!(requests.iter().any(Request::offers_tools), "no turn reached the model: {said}");
        requests
    }

    /// What the hooks would start once a session ends: close what it left pending.
    pub(crate) fn close_sessions(&self) {
        self.epimem(&["flush"]);
    }

    /// Every episode with its messages, oldest first.
    pub(crate) fn episodes(&self) -> Vec<Value> {
        episodes_shown(|args| self.epimem(args), &["--limit", "100"])
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("memory.db.hooks/hooks.log"))
            .unwrap_or_default()
    }

    pub(crate) fn db(&self) -> &Path {
        &self.db
    }
}

/// The first request of a session that is a turn of the agent (not a title or a routing
/// call): what the model was told when the session's work began.
pub(crate) fn first_turn(requests: &[Request]) -> &Request {
    requests.iter().find(|r| r.offers_tools()).expect("a turn")
}
