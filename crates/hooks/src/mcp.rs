//! epimem as an MCP server in an agent's settings, so memory is reachable as tools: an
//! `mcpServers` entry in JSON (Claude Code's `.mcp.json`, Gemini CLI's `settings.json`), an
//! `mcp` entry in opencode's `opencode.json`, or an `[mcp_servers.epimem]` table in Codex CLI's
//! `config.toml`, edited in place so the rest of the file (and its comments) stays as it was.

use serde_json::{Map, Value, json};
use toml_edit::{Array, DocumentMut, Item, Table};

/// The server's name in every agent's settings (its tools are `mcp__epimem__*` there).
const SERVER: &str = "epimem";

/// Whether a server entry's program is epimem (so uninstall removes only what install wrote).
fn is_epimem(program: &str) -> bool {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    matches!(name, "epimem" | "epimem.exe")
}

/// Sets `mcpServers.epimem` to run `program args`. Returns whether anything changed; refuses
/// a file whose `mcpServers` is not an object, and an `epimem` entry that runs another
/// program (someone else's).
pub fn install_mcp_json(
    settings: &mut Value,
    program: &str,
    args: &[String],
) -> Result<bool, String> {
    let entry = json!({"command": program, "args": args});
    set_server(settings, "mcpServers", entry, |e| e.get("command").and_then(Value::as_str))
}

/// Removes `mcpServers.epimem` when it runs epimem (and `mcpServers` when that empties it).
pub fn uninstall_mcp_json(settings: &mut Value) -> bool {
    remove_server(settings, "mcpServers", |e| e.get("command").and_then(Value::as_str))
}

/// Sets `mcp.epimem` in opencode's settings to run `program args` (a local server, its
/// command line as one array).
pub fn install_mcp_opencode(
    settings: &mut Value,
    program: &str,
    args: &[String],
) -> Result<bool, String> {
    let mut command = vec![program.to_owned()];
    command.extend_from_slice(args);
    let entry = json!({"type": "local", "command": command, "enabled": true});
    set_server(settings, "mcp", entry, opencode_program)
}

/// Removes `mcp.epimem` from opencode's settings when it runs epimem.
pub fn uninstall_mcp_opencode(settings: &mut Value) -> bool {
    remove_server(settings, "mcp", opencode_program)
}

fn opencode_program(entry: &Value) -> Option<&str> {
    entry.get("command")?.get(0)?.as_str()
}

/// Sets `settings[key].epimem` to `entry`, unless an `epimem` entry there runs another
/// program (by `program_of`).
fn set_server(
    settings: &mut Value,
    key: &str,
    entry: Value,
    program_of: fn(&Value) -> Option<&str>,
) -> Result<bool, String> {
    let root = settings.as_object_mut().ok_or("the settings are not a JSON object")?;
    let servers = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let servers = servers.as_object_mut().ok_or(format!("\"{key}\" is not an object"))?;
    match servers.get(SERVER) {
        Some(old) if *old == entry => return Ok(false),
        Some(old) if !program_of(old).is_some_and(is_epimem) => {
            return Err(format!("\"{key}.{SERVER}\" runs another program; left as it is"));
        }
        _ => {}
    }
    servers.insert(SERVER.into(), entry);
    Ok(true)
}

/// Removes `settings[key].epimem` when it runs epimem (and `key` when that empties it).
fn remove_server(settings: &mut Value, key: &str, program_of: fn(&Value) -> Option<&str>) -> bool {
    let Some(servers) = settings.get_mut(key).and_then(Value::as_object_mut) else {
        return false;
    };
    if !servers.get(SERVER).and_then(program_of).is_some_and(is_epimem) {
        return false;
    }
    servers.remove(SERVER);
    if servers.is_empty() {
        settings.as_object_mut().map(|s| s.remove(key));
    }
    true
}

/// Sets `[mcp_servers.epimem]` in Codex's `config.toml` text to run `program args`. Returns
/// the new text when anything changed; refuses text that is not TOML or whose `mcp_servers`
/// is not a table.
pub fn install_mcp_toml(
    text: &str,
    program: &str,
    args: &[String],
) -> Result<Option<String>, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("not TOML: {e}"))?;
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_mut()
        .ok_or("\"mcp_servers\" is not a table")?;
    if let Some(old) = servers.get(SERVER) {
        let command = old.get("command").and_then(Item::as_str);
        let same_args = old.get("args").and_then(Item::as_array).is_some_and(|old| {
            old.iter().map(|v| v.as_str()).eq(args.iter().map(|a| Some(a.as_str())))
        });
        if command == Some(program) && same_args {
            return Ok(None);
        }
        if !command.is_some_and(is_epimem) {
            return Err(format!("[mcp_servers.{SERVER}] runs another program; left as it is"));
        }
    }
    let mut table = Table::new();
    table.insert("command", toml_edit::value(program));
    table.insert("args", toml_edit::value(args.iter().map(String::as_str).collect::<Array>()));
    servers.insert(SERVER, Item::Table(table));
    Ok(Some(doc.to_string()))
}

