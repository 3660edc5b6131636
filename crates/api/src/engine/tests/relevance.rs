//! A block holds what bears on the query and nothing else: empty when the memory knows
//! nothing of it, whatever the memory's size, and filled as before only when asked.

use std::sync::Arc;

use crate::engine::{Engine, EngineConfig, FixedClock, RecallQuery};
use epimem_core::{Scope, Timestamp, recall::RelevanceConfig};
use epimem_store_sqlite::SqliteStore;

use super::common::{T0, engine_on, remember, remember_as};

fn engine() -> Engine {
    let clock = Arc::new(FixedClock::new(Timestamp(T0)));
    engine_on(SqliteStore::open_in_memory().unwrap(), EngineConfig::default(), clock, 64)
}

fn block(e: &Engine, scope: Scope, text: &str) -> (bool, String) {
    let context = e.recall_context(&RecallQuery::new(scope, text, 5), 1000).unwrap();
    assert_eq!(context.text.is_empty(), !context.relevant, "{context:?}");
    (context.relevant, context.text)
}

#[test]
fn a_memory_of_one_message_answers_about_it_and_nothing_else() {
    let e = engine();
    remember(&e, "t", "c", 0, &["My dentist appointment is on Friday at nine"]);
    let scope = Scope::tenant("t");
    let (relevant, text) = block(&e, scope.clone(), "When is my dentist appointment?");
    assert!(relevant && text.contains("dentist appointment"), "{text}");
    // A lone word in common, a name it never heard, or nothing at all in common. In a memory
    // this small every word weighs the same, so the lone word must be a small share of the
    // query: one word of four (0.25) is a share the words channel speaks for.
    for unrelated in [
        "Which platform does the overnight sleeper train to the coast leave from on Friday?",
        "How do I configure the Flask connection pool?",
        "Where did we put the garden tools?",
    ] {
        assert_eq!(block(&e, scope.clone(), unrelated), (false, String::new()), "{unrelated}");
    }
    // Asked to fill the budget, it quotes the line that shares a word, as before.
    let fill = RecallQuery {
        relevance: Some(RelevanceConfig::FILL),
        ..RecallQuery::new(
            scope,
            "Which platform does the overnight sleeper train leave from on Friday?",
            5,
        )
    };
    let filled = e.recall_context(&fill, 1000).unwrap();
    assert!(filled.relevant && filled.text.contains("dentist"), "{filled:?}");
}

#[test]
fn a_person_who_never_spoke_in_the_scope_is_not_answered_for() {
    let e = engine();
    remember_as(&e, "t", "ana", 0, "Ana", &["I painted a sunrise over the lake", "It took a week"]);
    remember_as(&e, "t", "ben", 1, "Ben", &["I painted the fence green", "Two coats of paint"]);
    let in_bens = Scope::tenant("t").with_conversation(Some("ben".into()));
    let (relevant, text) = block(&e, in_bens.clone(), "What did Ben paint?");
    assert!(relevant && text.contains("fence"), "{text}");
    // Ana spoke in the tenant, not in Ben's conversation.
    assert_eq!(block(&e, in_bens, "What did Ana paint?"), (false, String::new()));
    let everywhere = Scope::tenant("t");
    assert!(block(&e, everywhere, "What did Ana paint?").1.contains("sunrise"));
}

#[test]
fn a_block_stops_well_before_its_budget_when_the_rest_bears_little() {
    let e = engine();
    let lines: Vec<String> =
        (0..60).map(|i| format!("Note {i} about the weekly grocery run")).collect();
    let mut said: Vec<&str> = lines.iter().map(String::as_str).collect();
    said.push("The zeppelin hangar opens on the first of May");
    remember(&e, "t", "c", 0, &said);
    let query = RecallQuery::new(Scope::tenant("t"), "When does the zeppelin hangar open?", 5);
    let judged = e.recall_context(&query, 1000).unwrap();
    assert!(judged.text.contains("zeppelin"), "{judged:?}");
    let fill = RecallQuery { relevance: Some(RelevanceConfig::FILL), ..query };
    let filled = e.recall_context(&fill, 1000).unwrap();
    assert!(judged.tokens * 2 < filled.tokens, "{} against {}", judged.tokens, filled.tokens);
}
