//! opencode's plugin: opencode has no command hooks, so epimem writes a plugin that runs the
//! hook on each event (`opencode-plugin.js`, with the hook's command line filled in).

const TEMPLATE: &str = include_str!("opencode-plugin.js");

/// The plugin's first line: how `uninstall` knows the file is epimem's.
const MARKER: &str = "// epimem: records this project's opencode sessions";

/// The plugin's text, running `command` (the hook's program and its arguments) per event.
pub fn opencode_plugin(command: &[String]) -> String {
    let command = serde_json::to_string(command).expect("strings serialise");
    TEMPLATE.replace("__EPIMEM_HOOK__", &command)
}

/// Whether a plugin file's text is epimem's.
pub fn is_epimem_plugin(text: &str) -> bool {
    text.starts_with(MARKER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_runs_the_hook_it_is_given_and_is_known_as_ours() {
        let command = ["/opt/my tools/epimem-hook", "--agent", "opencode", "--db", "a\"b.db"]
            .map(String::from);
        let plugin = opencode_plugin(&command);
        assert!(is_epimem_plugin(&plugin) && TEMPLATE.starts_with(MARKER));
        let line = plugin.lines().find(|l| l.starts_with("const HOOK = ")).unwrap();
        let json = line.trim_start_matches("const HOOK = ").trim_end_matches(';');
        let parsed: Vec<String> = serde_json::from_str(json).unwrap();
        assert_eq!(parsed, command);
        assert!(!is_epimem_plugin("export const Other = async () => ({})"));
    }
}
