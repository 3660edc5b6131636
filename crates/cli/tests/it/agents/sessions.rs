//! Two real sessions of each agent in one repository: the first's prompt, tool call and reply
//! are recorded and cut into a work unit, and the second session's first model request
//! carries that work. Then Codex is handed what Claude Code did.

use epimem_hooks::{Agent, CODING_AGENT_KEY};
use serde_json::Value;

use super::{Machine, Script, first_turn};

/// The first session's work: a request, one command the model runs, and its reply.
fn first_session() -> (&'static str, Script) {
    (
        "The cart total is off by a cent on discounted orders; fix the rounding in src/cart.rs",
        Script {
            command: "echo totals-now-kept-in-integer-cents".into(),
            reply: "Fixed: the cart total is now kept in integer cents, so discounted orders \
                    no longer lose a cent to float rounding."
                .into(),
        },
    )
}

/// A later session's first prompt, on the same work: what it is handed by default.
fn second_session() -> (&'static str, Script) {
    (
        "Add a test for the rounding of the cart total on discounted orders in src/cart.rs",
        Script {
            command: "echo cart-rounding-test-added".into(),
            reply: "Added a test for the cart total on discounted orders.".into(),
        },
    )
}

/// What a session's first model request says it was handed of earlier work.
const HANDED: &str = "Earlier work in this project that bears on this prompt";

