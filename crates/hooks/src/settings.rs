//! epimem's entries in an agent's hook settings (Claude Code's and Gemini CLI's
//! `settings.json`, Codex CLI's `hooks.json`, which share one shape): added beside whatever
//! hooks are there, once, and removed again without touching anything else.

use serde_json::{Map, Value, json};

use crate::agent::Agent;

/// Whether a hook command is epimem's: its program is `epimem-hook`, or `epimem` with `hook`
/// for its first argument (so a moved binary's entry is still recognised).
pub fn is_epimem_hook(command: &str) -> bool {
    let command = command.trim_start();
    let (program, rest) = match command.strip_prefix(['"', '\'']) {
        Some(quoted) => quoted.split_once(['"', '\'']).unwrap_or((quoted, "")),
        None => command.split_once(char::is_whitespace).unwrap_or((command, "")),
    };
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    matches!(name, "epimem-hook" | "epimem-hook.exe")
        || matches!(name, "epimem" | "epimem.exe") && rest.split_whitespace().next() == Some("hook")
}

/// Adds `command` to every event epimem listens to in `agent`; an epimem hook already there is
/// made `command` (another database, or `epimem hook` where `epimem-hook` now stands), so no
/// event has two. Returns whether anything changed; refuses a file whose `hooks` is not what
/// the agent reads (an object of arrays), naming the part.
pub fn install(settings: &mut Value, agent: Agent, command: &str) -> Result<bool, String> {
    let root = settings.as_object_mut().ok_or("the settings are not a JSON object")?;
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or("\"hooks\" is not an object")?;
    let mut changed = false;
    for &(name, kind) in agent.events() {
        let groups = hooks.entry(name).or_insert_with(|| Value::Array(Vec::new()));
        let groups =
            groups.as_array_mut().ok_or_else(|| format!("\"hooks.{name}\" is not an array"))?;
        let ours: Vec<&mut Value> = groups
            .iter_mut()
            .filter_map(|g| g.get_mut("hooks").and_then(Value::as_array_mut))
            .flatten()
            .filter_map(|e| e.get_mut("command"))
            .filter(|c| c.as_str().is_some_and(is_epimem_hook))
            .collect();
        if !ours.is_empty() {
            for old in ours.into_iter().filter(|old| *old != command) {
                *old = Value::from(command);
                changed = true;
            }
            continue;
        }
        let entry = json!({"type": "command", "command": command, "timeout": agent.hook_timeout()});
        let group = if kind.is_tool_event() {
            json!({"matcher": "*", "hooks": [entry]})
        } else {
            json!({"hooks": [entry]})
        };
        groups.push(group);
        changed = true;
    }
    Ok(changed)
}

/// Removes every epimem hook entry, of whichever event, and the groups and events it leaves
/// empty. Returns whether anything changed.
pub fn uninstall(settings: &mut Value) -> bool {
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return false;
    };
    let mut changed = false;
    let events: Vec<String> = hooks.keys().cloned().collect();
    for event in events {
        let Some(groups) = hooks.get_mut(&event).and_then(Value::as_array_mut) else {
            continue;
        };
        // Only groups and events that epimem emptied go (what was empty before stays).
        let mut here = false;
        groups.retain_mut(|group| {
            let Some(entries) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = entries.len();
            entries
                .retain(|e| !e.get("command").and_then(Value::as_str).is_some_and(is_epimem_hook));
            here |= entries.len() != before;
            entries.len() == before || !entries.is_empty()
        });
        changed |= here;
        if here && groups.is_empty() {
            hooks.remove(&event);
        }
    }
    if changed && hooks.is_empty() {
        settings.as_object_mut().map(|s| s.remove("hooks"));
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: &str = "/usr/local/bin/epimem hook --db /home/dev/.local/share/epimem/epimem.db";

    fn theirs() -> Value {
        json!({
            "model": "opus",
            "hooks": {
                "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}],
                "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
            }
        })
    }

    fn commands(group: &Value) -> impl Iterator<Item = &str> {
        group
            .get("hooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| e.get("command").and_then(Value::as_str))
    }

    fn hooks_of<'a>(settings: &'a Value, event: &str) -> impl Iterator<Item = &'a str> {
        settings["hooks"][event].as_array().unwrap().iter().flat_map(commands)
    }

    #[test]
    fn installing_merges_once_and_uninstalling_restores_the_file() {
        for agent in Agent::ALL {
            merges_once_and_is_removed_exactly(agent);
        }
    }

    fn merges_once_and_is_removed_exactly(agent: Agent) {
        let mut settings = theirs();
        assert!(install(&mut settings, agent, OURS).unwrap());
        let hooks = &settings["hooks"];
        for &(event, _) in agent.events() {
            let count = hooks[event]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(commands)
                .filter(|c| *c == OURS)
                .count();
            assert_eq!(count, 1, "{agent:?} {event}");
        }
        assert_eq!(hooks["PostToolUse"][0]["hooks"][0]["command"], "prettier --write");
        let tool_event = agent.events()[2].0;
        assert_eq!(hooks[tool_event].as_array().unwrap().last().unwrap()["matcher"], "*");
        let once = settings.clone();
        assert!(!install(&mut settings, agent, OURS).unwrap(), "a second install changes nothing");
        assert_eq!(settings, once);
        // Installed again from elsewhere (the hook binary, another database), each entry is
        // made the new command, in its place.
        let lean = "/usr/local/bin/epimem-hook --db /tmp/other.db";
        assert!(install(&mut settings, agent, lean).unwrap());
        for &(event, _) in agent.events() {
            let ours: Vec<&str> =
                hooks_of(&settings, event).filter(|c| is_epimem_hook(c)).collect();
            assert_eq!(ours, [lean], "{agent:?} {event}");
        }
        assert_eq!(settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"], "prettier --write");
        assert!(install(&mut settings, agent, OURS).unwrap());
        assert_eq!(settings, once);
        assert!(uninstall(&mut settings));
        assert_eq!(settings, theirs());
        assert!(!uninstall(&mut settings));

        let mut empty = json!({});
        install(&mut empty, agent, OURS).unwrap();
        uninstall(&mut empty);
        assert_eq!(empty, json!({}));
    }

    #[test]
    fn settings_claude_code_would_not_read_are_refused() {
        let error =
            install(&mut json!({"hooks": {"Stop": {"x": 1}}}), Agent::Claude, OURS).unwrap_err();
        assert!(error.contains("hooks.Stop"), "{error}");
        assert!(install(&mut json!([1]), Agent::Codex, OURS).is_err());
        assert!(is_epimem_hook("\"/opt/my tools/epimem\" hook --db x"));
        assert!(is_epimem_hook("epimem hook"));
        assert!(is_epimem_hook("'/home/dev/.cargo/bin/epimem-hook' --db x --tenant t"));
        assert!(is_epimem_hook("epimem-hook"));
        assert!(!is_epimem_hook("epimem-hooks"));
        assert!(!is_epimem_hook("epimem-other hook"));
        assert!(!is_epimem_hook("epimem recall x"));
    }
}
