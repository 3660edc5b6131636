//! One call before the next turn: the newest messages verbatim, what came before them told
//! short, and the long-term lines that bear on the moment, under one budget, no line twice.

use crate::engine::{Engine, MessageInput, NextTurnQuery};
use epimem_core::{ConversationKey, Role, Scope, Timestamp, recall::NextTurnConfig};

use super::common::{DAY, T0, engine, remember};

fn said(e: &Engine, conversation: &str, from: usize, lines: &[&str]) {
    let messages = lines
        .iter()
        .enumerate()
        .map(|(i, text)| MessageInput {
            conversation: ConversationKey::new("t", conversation),
            user: None,
            agent: None,
            key: format!("{}", from + i),
            role: if (from + i).is_multiple_of(2) { Role::User } else { Role::Assistant },
            speaker: None,
            content: (*text).into(),
            timestamp: Some(Timestamp(T0 + 10 * DAY + (from + i) as i64 * 60_000)),
            metadata: serde_json::Value::Null,
        })
        .collect();
    e.ingest(messages).unwrap();
}

fn ask(e: &Engine, query: Option<&str>, budget: usize) -> crate::engine::NextTurn {
    let query = NextTurnQuery {
        conversation: ConversationKey::new("t", "plan"),
        query: query.map(Into::into),
        budget,
        shares: None,
        relevance: None,
    };
    e.next_turn(&query).unwrap()
}

fn planning(e: &Engine) -> Vec<String> {
    let lines: Vec<String> = (0..24)
        .map(|i| format!("Step {i} of the garden shed plan: order timber batch {i} from the yard"))
        .collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    said(e, "plan", 0, &refs[..12]);
    e.flush(&Scope::tenant("t")).unwrap();
    said(e, "plan", 12, &refs[12..]);
    lines
}

#[test]
fn the_block_holds_the_newest_lines_verbatim_the_rest_told_short_within_its_budget() {
    let e = engine();
    remember(&e, "t", "trip", 0, &["The zeppelin hangar opens on the first of May"]);
    let lines = planning(&e);
    for budget in [120, 300, 1000] {
        let turn = ask(&e, Some("When does the zeppelin hangar open?"), budget);
        assert!(turn.tokens <= budget, "{} over {budget}", turn.tokens);
        assert_eq!(turn.tokens, e.tokens().count(&turn.text) as usize);
        // The newest messages, whole and in order, ending with the last one said.
        let recent: Vec<&str> = turn.recent.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(recent.last(), lines.last().map(String::as_str).as_ref());
        assert!(
            recent.windows(2).all(
                |w| lines.iter().position(|l| l == w[0]) < lines.iter().position(|l| l == w[1])
            )
        );
        for line in &recent {
            assert!(turn.text.contains(line), "verbatim: {line}");
        }
        assert!(turn.memory.text.contains("zeppelin"), "{budget}: {turn:?}");
    }
    // The closed episode's start is older than what fits verbatim: it is told short.
    let turn = ask(&e, Some("When does the zeppelin hangar open?"), 300);
    assert!(turn.recent.len() < lines.len() && turn.summary_episodes.len() == 1, "{turn:?}");
    assert!(turn.text.contains("# Earlier in this conversation\n- "), "{}", turn.text);
}

#[test]
fn a_line_of_the_recent_part_is_not_quoted_again_and_nothing_unrelated_is_recalled() {
    let e = engine();
    remember(&e, "t", "trip", 0, &["The zeppelin hangar opens on the first of May"]);
    let lines = planning(&e);
    // The newest line is what the memory would quote best: it is in the recent part only.
    let turn = ask(&e, Some(lines.last().unwrap()), 1000);
    assert_eq!(turn.text.matches(lines.last().unwrap().as_str()).count(), 1, "{}", turn.text);
    assert!(!turn.memory.text.contains(lines.last().unwrap().as_str()), "{}", turn.text);
    // Without a query, the newest thing a person said is asked; nothing else bears on it.
    let unrelated = ask(&e, Some("How do I configure the Kubernetes ingress controller?"), 1000);
    assert!(!unrelated.memory.relevant && unrelated.memory.text.is_empty(), "{unrelated:?}");
    assert!(!unrelated.text.contains("# From memory"));
    let asked = ask(&e, None, 1000);
    assert_eq!(asked.memory_query.as_deref(), Some(lines[22].as_str()), "the newest user line");
}

#[test]
fn shares_that_cannot_work_and_an_unknown_conversation_are_refused() {
    let e = engine();
    planning(&e);
    let query = NextTurnQuery {
        conversation: ConversationKey::new("t", "plan"),
        query: None,
        budget: 500,
        shares: Some(NextTurnConfig { recent_share: 0.9, summary_share: 0.3 }),
        relevance: None,
    };
    let refused = e.next_turn(&query).unwrap_err().to_string();
    assert!(refused.contains("recent_share and summary_share"), "{refused}");
    let elsewhere =
        NextTurnQuery { conversation: ConversationKey::new("u", "plan"), shares: None, ..query };
    assert!(e.next_turn(&elsewhere).unwrap_err().to_string().contains("conversation"));
}
