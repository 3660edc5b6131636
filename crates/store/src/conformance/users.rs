//! Conformance cases for people: two users of one tenant never see each other's memories, and
//! forgetting one leaves the other whole.

use epimem_core::{ConversationKey, EpisodeId, Scope, facts::FactChange};

use super::{episode, facts, key, message};
use crate::Store;

/// Conversation `c` of tenant "t", said by `user`: two messages closed into one episode that
/// queued a consolidation, and the fact (numbered `n`) it distilled.
fn remembered(
    store: &dyn Store,
    (c, n): (&str, u64),
    user: &str,
    word: &str,
) -> (ConversationKey, EpisodeId) {
    let conv = key("t", c);
    let said = |n| {
        let mut m = message(&conv, n, &format!("{word} {n}"));
        m.user = Some(user.to_owned());
        m
    };
    store.push_messages(&[said(1), said(2)]).unwrap();
    let mut e = episode(&conv, 1, 2, word, &format!("About {word}."));
    e.user = Some(user.to_owned());
    e.surprise = 0.9;
    let id = e.id.clone();
    facts::close_as(store, &conv, e);
    let (job, _) = facts::consolidations(store).pop().expect("a startling episode consolidates");
    let fact = facts::fact(&conv, n, &format!("{user} likes {word}"), &[&id]);
    store
        .commit_consolidation(&facts::commit(job, &conv, vec![FactChange::Insert(fact)], 2))
        .unwrap();
    (conv, id)
}

fn as_user(user: &str) -> Scope {
    Scope { user: Some(user.to_owned()), ..Scope::tenant("t") }
}

pub fn two_users_of_one_tenant_never_meet_and_forget_apart(store: &dyn Store) {
    let (alice_conv, alice_ep) = remembered(store, ("a", 1), "alice", "tulips");
    let (bob_conv, bob_ep) = remembered(store, ("b", 2), "bob", "sailing");
    let episodes = |scope: &Scope| -> Vec<EpisodeId> {
        store.episodes(scope, None, None).unwrap().into_iter().map(|e| e.id).collect()
    };
    let facts = |scope: &Scope| -> Vec<String> {
        store.facts(scope, true, None, None).unwrap().into_iter().map(|f| f.fact.text).collect()
    };
    assert_eq!(episodes(&as_user("alice")), std::slice::from_ref(&alice_ep));
    assert_eq!(episodes(&as_user("bob")), std::slice::from_ref(&bob_ep));
    assert_eq!(facts(&as_user("alice")), ["alice likes tulips"]);
    assert_eq!(facts(&as_user("bob")), ["bob likes sailing"]);
    let both = [alice_ep.clone(), bob_ep.clone()];
    assert_eq!(store.episodes_by_id(&as_user("bob"), &both).unwrap().len(), 1);
    assert_eq!(store.episode(&as_user("bob"), &alice_ep).unwrap(), None);

    assert_eq!(store.delete_user("t", "alice").unwrap(), [alice_ep]);
    assert_eq!(episodes(&Scope::tenant("t")), [bob_ep]);
    assert_eq!(facts(&Scope::tenant("t")), ["bob likes sailing"]);
    assert_eq!(store.queue(&alice_conv).unwrap(), None);
    assert!(store.queue(&bob_conv).unwrap().is_some());
    assert_eq!(store.delete_user("t", "alice").unwrap(), []);
    // Another tenant's user of the same name is another person.
    assert_eq!(store.delete_user("other", "bob").unwrap(), []);
    assert_eq!(facts(&as_user("bob")), ["bob likes sailing"]);
}
