//! Recall as a new user meets it, and as an agent asks it in conversation: what was told bears
//! on a later question put in other words, a misspelled name is the name, a person speaking of
//! today is reminded of the past that bears on it, and a question about something else gets
//! nothing. With the embedder users get (potion): meaning is half of the judgement.

use std::path::PathBuf;

use crate::common;

/// A memory on disk, told some messages, asked with the default embedder (potion, from the
/// fetched models).
struct Memory {
    _dir: tempfile::TempDir,
    db: PathBuf,
    models: PathBuf,
}

impl Memory {
    /// A memory told `lines` (`epimem ingest`'s JSON lines), flushed; `None` (the test skips)
    /// without the models.
    fn told(lines: &[&str]) -> Option<Self> {
        let models = common::real_models()?;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("m.db");
        let memory = Self { _dir: dir, db, models };
        let input = memory.db.with_extension("jsonl");
        std::fs::write(&input, lines.join("\n")).unwrap();
        memory.run(&["ingest", input.to_str().unwrap(), "--flush"]);
        Some(memory)
    }

    /// `epimem ARGS` on this memory, which must succeed.
    fn run(&self, args: &[&str]) -> std::process::Output {
        let mut command = common::epimem_command(&self.db);
        command.args(["--embedder", "potion", "--models", self.models.to_str().unwrap()]);
        let out = command.args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        out
    }

    /// The block `recall QUESTION --budget 500` prints.
    fn block(&self, question: &str) -> String {
        String::from_utf8(self.run(&["recall", question, "--budget", "500"]).stdout).unwrap()
    }

    /// `recall ARGS --json`'s answer.
    fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["recall"];
        all.extend_from_slice(args);
        all.push("--json");
        common::json_lines(&self.run(&all)).remove(0)
    }
}

/// The first line a block quotes.
fn first_quoted(block: &str) -> &str {
    block.lines().find(|l| l.starts_with("> ")).unwrap_or_default()
}

const NOTHING: &str = "Nothing remembered bears on this.";

#[test]
fn an_allergy_told_weeks_ago_bears_on_a_question_about_medicine() {
    let Some(memory) = Memory::told(&[
        r#"{"conversation":"health","role":"user","id":"1","timestamp":"2026-10-01T09:00:00Z","content":"I'm allergic to penicillin, keep that in mind if I ask about medicine"}"#,
        r#"{"conversation":"health","role":"assistant","id":"2","timestamp":"2026-10-01T09:00:05Z","content":"Noted, I'll keep your penicillin allergy in mind."}"#,
        r#"{"conversation":"trip","role":"user","id":"1","timestamp":"2026-10-09T18:00:00Z","content":"We booked the night train from Vienna to Venice for the 3rd of November."}"#,
    ]) else {
        return;
    };
    let answer = memory.block("Is ibuprofen safe for me?");
    assert!(answer.contains("allergic to penicillin"), "{answer}");
    assert!(first_quoted(&answer).contains("penicillin"), "the allergy comes first: {answer}");
    assert_eq!(memory.block("Write a haiku about autumn leaves.").trim(), NOTHING);
}

/// A first try: three things told on three days, then a question about one of them in other
/// words, and one about nothing told.
#[test]
fn a_new_users_first_try() {
    let Some(memory) = Memory::told(&[
        r#"{"conversation":"day1","role":"user","id":"1","timestamp":"2026-11-02T08:00:00Z","content":"My sister Ana just moved to Porto for her new job."}"#,
        r#"{"conversation":"day2","role":"user","id":"1","timestamp":"2026-11-03T08:00:00Z","content":"I started learning the cello, lessons are on Tuesday evenings."}"#,
        r#"{"conversation":"day3","role":"user","id":"1","timestamp":"2026-11-04T08:00:00Z","content":"Our cat Miso has to go to the vet on Friday for her vaccines."}"#,
    ]) else {
        return;
    };
    let answer = memory.block("When is my music class?");
    assert!(answer.contains("cello"), "{answer}");
    assert!(first_quoted(&answer).contains("cello"), "{answer}");
    let answer = memory.block("What is the boiling point of ethanol at sea level?");
    assert_eq!(answer.trim(), NOTHING);
}

#[test]
fn a_misspelled_name_is_read_as_the_name_and_says_so() {
    let Some(memory) = Memory::told(&[
        r#"{"conversation":"club","role":"user","speaker":"Katrin","id":"1","timestamp":"2026-09-12T19:00:00Z","content":"I finally painted the lighthouse at dawn, the one on the north cliff."}"#,
        r#"{"conversation":"club","role":"user","speaker":"Jonathan","id":"2","timestamp":"2026-09-12T19:01:00Z","content":"Beautiful! I am still stuck on my harbour sketch."}"#,
    ]) else {
        return;
    };
    let question = "What did Katrina paint?";
    let answer = memory.json(&[question, "--budget", "500"]);
    assert_eq!(answer["nothing_relevant"], false, "{answer}");
    assert!(answer["context"].as_str().unwrap().contains("lighthouse"), "{answer}");
    assert_eq!(
        answer["names_read"],
        serde_json::json!([{"written": "Katrina", "read_as": "Katrin"}])
    );
    // Without a budget too, and spelled right nothing is read.
    let answer = memory.json(&["What did Jonahtan sketch?"]);
    assert_eq!(answer["names_read"][0]["read_as"], "Jonathan");
    let answer = memory.json(&["What did Katrin paint?", "--budget", "500"]);
    assert!(answer.get("names_read").is_none(), "{answer}");
}

/// An agent asks before its next turn with what the user just said: "I want it to be special"
/// names nothing, the conversation before it does (a party, a performance), and the memory of
/// the last party comes back.
#[test]
fn a_person_speaking_of_today_is_reminded_of_the_past_that_bears_on_it() {
    let Some(memory) = Memory::told(&[
        r#"{"conversation":"last-year","role":"user","id":"1","timestamp":"2025-12-25T20:00:00Z","content":"I danced at the Christmas party and everyone cheered, best night of the year."}"#,
        r#"{"conversation":"last-year","role":"user","id":"2","timestamp":"2025-12-27T10:00:00Z","content":"The dentist said my teeth are fine, next check in six months."}"#,
        r#"{"conversation":"today","role":"user","id":"1","timestamp":"2026-12-20T17:00:00Z","content":"I'm going to perform at the New Year's party!"}"#,
        r#"{"conversation":"today","role":"assistant","id":"2","timestamp":"2026-12-20T17:00:05Z","content":"How exciting! What will you perform at the party?"}"#,
        r#"{"conversation":"today","role":"user","id":"3","timestamp":"2026-12-20T17:01:00Z","content":"I'm not sure yet, but I want it to be very special."}"#,
    ]) else {
        return;
    };
    let out = memory.run(&["next-turn", "today", "--budget", "800", "--json"]);
    let turn = &common::json_lines(&out)[0];
    let query = turn["memory"]["query"].as_str().unwrap();
    assert!(query.starts_with("I'm not sure yet") && query.contains("party"), "{turn}");
    let memory = turn["memory"]["context"].as_str().unwrap();
    assert!(memory.contains("Christmas party"), "{turn}");
    assert!(!memory.contains("dentist"), "{turn}");
}
