//! Conformance cases for forgetting: an episode, a whole conversation.

use epimem_core::{Scope, episode_id};

use super::{episode, fence, key, message, push_n, segment};
use crate::{PendingReview, Store};

pub fn deleting_an_episode_removes_it_everywhere(store: &dyn Store) {
    let conv = key("t", "c");
    store
        .push_messages(&[
            message(&conv, 1, "zebra stripes"),
            message(&conv, 2, "ok"),
            message(&conv, 3, "lion mane"),
        ])
        .unwrap();
    store
        .put_message_vectors(&conv, "m", &[(1, vec![1.0]), (2, vec![2.0]), (3, vec![3.0])])
        .unwrap();
    segment(
        store,
        &conv,
        3,
        vec![
            episode(&conv, 1, 2, "Zebras", "Zebra talk."),
            episode(&conv, 3, 3, "Lions", "Lion talk."),
        ],
    );
    let id = episode_id(&conv, 1, 2);
    let review = |query: &str, ids: Vec<epimem_core::EpisodeId>| PendingReview {
        query: query.into(),
        memory_ids: ids,
        at: epimem_core::Timestamp(0),
    };
    store
        .record_pending_review(&conv, &review("zebra", vec![episode_id(&conv, 3, 3), id.clone()]))
        .unwrap();
    store.record_pending_review(&conv, &review("lion", vec![episode_id(&conv, 3, 3)])).unwrap();
    // Another tenant cannot delete it.
    assert!(!store.delete_episode(&Scope::tenant("other"), &id).unwrap());
    assert!(store.delete_episode(&Scope::tenant("t"), &id).unwrap());
    assert!(!store.delete_episode(&Scope::tenant("t"), &id).unwrap());
    let scope = Scope::tenant("t");
    assert_eq!(store.episode(&scope, &id).unwrap(), None);
    assert_eq!(store.episodes(&scope, None, None).unwrap().len(), 1);
    let rows = super::index_rows(store, "t", Some("m"));
    assert_eq!(rows.iter().map(|r| r.seq).collect::<Vec<_>>(), [3]);
    assert_eq!(rows[0].vector, Some(vec![3.0]));
    assert!(store.message_vectors(&conv, 1, 2, "m").unwrap().is_empty());
    // Reviews that returned it go (the query may quote it); others stay.
    let reviews = store.take_pending_reviews(&conv).unwrap();
    assert_eq!(reviews.iter().map(|r| r.query.as_str()).collect::<Vec<_>>(), ["lion"]);
    // The forgotten messages keep their place but not their text.
    let batch = store.segmentation_batch(&conv, 3, 5).unwrap();
    let texts: Vec<(u64, &str)> =
        batch.context.iter().map(|m| (m.seq, m.content.as_str())).collect();
    assert_eq!(texts, [(1, ""), (2, ""), (3, "lion mane")]);
    assert!(batch.context[..2].iter().all(|m| m.speaker.is_none()));
}

pub fn deleting_a_conversation_removes_all_of_it(store: &dyn Store) {
    let (conv, kept) = (key("t", "c"), key("t", "d"));
    push_n(store, &conv, 4);
    push_n(store, &kept, 2);
    store.put_message_vectors(&conv, "m", &[(1, vec![1.0]), (3, vec![3.0])]).unwrap();
    segment(store, &conv, 2, vec![episode(&conv, 1, 2, "a", "s")]);
    segment(store, &kept, 2, vec![episode(&kept, 1, 2, "k", "s")]);
    // Pending work: two messages queued behind a fence, and a review to take.
    fence(store, &conv, 4);
    let review =
        PendingReview { query: "q".into(), memory_ids: vec![], at: epimem_core::Timestamp(0) };
    store.record_pending_review(&conv, &review).unwrap();

    // Another tenant cannot delete it.
    assert_eq!(store.delete_conversation(&key("u", "c")).unwrap(), None);
    let ids = store.delete_conversation(&conv).unwrap().expect("it was there");
    assert_eq!(ids, [episode_id(&conv, 1, 2)]);
    assert_eq!(store.delete_conversation(&conv).unwrap(), None);
    assert_eq!(store.queue(&conv).unwrap(), None);
    let stats = store.stats(Some("t")).unwrap();
    assert_eq!((stats.conversations, stats.messages, stats.episodes), (1, 2, 1));
    assert_eq!(stats.queued_jobs, 0, "its segmentation job went with it");
    assert!(store.claim_job("w", epimem_core::Timestamp(0), 1_000).unwrap().is_none());
    let rows = super::index_rows(store, "t", Some("m"));
    assert!(rows.iter().all(|r| r.episode.conversation == kept), "{rows:?}");
    assert_eq!(store.episodes(&Scope::tenant("t"), None, None).unwrap().len(), 1);

    // The same conversation id starts afresh.
    store.push_messages(&[message(&conv, 1, "new start")]).unwrap();
    assert_eq!(store.queue(&conv).unwrap().unwrap().last_seq, 1);
    assert!(store.message_vectors(&conv, 1, 4, "m").unwrap().is_empty());
    assert!(store.take_pending_reviews(&conv).unwrap().is_empty());
}

pub fn deleting_a_tenant_removes_all_of_it_and_nothing_else(store: &dyn Store) {
    let (a, b, other) = (key("t", "a"), key("t", "b"), key("u", "a"));
    for conv in [&a, &b, &other] {
        push_n(store, conv, 3);
        segment(store, conv, 2, vec![episode(conv, 1, 2, "e", "s")]);
    }
    store.create_api_key("t", "ci", "hash-t", epimem_core::Timestamp(0)).unwrap();
    let mut ids = store.delete_tenant("t").unwrap();
    ids.sort();
    let mut want = vec![episode_id(&a, 1, 2), episode_id(&b, 1, 2)];
    want.sort();
    assert_eq!(ids, want);
    let stats = store.stats(Some("t")).unwrap();
    assert_eq!((stats.conversations, stats.messages, stats.episodes), (0, 0, 0));
    assert!(store.episodes(&Scope::tenant("t"), None, None).unwrap().is_empty());
    assert!(super::index_rows(store, "t", None).is_empty());
    // The other tenant keeps everything, and the tenant keeps its keys.
    let kept = store.stats(Some("u")).unwrap();
    assert_eq!((kept.conversations, kept.messages, kept.episodes), (1, 3, 1));
    assert_eq!(store.tenant_of_api_key("hash-t").unwrap().as_deref(), Some("t"));
    assert!(store.delete_tenant("t").unwrap().is_empty(), "nothing left the second time");
}
