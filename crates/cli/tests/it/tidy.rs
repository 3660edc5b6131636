//! The repository keeps its own shape: nothing stray at the root, no build outputs or large
//! binaries tracked, and no door (the CLI, the server, the hooks, the Python binding) reaching
//! past `epimem_api::Memory` to the engine behind it. Each rule is a function over paths and texts, so
//! a test can show that it fails on what it forbids.

use std::path::{Path, PathBuf};

/// What may sit at the repository's root.
const ROOT: &[&str] = &[
    ".ci",
    ".gitignore",
    "ARCHITECTURE.md",
    "Cargo.lock",
    "Cargo.toml",
    "README.md",
    "agent-tests",
    "bindings",
    "clients",
    "crates",
    "docs",
    "rust-toolchain.toml",
    "rustfmt.toml",
    "scripts",
    "ui-tests",
];

/// Endings of what a build or a package manager writes: never tracked.
const BUILD_OUTPUTS: &[&str] =
    &[".whl", ".tar.gz", ".tgz", ".so", ".dylib", ".dll", ".pyc", ".node", ".rlib", ".o"];

/// A tracked file larger than this is a binary or a data set, welcome only among fixtures.
const LARGE: u64 = 512 * 1024;

/// Crates that are doors: they parse a protocol, call `Memory`, and render.
const DOORS: &[&str] = &["crates/cli", "crates/server", "crates/hooks", "bindings/python"];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The files git tracks or would add (untracked and not ignored), relative to the root.
fn files(root: &Path) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "--cached", "--others", "--exclude-standard", "-z"])
        .current_dir(root)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git ls-files: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .split('\0')
        .filter(|p| !p.is_empty() && root.join(p).exists())
        .map(str::to_owned)
        .collect()
}

/// What is wrong with the files at `paths` (with their sizes), one line each.
fn stray(paths: &[(String, u64)]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (path, size) in paths {
        let top = path.split('/').next().unwrap_or(path);
        if !ROOT.contains(&top) {
            wrong.push(format!("{path}: not a file the root holds (allowed: {ROOT:?})"));
        }
        if let Some(ending) = BUILD_OUTPUTS.iter().find(|e| path.ends_with(*e)) {
            wrong.push(format!("{path}: a build output ({ending}) is never committed"));
        }
        if *size > LARGE && !path.split('/').any(|part| part == "fixtures") {
            wrong.push(format!("{path}: {size} bytes outside a fixtures folder"));
        }
    }
    wrong
}

/// Where a door's source reaches past `Memory`: to the engine behind it (which only `app`
/// builds) or to the steps a measurement reads beneath it.
fn doors_past_memory(sources: &[(String, String)]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (path, text) in sources {
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let names_engine = code
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|word| word == "Engine" || word == "epimem_engine");
            if names_engine || code.contains(".measure()") {
                wrong.push(format!("{path}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    wrong
}

fn rust_sources(folder: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![folder.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push((path.display().to_string(), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out
}

#[test]
fn the_repository_holds_nothing_stray() {
    let root = repository();
    if !root.join(".git").exists() {
        eprintln!("skipped: not a git checkout");
        return;
    }
    let sized: Vec<(String, u64)> = files(&root)
        .into_iter()
        .map(|p| {
            let size = std::fs::metadata(root.join(&p)).map(|m| m.len()).unwrap_or(0);
            (p, size)
        })
        .collect();
    assert!(sized.len() > 100, "git listed only {} files", sized.len());
    let wrong = stray(&sized);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Each public type's name says one thing across the workspace: a reader meeting `Memory`
/// knows which one it is.
#[test]
fn no_two_public_types_share_a_name() {
    let root = repository();
    let mut seen: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut crates: Vec<PathBuf> =
        std::fs::read_dir(root.join("crates")).unwrap().map(|e| e.unwrap().path()).collect();
    crates.push(root.join("bindings/python"));
    for krate in crates {
        for (path, text) in rust_sources(&krate.join("src")) {
            for name in public_types(&text) {
                seen.entry(name).or_default().push(path.clone());
            }
        }
    }
    let shared: Vec<String> = seen
        .iter()
        .filter(|(_, places)| places.len() > 1)
        .map(|(name, places)| format!("{name}: {}", places.join(", ")))
        .collect();
    assert!(shared.is_empty(), "public types sharing a name:\n{}", shared.join("\n"));
}

/// The names of the types `text` declares `pub` (not `pub(crate)`).
fn public_types(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("pub ")?;
            let rest = ["struct ", "enum ", "trait ", "type "]
                .iter()
                .find_map(|k| rest.strip_prefix(k))?;
            let name: String =
                rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// The results page stays one a reader scans; the notebook is `docs/experiments/`.
#[test]
fn the_results_page_is_short() {
    let page = repository().join("docs/benchmarks.md");
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(size <= 30 * 1024, "docs/benchmarks.md is {size} bytes (at most 30 KB)");
}

#[test]
fn the_rule_refuses_a_wheel_a_stray_file_and_a_large_binary() {
    let fine = [("crates/core/src/lib.rs", 2_000), ("crates/x/tests/fixtures/old.db", 900_000)];
    let fine: Vec<_> = fine.iter().map(|(p, s)| (p.to_string(), *s)).collect();
    assert_eq!(stray(&fine), Vec::<String>::new());
    let wheel = [("numpy-2.3.0-cp312-manylinux_x86_64.whl".to_owned(), 30_000)];
    let said = stray(&wheel);
    assert!(said.iter().any(|l| l.contains("not a file the root holds")), "{said:?}");
    assert!(said.iter().any(|l| l.contains("build output (.whl)")), "{said:?}");
    let nested = stray(&[("bindings/python/dist/epimem-0.1.0.whl".to_owned(), 10)]);
    assert_eq!(nested.len(), 1, "{nested:?}");
    let large = stray(&[("docs/model.bin".to_owned(), 40 << 20)]);
    assert!(large[0].contains("outside a fixtures folder"), "{large:?}");
}

#[test]
fn no_door_calls_the_engine() {
    let root = repository();
    for door in DOORS {
        let wrong = doors_past_memory(&rust_sources(&root.join(door).join("src")));
        assert!(wrong.is_empty(), "{door} reaches past Memory:\n{}", wrong.join("\n"));
    }
}

#[test]
fn public_types_are_read_as_declared() {
    let text = "pub struct Memory {\n    pub(crate) struct Hidden;\npub enum Kind {}\n";
    assert_eq!(public_types(text), ["Memory", "Kind"]);
}

#[test]
fn the_door_rule_sees_the_engine_and_a_measurement() {
    let fine =
        [("src/a.rs".to_owned(), "let memory = open(config)?; // not the Engine".to_owned())];
    assert!(doors_past_memory(&fine).is_empty());
    let built = [("src/b.rs".to_owned(), "use epimem_api::{Engine, Memory};".to_owned())];
    assert_eq!(doors_past_memory(&built), vec!["src/b.rs:1: use epimem_api::{Engine, Memory};"]);
    let measured = [("src/c.rs".to_owned(), "x\nmemory.measure().recall(&q)?;".to_owned())];
    assert_eq!(doors_past_memory(&measured).len(), 1);
}
