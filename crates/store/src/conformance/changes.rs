//! Conformance cases for the change log that search indexes catch up from.

use epimem_core::{Scope, episode_id};

use super::{episode, key, push_n, segment};
use crate::Store;

pub fn changes_are_logged_per_tenant_in_commit_order(store: &dyn Store) {
    let (a, b) = (key("t", "c"), key("u", "c"));
    assert_eq!(store.change_generation("t").unwrap(), 0);
    push_n(store, &a, 4);
    push_n(store, &b, 2);
    segment(store, &a, 2, vec![episode(&a, 1, 2, "a", "s")]);
    segment(store, &b, 2, vec![episode(&b, 1, 2, "b", "s")]);
    segment(store, &a, 4, vec![episode(&a, 3, 4, "c", "s")]);
    let (first, second) = (episode_id(&a, 1, 2), episode_id(&a, 3, 4));

    let changes = store.episode_changes("t", 0, 100).unwrap();
    let logged: Vec<_> = changes.iter().map(|c| (c.episode.clone(), c.forgotten)).collect();
    assert_eq!(logged, [(first.clone(), false), (second.clone(), false)]);
    assert!(changes[0].seq < changes[1].seq);
    let generation = store.change_generation("t").unwrap();
    assert_eq!(generation, changes[1].seq);
    assert_eq!(store.episode_changes("t", 0, 1).unwrap(), changes[..1]);
    assert!(store.episode_changes("t", generation, 100).unwrap().is_empty());
    assert_eq!(store.episode_changes("u", 0, 100).unwrap().len(), 1, "each tenant its own log");

    // Rows of chosen episodes: the tenant's own, still present.
    let ids = [second.clone(), episode_id(&b, 1, 2), episode_id(&a, 9, 9)];
    let rows = store.indexed_messages_of("t", &ids, None).unwrap();
    assert_eq!(rows.iter().map(|r| r.seq).collect::<Vec<_>>(), [3, 4]);
    assert!(store.indexed_messages_of("t", &[], None).unwrap().is_empty());

    // Forgetting is logged too, an episode at a time or a conversation at once.
    assert!(store.delete_episode(&Scope::tenant("t"), &first).unwrap());
    let after = store.episode_changes("t", generation, 100).unwrap();
    assert_eq!(
        after.iter().map(|c| (&c.episode, c.forgotten)).collect::<Vec<_>>(),
        [(&first, true)]
    );
    store.delete_conversation(&a).unwrap();
    let last = store.episode_changes("t", after[0].seq, 100).unwrap();
    assert_eq!(
        last.iter().map(|c| (&c.episode, c.forgotten)).collect::<Vec<_>>(),
        [(&second, true)]
    );
    assert_eq!(store.change_generation("t").unwrap(), last[0].seq);
}
