//! Each reader on fixtures written in its export's real format.

use epimem_import::{Imported, Place, Record, Source, read};

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn imported(records: Vec<Record>) -> Vec<Imported> {
    records.into_iter().map(|r| r.read.unwrap_or_else(|e| panic!("{}: {e}", r.place))).collect()
}

fn said(c: &Imported) -> Vec<(&str, &str)> {
    c.messages.iter().map(|m| (m.role, m.content.as_str())).collect()
}

#[test]
fn chatgpt_keeps_the_branch_the_user_ended_on() {
    let all = imported(read(Source::ChatGpt, &fixture("chatgpt.json")).unwrap());
    let porto = &all[0];
    assert_eq!(porto.conversation, "chatgpt-6630a1b2-0000-4000-8000-00000000porto");
    assert_eq!(porto.title.as_deref(), Some("Trip to Porto"));
    assert_eq!(
        said(porto),
        [
            ("user", "We fly to Porto on June 3rd. Where should we stay?"),
            ("assistant", "Ribeira is lively; Cedofeita is quieter."),
            (
                "user",
                "We are vegetarian, not vegan. Which of these restaurants fits?\n\
                 [attached: restaurants.pdf]\n[attached: image]"
            ),
            ("assistant", "```\nsearch(\"vegetarian restaurants Porto\")\n```"),
            ("tool", "Da Terra: vegetarian buffet near Ribeira."),
            ("assistant", "Da Terra is a vegetarian buffet close to Ribeira."),
        ]
    );
    // The first version of the edited message, and its answer, are the abandoned branch.
    assert_eq!(porto.notes.abandoned, 2);
    assert_eq!((porto.notes.hidden, porto.notes.attachments, porto.notes.tool_outputs), (1, 2, 1));
    let first = &porto.messages[0];
    assert_eq!(
        (first.id.as_str(), first.timestamp.as_deref()),
        ("u-1", Some("2024-05-04T08:40:10.500Z"))
    );
    assert_eq!(first.metadata["title"], "Trip to Porto");
    assert_eq!(porto.messages[2].metadata["attachments"][0], "restaurants.pdf");
    assert_eq!(porto.messages[4].speaker.as_deref(), Some("browser"));
    assert_eq!(said(&all[1]).len(), 2);
}

#[test]
fn claude_keeps_the_branch_of_the_last_message_and_names_attachments() {
    let all = imported(read(Source::Claude, &fixture("claude.json")).unwrap());
    let garden = &all[0];
    assert_eq!(garden.conversation, "claude-c7e1a2b3-0000-4000-8000-000000000001");
    assert_eq!(
        said(garden),
        [
            (
                "user",
                "Here is my plot layout. When do I plant the tomatoes?\n[attached: plot-layout.txt]"
            ),
            ("assistant", "Plant the tomatoes after the last frost, usually mid-May."),
            ("user", "And the beans?"),
            (
                "assistant",
                "[used web_search]\n[result of web_search]\nSow the beans in late May, once the \
                 soil is warm.\n[attached: beans.png]"
            ),
        ]
    );
    assert_eq!(
        (garden.notes.abandoned, garden.notes.attachments, garden.notes.tool_outputs),
        (1, 2, 2)
    );
    assert_eq!(garden.messages[0].timestamp.as_deref(), Some("2024-03-01T09:00:05.000000Z"));
    // An export without parent links is read in order; an empty name is no title.
    let passport = &all[1];
    assert_eq!(passport.title, None);
    assert_eq!(said(passport)[0], ("user", "Remind me: my passport expires in March 2025."));
}

#[test]
fn mem0_memories_go_to_their_owners() {
    let all = imported(read(Source::Mem0, &fixture("mem0.json")).unwrap());
    let owners: Vec<&str> = all.iter().map(|c| c.conversation.as_str()).collect();
    assert_eq!(owners, ["mem0-alice", "mem0-alice", "mem0-bob", "mem0-assistant-fr"]);
    let peanuts = &all[0].messages[0];
    assert_eq!(
        (peanuts.content.as_str(), peanuts.user.as_deref()),
        ("Is allergic to peanuts", Some("alice"))
    );
    assert_eq!(peanuts.id, "mem0-7f3c2e1a-0000-4000-8000-000000000001");
    assert_eq!(peanuts.metadata["mem0"]["metadata"]["source"], "onboarding");
    assert_eq!(peanuts.metadata["mem0"]["categories"][0], "health");
    assert_eq!(all[2].messages[0].metadata["mem0"]["agent_id"], "scheduler");
    // Listed newest first (as mem0 lists them), they are read oldest first.
    let newest_first = r#"{"results": [
        {"id": "b", "memory": "Moved to Oslo", "user_id": "cy", "created_at": "2024-09-01T10:00:00+02:00"},
        {"id": "a", "memory": "Lives in Bergen", "user_id": "cy", "created_at": "2024-01-01T10:00:00Z"}]}"#;
    let in_order: Vec<String> = imported(read(Source::Mem0, newest_first).unwrap())
        .iter()
        .map(|c| c.messages[0].content.clone())
        .collect();
    assert_eq!(in_order, ["Lives in Bergen", "Moved to Oslo"]);
    // A bare array reads the same.
    let bare = format!("[{}]", r#"{"id": 9, "memory": "Likes jazz", "user_id": "cy"}"#);
    assert_eq!(imported(read(Source::Mem0, &bare).unwrap())[0].messages[0].id, "mem0-9");
}

#[test]
fn broken_records_are_told_by_place_and_the_rest_read() {
    let records = read(Source::ChatGpt, &fixture("chatgpt-broken.json")).unwrap();
    let outcome: Vec<(Place, Result<usize, String>)> =
        records.into_iter().map(|r| (r.place, r.read.map(|c| c.messages.len()))).collect();
    assert_eq!(outcome[0], (Place { line: 2, record: 1 }, Ok(1)));
    let broken: Vec<(usize, usize, &str)> = outcome
        .iter()
        .filter_map(|(p, r)| r.as_ref().err().map(|e| (p.line, p.record, e.as_str())))
        .collect();
    assert_eq!(broken.len(), 3, "{broken:?}");
    assert_eq!((broken[0].0, broken[0].1), (12, 2));
    assert!(broken[0].2.contains("mapping"), "{}", broken[0].2);
    assert_eq!((broken[1].0, broken[1].1), (17, 3));
    assert!(broken[2].2.contains("gone"), "{}", broken[2].2);
    assert_eq!(outcome[4].1, Ok(1));
}

#[test]
fn a_file_of_another_kind_is_refused_whole() {
    let e = read(Source::ChatGpt, r#"{"conversations": []}"#).unwrap_err();
    assert!(e.to_string().contains("expected a JSON array"), "{e}");
    let e = read(Source::Mem0, r#"{"items": []}"#).unwrap_err();
    assert!(e.to_string().contains("neither `results` nor `memories`"), "{e}");
    assert!(read(Source::Claude, "[]").unwrap().is_empty());
}

#[test]
fn a_made_up_export_reads_whole() {
    let text = epimem_import::sample::chatgpt_export(10, 6);
    let all = imported(read(Source::ChatGpt, &text).unwrap());
    assert_eq!(all.len(), 10);
    assert!(all.iter().all(|c| c.messages.len() == 6));
    assert_eq!(all.iter().map(|c| c.notes.abandoned).sum::<usize>(), 2);
    assert_eq!(
        all[3].messages[1].content,
        "Answer 1 of chat 3: water basil 3 when the soil is dry."
    );
}
