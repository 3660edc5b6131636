//! Conformance cases for export and import.

use epimem_core::{
    EpisodeId, NodeSummary, Scope, TimelineNode, Timestamp,
    facts::{Fact, FactChange, FactId},
    fsrs::PendingReview,
};

use super::{T0, episode, fence, key, push_n, segment};
use crate::{ConsolidationCommit, SegmentationCommit, Store, StoreError};

pub fn an_exported_conversation_imports_whole(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 7);
    segment(store, &conv, 2, vec![episode(&conv, 1, 2, "Garden", "Tomatoes by the fence.")]);
    store
        .put_message_vectors(&conv, "model-a", &[(1, vec![0.5, -1.0]), (7, vec![2.0, 0.25])])
        .unwrap();
    let review = PendingReview {
        query: "tomatoes".into(),
        memory_ids: vec![episode(&conv, 1, 2, "", "").id],
        at: Timestamp(T0 + 5),
    };
    store.record_pending_review(&conv, &review).unwrap();
    // Closing the next episode holds the recall for a review job; a fact comes from the first.
    let job = fence(store, &conv, 4);
    let commit = SegmentationCommit {
        job,
        conversation: conv.clone(),
        episodes: vec![episode(&conv, 3, 4, "Flight", "Lisbon on Friday.")],
        window_doubled: true,
        consolidate: None,
    };
    store.commit_segmentation(&commit).unwrap();
    let first: EpisodeId = episode(&conv, 1, 2, "", "").id;
    // Any job that exists can carry a consolidation step: the review job just queued.
    let job = store.claim_job("w", Timestamp(T0), 60_000).unwrap().unwrap().id;
    let fact = Fact {
        id: FactId("fact-1".into()),
        conversation: conv.clone(),
        text: "Tomatoes grow by the fence".into(),
        valid_at: Timestamp(T0 + 1),
        invalid_at: None,
        sources: vec![first.clone()],
        reinforced: 0,
    };
    store
        .commit_consolidation(&ConsolidationCommit {
            job: Some(job),
            conversation: conv.clone(),
            changes: vec![FactChange::Insert(fact)],
            vectors: vec![(FactId("fact-1".into()), vec![1.0, 0.0])],
            fingerprint: Some("model-a".into()),
            through_seq: 2,
            finished: false,
        })
        .unwrap();
    let node = TimelineNode {
        id: "toc:day:2026-03-01".parse().unwrap(),
        version: 0,
        summary: NodeSummary { title: "Garden".into(), episodes: 1, ..NodeSummary::default() },
        children: vec![first.0.clone()],
    };
    store.put_timeline_node("t", &node).unwrap();
    // A person corrected the first episode's title: the old one goes along as a version.
    let edit =
        crate::EpisodeEdit { title: Some("Tomatoes".into()), summary: None, at: Timestamp(T0 + 9) };
    store.edit_episode(&Scope::tenant("t"), &first, &edit).unwrap().unwrap();

    let exported = store.export_conversation(&conv).unwrap().unwrap();
    assert_eq!(exported.episodes[0].title, "Tomatoes");
    assert_eq!(exported.versions.len(), 1);
    assert_eq!(
        (exported.versions[0].episode.clone(), exported.versions[0].version.title.as_str()),
        (first.clone(), "Garden")
    );
    assert_eq!(exported.messages.len(), 7, "pending messages too");
    assert_eq!((exported.watermark, exported.window_doubled), (4, true));
    assert_eq!(exported.episodes.len(), 2);
    assert_eq!(exported.pending_reviews, [review], "held for a job or not");
    assert_eq!(exported.facts.len(), 1);
    assert_eq!(exported.facts[0].vector.as_deref(), Some(&[1.0, 0.0][..]));
    assert_eq!(exported.vectors.len(), 1);
    assert_eq!(exported.vectors[0].vectors.len(), 2);
    assert_eq!(exported.consolidated_upto, 2);
    let timeline = store.timeline_export("t").unwrap();
    assert_eq!(timeline.len(), 1);
    assert_eq!(store.conversations("t").unwrap(), std::slice::from_ref(&conv));
    assert!(store.export_conversation(&key("t", "nope")).unwrap().is_none());

    assert!(matches!(store.import_conversation(&exported), Err(StoreError::Conflict(_))));
    store.delete_conversation(&conv).unwrap();
    let generation = store.change_generation("t").unwrap();
    store.import_conversation(&exported).unwrap();
    store.import_timeline("t", &timeline).unwrap();
    assert_eq!(store.export_conversation(&conv).unwrap().unwrap(), exported);
    assert_eq!(store.timeline_export("t").unwrap(), timeline);
    let changes = store.episode_changes("t", generation, 10).unwrap();
    assert_eq!(changes.len(), 2, "imported episodes reach the search indexes");
    assert_eq!(store.timeline_checkpoint("t").unwrap(), store.change_generation("t").unwrap());
    let queue = store.queue(&conv).unwrap().unwrap();
    assert_eq!((queue.last_seq, queue.watermark), (7, 4));
    assert_eq!(store.episodes(&Scope::tenant("t"), None, None).unwrap().len(), 2);

    assert_eq!(
        store.episode_versions(&Scope::tenant("t"), &first).unwrap(),
        [exported.versions[0].version.clone()]
    );

    // An export that does not hold together is refused whole.
    let mut orphan = exported.clone();
    orphan.conversation = key("t", "other");
    orphan.episodes.clear();
    orphan.facts.clear();
    orphan.pending_reviews.clear();
    orphan.watermark = 0;
    assert!(
        matches!(store.import_conversation(&orphan), Err(StoreError::Invalid(_))),
        "a version of no episode"
    );
    let mut broken = exported.clone();
    broken.conversation = key("t", "other");
    broken.messages.remove(3);
    assert!(matches!(store.import_conversation(&broken), Err(StoreError::Invalid(_))));
    assert!(store.queue(&key("t", "other")).unwrap().is_none());
}

pub fn compacting_keeps_everything_not_forgotten(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 6);
    segment(store, &conv, 4, vec![episode(&conv, 1, 2, "a", "s"), episode(&conv, 3, 4, "b", "s")]);
    assert!(store.delete_episode(&Scope::tenant("t"), &episode(&conv, 1, 2, "", "").id).unwrap());
    let before = store.export_conversation(&conv).unwrap();
    store.compact().unwrap();
    assert_eq!(store.export_conversation(&conv).unwrap(), before);
    assert_eq!(store.queue(&conv).unwrap().unwrap().last_seq, 6);
}
