//! What the command-line tests share: running the binary on a database, reading its JSON.

use std::{
    io::{BufRead, BufReader},
    path::Path,
    process::{ChildStderr, Command},
    sync::mpsc,
    time::{Duration, Instant},
};

use serde_json::Value;

pub(crate) fn epimem(db: &Path, args: &[&str]) -> std::process::Output {
    epimem_command(db).args(args).output().unwrap()
}

/// Writes `lines` (`epimem ingest`'s JSON lines) beside `db` and ingests them, flushed.
pub(crate) fn ingest_lines(db: &Path, lines: &str) {
    let input = db.with_extension("jsonl");
    std::fs::write(&input, lines).unwrap();
    let out = epimem(db, &["ingest", input.to_str().unwrap(), "--flush"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `epimem --db DB`, with none of the environment's settings but the model-free embedder.
pub(crate) fn epimem_command(db: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_epimem"));
    command
        .arg("--db")
        .arg(db)
        .env_remove("EPIMEM_TENANT")
        .env_remove("EPIMEM_CONFIG")
        // LLM-free unless a test says otherwise.
        .env_remove("EPIMEM_LLM_URL")
        .env_remove("EPIMEM_LLM_MODEL")
        .env_remove("EPIMEM_LLM_API_KEY")
        // The model-free embedder: these tests must not depend on downloaded models.
        .env("EPIMEM_EMBEDDER", "hash");
    command
}

/// The episodes `epimem episodes --json` lists with `filter`, each as `epimem show --json`
/// gives it (its messages and skeleton), oldest first; `run` runs `epimem` with arguments.
pub(crate) fn episodes_shown(
    run: impl Fn(&[&str]) -> std::process::Output,
    filter: &[&str],
) -> Vec<Value> {
    let mut list = vec!["episodes", "--json"];
    list.extend_from_slice(filter);
    listed(&run(&list), "episodes")
        .iter()
        .rev()
        .map(|e| json_lines(&run(&["show", "--json", e["id"].as_str().unwrap()])).remove(0))
        .collect()
}

pub(crate) fn json_lines(out: &std::process::Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The items of an answer that lists (`recall` without a budget: `hits`; `episodes`:
/// `episodes`; `facts`: `facts`; `timeline`: `nodes`): the array under `field` of its one JSON
/// object, failing the test if the command failed or answered otherwise.
pub(crate) fn listed(out: &std::process::Output, field: &str) -> Vec<Value> {
    let answer = json_lines(out);
    assert_eq!(answer.len(), 1, "one answer: {answer:?}");
    match &answer[0][field] {
        Value::Array(items) => items.clone(),
        other => panic!("{field} is not a list: {other} in {}", answer[0]),
    }
}

/// The models folder if potion is there (else the test skips; see `fetched_models`).
pub(crate) fn real_models() -> Option<std::path::PathBuf> {
    epimem_embed::test_support::fetched_models(&[epimem_embed::EmbedderName::Potion])
}

/// A file under `dir` that holds `word` (any case), if any. A file that goes away while the scan
/// runs (a server's temporary file) holds nothing.
pub(crate) fn in_some_file(dir: &Path, word: &str) -> Option<std::path::PathBuf> {
    std::fs::read_dir(dir).unwrap().find_map(|entry| {
        let path = entry.unwrap().path();
        if path.is_dir() {
            return in_some_file(&path, word);
        }
        let bytes = std::fs::read(&path).unwrap_or_default();
        let holds = bytes.windows(word.len()).any(|w| w.eq_ignore_ascii_case(word.as_bytes()));
        holds.then_some(path)
    })
}

/// What a process writes on standard error, a line at a time, as it writes it.
pub(crate) fn lines_of(stderr: ChildStderr) -> mpsc::Receiver<String> {
    let (lines, log) = mpsc::channel();
    std::thread::spawn(move || {
        BufReader::new(stderr).lines().map_while(Result::ok).try_for_each(|line| lines.send(line))
    });
    log
}

/// The next line of `log` that contains `what` (within 30 s), keeping every line read in `said`.
#[track_caller]
pub(crate) fn line_with(
    log: &mpsc::Receiver<String>,
    what: &str,
    said: &mut Vec<String>,
) -> String {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let Ok(line) = log.recv_timeout(left) else { panic!("no line with {what:?}: {said:?}") };
        said.push(line.clone());
        if line.contains(what) {
            return line;
        }
    }
}

/// `epimem --db target ARGS…` to its end; what it printed (it must succeed).
pub(crate) fn run_on(target: &str, args: &[&str]) -> String {
    run_on_with(target, args, &[])
}

/// [`run_on`] with these environment variables too.
pub(crate) fn run_on_with(target: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", target])
        .args(args)
        .envs(env.iter().copied())
        .env("EPIMEM_EMBEDDER", "hash")
        .env_remove("EPIMEM_TENANT")
        .env_remove("EPIMEM_CONFIG")
        .env_remove("EPIMEM_LLM_URL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}