/// Every message stored: (role, content, the coding agent its metadata names), read from
/// the database itself (the API does not show a message's metadata).
fn recorded(machine: &Machine) -> Vec<(String, String, String)> {
    let db = rusqlite::Connection::open(machine.db()).unwrap();
    let mut rows = db.prepare("SELECT role, content, metadata FROM messages").unwrap();
    rows.query_map([], |row| {
        let metadata: Option<String> = row.get(2)?;
        let metadata: Value =
            metadata.and_then(|m| serde_json::from_str(&m).ok()).unwrap_or(Value::Null);
        let agent = metadata[CODING_AGENT_KEY].as_str().unwrap_or("").to_owned();
        Ok((row.get(0)?, row.get(1)?, agent))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// The whole must-show for one agent.
fn remembers_its_own_sessions(agent: Agent) {
    let Some(machine) = Machine::new() else { return };
    let said = machine.install(agent);
    assert!(said.contains("hooks added") && said.contains("MCP server added"), "{said}");

    let (prompt, script) = first_session();
    let requests = machine.session(agent, prompt, script);
    let turn = first_turn(&requests);
    assert!(!turn.text().contains(HANDED), "the first session has no memory to be handed");
    let tools = turn.tool_names();
    assert!(
        tools.iter().any(|t| t.contains("recall") && t.contains("epimem") || t == "recall"),
        "{}'s model is not offered epimem's tools: {tools:?}",
        agent.title()
    );
    machine.close_sessions();

    let messages = recorded(&machine);
    let log = machine.log();
    let has = |role: &str, text: &str| {
        messages.iter().any(|(r, c, a)| r == role && c.contains(text) && a == agent.name())
    };
    assert!(has("user", "fix the rounding in src/cart.rs"), "no prompt: {messages:?}\n{log}");
    assert!(has("tool", "echo totals-now-kept-in-integer-cents"), "no tool: {messages:?}\n{log}");
    assert!(has("assistant", "kept in integer cents"), "no reply: {messages:?}\n{log}");
    let episodes = machine.episodes();
    // One work unit: the request, what was run, and how it ended.
    let unit = episodes.iter().find(|e| e["skeleton"].is_object());
    let skeleton =
        &unit.unwrap_or_else(|| panic!("no work unit was cut: {episodes:?}"))["skeleton"];
    assert!(skeleton["prompts"] == 1 && skeleton["execute"] == 1, "{skeleton}");

    let (prompt, script) = second_session();
    let requests = machine.session(agent, prompt, script);
    let told = first_turn(&requests).text();
    assert!(
        told.contains(HANDED) && told.contains("fix the rounding in src/cart.rs"),
        "the second session's first request does not carry the first's work: {told}"
    );
}

#[test]
fn claude_code_remembers_its_earlier_session() {
    remembers_its_own_sessions(Agent::Claude);
}

#[test]
fn codex_remembers_its_earlier_session() {
    remembers_its_own_sessions(Agent::Codex);
}

#[test]
fn gemini_remembers_its_earlier_session() {
    remembers_its_own_sessions(Agent::Gemini);
}

#[test]
fn opencode_remembers_its_earlier_session() {
    remembers_its_own_sessions(Agent::Opencode);
}

#[test]
fn codex_is_handed_what_claude_code_did_in_the_same_repository() {
    let Some(machine) = Machine::new() else { return };
    machine.install(Agent::Claude);
    machine.install(Agent::Codex);
    let (prompt, script) = first_session();
    machine.session(Agent::Claude, prompt, script);
    machine.close_sessions();
    let (prompt, script) = second_session();
    let requests = machine.session(Agent::Codex, prompt, script);
    let told = first_turn(&requests).text();
    assert!(
        told.contains(HANDED) && told.contains("fix the rounding in src/cart.rs"),
        "Codex's first request does not carry Claude Code's work: {told}"
    );
}

#[test]
fn a_broken_memory_never_stops_an_agent() {
    let Some(machine) = Machine::new() else { return };
    // Not a database: every hook fails to open it, and the MCP server cannot start.
    std::fs::write(machine.db(), vec![0x5a; 8192]).unwrap();
    for agent in Agent::ALL {
        machine.install(agent);
        let (prompt, script) = first_session();
        // `session` asserts that the agent exited 0 and its model was asked for a turn.
        machine.session(agent, prompt, script);
    }
    let log = machine.log();
    assert!(log.contains("cannot open the database"), "{log}");
}

#[test]
fn set_to_hand_the_start_every_agent_starts_with_the_projects_memory() {
    let Some(machine) = Machine::with_hooks("hand = \"start\"") else { return };
    for agent in Agent::ALL {
        machine.install(agent);
    }
    let (prompt, script) = first_session();
    machine.session(Agent::Claude, prompt, script);
    machine.close_sessions();
    for agent in Agent::ALL {
        let script = Script { command: "echo ok".into(), reply: "Done.".into() };
        let requests = machine.session(agent, "Add a dark mode toggle", script);
        let told = first_turn(&requests).text();
        assert!(
            told.contains("Memory of earlier sessions") && told.contains("src/cart.rs"),
            "{} did not start with the project's memory: {told}",
            agent.title()
        );
    }
}

/// A session run without the hooks and then backfilled is recorded as the hooks record it:
/// the same messages and the same work unit. Backfilling a session the hooks recorded adds
/// nothing.
fn backfilled_as_the_hooks_record(agent: Agent) {
    let Some(hooked) = Machine::new() else { return };
    hooked.install(agent);
    let (prompt, script) = first_session();
    hooked.session(agent, prompt, script.clone());
    hooked.close_sessions();

    let bare = Machine::new().expect("the agents are installed");
    bare.session(agent, prompt, script);
    let report = backfill(&bare, agent);
    assert_eq!(
        (report["sessions_found"].as_u64(), report["sessions_recorded"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(recorded(&bare), recorded(&hooked), "the same messages, by the same agent");
    // The same work units, but for how long each session took.
    let units = |m: &Machine| -> Vec<Value> {
        let mut units: Vec<Value> =
            m.episodes().into_iter().map(|e| e["skeleton"].clone()).collect();
        units
            .iter_mut()
            .filter_map(Value::as_object_mut)
            .for_each(|u| drop(u.remove("duration_seconds")));
        units
    };
    assert_eq!(units(&bare), units(&hooked), "the same work units");
    assert_eq!(units(&bare).len(), 1);

    let before = recorded(&hooked).len();
    let again = backfill(&hooked, agent);
    assert_eq!(
        (again["sessions_recorded"].as_u64(), again["skipped_already_recorded"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(recorded(&hooked).len(), before, "nothing added to a session the hooks recorded");
    assert_eq!(backfill(&bare, agent)["sessions_recorded"], 0, "backfilling twice adds nothing");
}

fn backfill(machine: &Machine, agent: Agent) -> Value {
    let out = machine.epimem(&["hooks", "backfill", "--agent", agent.name(), "--json"]);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn claude_code_sessions_backfilled_as_the_hooks_record_them() {
    backfilled_as_the_hooks_record(Agent::Claude);
}

#[test]
fn codex_sessions_backfilled_as_the_hooks_record_them() {
    backfilled_as_the_hooks_record(Agent::Codex);
}

#[test]
fn gemini_sessions_backfilled_as_the_hooks_record_them() {
    backfilled_as_the_hooks_record(Agent::Gemini);
}

#[test]
fn opencode_sessions_backfilled_as_the_hooks_record_them() {
    backfilled_as_the_hooks_record(Agent::Opencode);
}

#[test]
fn a_backfilled_claude_code_session_continued_with_the_hooks_is_not_doubled() {
    let Some(machine) = Machine::new() else { return };
    let (prompt, script) = first_session();
    machine.session(Agent::Claude, prompt, script);
    assert_eq!(backfill(&machine, Agent::Claude)["sessions_recorded"], 1);
    let before = recorded(&machine);
    let session = machine.episodes()[0]["conversation"].as_str().unwrap().to_owned();

    machine.install(Agent::Claude);
    let (prompt, script) = second_session();
    machine.resume_claude(&session, prompt, script);
    machine.close_sessions();
    let after = recorded(&machine);
    assert_eq!(&after[..before.len()], &before[..], "what was backfilled stays as it was");
    let added: Vec<(&str, &str)> =
        after[before.len()..].iter().map(|(r, c, _)| (r.as_str(), c.as_str())).collect();
    // The new turn alone: its prompt and its reply (the scripted model, seeing the first
    // turn's command ran, runs none again).
    assert_eq!(added.len(), 2, "only the new turn: {added:?}");
    assert!(added[0].1.contains("Add a test for the rounding"), "{added:?}");
    assert_eq!(added[1], ("assistant", "Added a test for the cart total on discounted orders."));
    let conversations: std::collections::BTreeSet<String> =
        machine.episodes().iter().map(|e| e["conversation"].as_str().unwrap().to_owned()).collect();
    assert_eq!(conversations.len(), 1, "the resumed session is the same conversation");
}
