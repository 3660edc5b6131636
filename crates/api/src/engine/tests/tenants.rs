//! Tenants are independent: another tenant's data neither shows in nor moves one's results.

use super::common::{engine, remember, remember_as};
use crate::engine::{Engine, RecallQuery};
use epimem_core::{EpisodeId, Scope};

/// Tenant "a": a developer debugging with an assistant, and a chat about a pet snake.
fn tenant_a(e: &Engine) {
    remember_as(
        e,
        "a",
        "work",
        0,
        "user",
        &[
            "python raises a unicode error when reading the csv export",
            "open the file with encoding utf-8 and errors replace",
        ],
    );
    remember(e, "a", "work", 1, &["the deploy script failed on the staging server", "rollback"]);
    remember(
        e,
        "a",
        "pets",
        2,
        &["our python snake shed its skin today", "it needs a warmer tank"],
    );
}

/// Tenant "b": the same words in other proportions, and a speaker called Python.
fn tenant_b(e: &Engine) {
    for day in 0..4 {
        remember_as(
            e,
            "b",
            &format!("c{day}"),
            day,
            "Python",
            &[
                "unicode unicode error error python csv staging deploy",
                "snake tank skin encoding utf-8 replace rollback server",
            ],
        );
    }
}

const QUERIES: [&str; 4] = [
    "python unicode error",
    "what did the user ask about the csv export",
    "snake tank",
    "deploy rollback on staging",
];

/// Everything tenant "a" gets back for its queries: episodes, turns and context blocks.
fn answers(e: &Engine) -> Vec<String> {
    let mut out = Vec::new();
    for text in QUERIES {
        for scope in [Scope::tenant("a"), Scope::tenant("a").with_conversation(Some("work".into()))]
        {
            let query = RecallQuery::new(scope, text, 10);
            out.push(format!("{:?}", e.recall(&query).unwrap()));
            out.push(format!("{:?}", e.measure().recall_messages(&query).unwrap()));
            out.push(format!("{:?}", e.recall_context(&query, 200).unwrap()));
        }
    }
    out
}

#[test]
fn another_tenants_data_changes_nothing_scores_included() {
    let alone = engine();
    tenant_a(&alone);
    let expected = answers(&alone);

    // B's data before A's, and more of it after A's index is loaded.
    let shared = engine();
    tenant_b(&shared);
    tenant_a(&shared);
    assert!(!shared.recall(&RecallQuery::new(Scope::tenant("b"), "python", 5)).unwrap().is_empty());
    assert_eq!(answers(&shared), expected);
    remember_as(&shared, "b", "late", 9, "Python", &["python unicode error snake tank", "deploy"]);
    assert_eq!(answers(&shared), expected, "after B's index changed");
}

#[test]
fn a_tenant_never_sees_another_tenants_best_match() {
    let e = engine();
    remember(
        &e,
        "theirs",
        "c",
        0,
        &["quarterly merger negotiation with acme corporation", "merger merger acme"],
    );
    remember(&e, "mine", "c", 0, &["my garden tomatoes are ripe", "time to make sauce"]);
    // Load the other tenant's index first.
    assert!(
        !e.recall(&RecallQuery::new(Scope::tenant("theirs"), "acme merger", 5)).unwrap().is_empty()
    );
    let hits =
        e.recall(&RecallQuery::new(Scope::tenant("mine"), "acme merger negotiation", 10)).unwrap();
    assert!(hits.iter().all(|h| h.episode.conversation.tenant == "mine"), "{hits:?}");
    let turns = e
        .measure()
        .recall_messages(&RecallQuery::new(Scope::tenant("mine"), "acme merger", 10))
        .unwrap();
    let mine: Vec<EpisodeId> =
        e.episodes(&Scope::tenant("mine"), None).unwrap().into_iter().map(|x| x.id).collect();
    assert!(turns.iter().all(|t| mine.contains(&t.episode)));
}