/// Removes `[mcp_servers.epimem]` when it runs epimem. Returns the new text when anything
/// changed.
pub fn uninstall_mcp_toml(text: &str) -> Result<Option<String>, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("not TOML: {e}"))?;
    let Some(servers) = doc.get_mut("mcp_servers").and_then(Item::as_table_mut) else {
        return Ok(None);
    };
    let ours = servers
        .get(SERVER)
        .and_then(|s| s.get("command"))
        .and_then(Item::as_str)
        .is_some_and(is_epimem);
    if !ours {
        return Ok(None);
    }
    servers.remove(SERVER);
    if servers.is_empty() {
        doc.remove("mcp_servers");
    }
    Ok(Some(doc.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> Vec<String> {
        ["mcp", "--db", "/home/dev/memory.db"].map(String::from).to_vec()
    }

    #[test]
    fn a_json_server_entry_is_added_once_and_removed_exactly() {
        let theirs = json!({"theme": "dark", "mcpServers": {"github": {"command": "gh-mcp"}}});
        let mut settings = theirs.clone();
        assert!(install_mcp_json(&mut settings, "/usr/bin/epimem", &args()).unwrap());
        assert_eq!(settings["mcpServers"]["epimem"]["args"][0], "mcp");
        assert!(!install_mcp_json(&mut settings, "/usr/bin/epimem", &args()).unwrap());
        assert!(install_mcp_json(&mut settings, "/opt/epimem", &args()).unwrap());
        assert!(uninstall_mcp_json(&mut settings));
        assert_eq!(settings, theirs);
        assert!(!uninstall_mcp_json(&mut settings));

        let mut someone_elses = json!({"mcpServers": {"epimem": {"command": "npx"}}});
        assert!(install_mcp_json(&mut someone_elses, "/usr/bin/epimem", &args()).is_err());
        assert!(!uninstall_mcp_json(&mut someone_elses));
        let mut empty = json!({});
        install_mcp_json(&mut empty, "epimem", &args()).unwrap();
        uninstall_mcp_json(&mut empty);
        assert_eq!(empty, json!({}));

        let theirs =
            json!({"model": "local/x", "mcp": {"gh": {"type": "local", "command": ["gh-mcp"]}}});
        let mut opencode = theirs.clone();
        assert!(install_mcp_opencode(&mut opencode, "/usr/bin/epimem", &args()).unwrap());
        assert_eq!(opencode["mcp"]["epimem"]["command"][1], "mcp");
        assert!(!install_mcp_opencode(&mut opencode, "/usr/bin/epimem", &args()).unwrap());
        assert!(uninstall_mcp_opencode(&mut opencode));
        assert_eq!(opencode, theirs);
    }

    #[test]
    fn a_toml_server_table_keeps_the_rest_of_the_file() {
        let theirs = "# my settings\nmodel = \"o4\" # the model\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n";
        let added = install_mcp_toml(theirs, "/usr/bin/epimem", &args()).unwrap().unwrap();
        assert!(added.starts_with(theirs), "{added}");
        let parsed: toml_edit::DocumentMut = added.parse().unwrap();
        assert_eq!(parsed["mcp_servers"]["epimem"]["command"].as_str(), Some("/usr/bin/epimem"));
        assert_eq!(install_mcp_toml(&added, "/usr/bin/epimem", &args()).unwrap(), None);
        assert_eq!(uninstall_mcp_toml(&added).unwrap().as_deref(), Some(theirs));
        assert_eq!(uninstall_mcp_toml(theirs).unwrap(), None);

        let fresh = install_mcp_toml("", "epimem", &args()).unwrap().unwrap();
        assert_eq!(uninstall_mcp_toml(&fresh).unwrap().as_deref(), Some(""));
        let error = install_mcp_toml("mcp_servers = 1\n", "epimem", &args()).unwrap_err();
        assert!(error.contains("mcp_servers"), "{error}");
        assert!(install_mcp_toml("[x\n", "epimem", &args()).unwrap_err().contains("TOML"));
    }
}
