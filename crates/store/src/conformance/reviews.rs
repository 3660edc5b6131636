use epimem_core::{EpisodeId, FsrsState, JobKind, Scope, Timestamp, episode_id};

use super::{T0, episode, key, push_n, segment};
use crate::{PendingReview, ReviewedMemory, SegmentationCommit, Store, StoreError};

fn recall(query: &str, ids: &[&EpisodeId]) -> PendingReview {
    PendingReview {
        query: query.into(),
        memory_ids: ids.iter().map(|id| (*id).clone()).collect(),
        at: Timestamp(T0 + 3_600_000),
    }
}

pub fn closing_episodes_queues_a_review_of_pending_recalls(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 6);
    let first = episode(&conv, 1, 2, "Roses", "About roses.");
    let recalled = first.id.clone();
    segment(store, &conv, 2, vec![first]);
    assert!(store.claim_job("w", Timestamp(T0), 60_000).unwrap().is_none(), "nothing recalled yet");
    store.record_pending_review(&conv, &recall("roses", &[&recalled])).unwrap();

    // A run that closes nothing (the window doubles) leaves the recall pending.
    let job = super::fence(store, &conv, 6);
    let doubled = SegmentationCommit {
        job,
        conversation: conv.clone(),
        episodes: vec![],
        window_doubled: true,
        consolidate: None,
    };
    store.commit_segmentation(&doubled).unwrap();
    assert!(store.claim_job("w", Timestamp(T0), 60_000).unwrap().is_none());

    segment(store, &conv, 6, vec![episode(&conv, 3, 6, "Soil", "About soil.")]);
    let job = store.claim_job("w", Timestamp(T0), 60_000).unwrap().expect("a review job");
    assert_eq!(
        job.kind,
        JobKind::Review { conversation: conv.clone(), following: vec![episode_id(&conv, 3, 6)] }
    );
    assert_eq!(store.reviews_of_job(job.id).unwrap(), [recall("roses", &[&recalled])]);
    assert!(store.take_pending_reviews(&conv).unwrap().is_empty(), "held for the job");
    let listed = store.jobs("t", Some("c"), Timestamp(T0), 10).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].kind, listed[0].conversation.as_ref()), (Some("review"), Some(&conv)));
}

pub fn a_review_applies_once_and_never_over_a_newer_one(store: &dyn Store) {
    let (conv, other) = (key("t", "c"), key("u", "c"));
    push_n(store, &conv, 4);
    push_n(store, &other, 2);
    let reviewed_at = Timestamp(T0 + 86_400_000);
    let mut rose = episode(&conv, 1, 2, "Roses", "About roses.");
    rose.fsrs = FsrsState {
        stability: Some(2.0),
        difficulty: Some(5.0),
        last_review: Some(Timestamp(T0)),
        due: None,
    };
    let (rose_id, old) = (rose.id.clone(), rose.fsrs);
    segment(store, &conv, 2, vec![rose]);
    segment(store, &other, 2, vec![episode(&other, 1, 2, "Theirs", "Another tenant's.")]);
    store.record_pending_review(&conv, &recall("roses", &[&rose_id])).unwrap();
    segment(store, &conv, 4, vec![episode(&conv, 3, 4, "Soil", "About soil.")]);
    let job = store.claim_job("w", Timestamp(T0), 60_000).unwrap().unwrap();
    let generation = store.change_generation("t").unwrap();

    let stronger = FsrsState {
        stability: Some(9.0),
        difficulty: Some(4.0),
        last_review: Some(reviewed_at),
        due: Some(reviewed_at),
    };
    let other_id = episode_id(&other, 1, 2);
    let reviewed = [
        ReviewedMemory {
            id: rose_id.clone(),
            reviewed_against: Some(Timestamp(T0)),
            state: stronger,
        },
        // Rated against a review that is no longer its last: left alone.
        ReviewedMemory {
            id: episode_id(&conv, 3, 4),
            reviewed_against: Some(Timestamp(1)),
            state: stronger,
        },
        // Another tenant's memory: never touched.
        ReviewedMemory { id: other_id.clone(), reviewed_against: None, state: stronger },
    ];
    assert_eq!(store.finish_review(job.id, "t", &reviewed).unwrap(), 1);
    let scope = Scope::tenant("t");
    assert_eq!(
        store.episodes_by_id(&scope, std::slice::from_ref(&rose_id)).unwrap()[0].fsrs,
        stronger
    );
    assert_eq!(
        store.episodes_by_id(&Scope::tenant("u"), &[other_id]).unwrap()[0].fsrs,
        FsrsState::default()
    );
    let changes = store.episode_changes("t", generation, 10).unwrap();
    assert_eq!(changes.len(), 1);
    assert!(changes[0].restated && !changes[0].forgotten && changes[0].episode == rose_id);
    assert!(store.reviews_of_job(job.id).unwrap().is_empty());
    assert!(
        store.claim_job("w", Timestamp(T0 + 120_000), 60_000).unwrap().is_none(),
        "the job is done"
    );

    // Done once: a second finish (a retry after a crash) changes nothing.
    let again =
        [ReviewedMemory { id: rose_id.clone(), reviewed_against: Some(Timestamp(T0)), state: old }];
    assert!(matches!(store.finish_review(job.id, "t", &again), Err(StoreError::Conflict(_))));
    assert_eq!(
        store.episodes_by_id(&scope, std::slice::from_ref(&rose_id)).unwrap()[0].fsrs,
        stronger
    );
    // Each review applied is kept in the episode's history; none for the one left alone.
    assert_eq!(store.episode_reviews(&scope, &rose_id).unwrap(), [stronger]);
    assert!(store.episode_reviews(&scope, &episode_id(&conv, 3, 4)).unwrap().is_empty());
    assert!(store.episode_reviews(&Scope::tenant("u"), &rose_id).unwrap().is_empty());
    // The history goes along with an export.
    let exported = store.export_conversation(&conv).unwrap().unwrap();
    let history: Vec<_> = exported.reviews.iter().map(|r| (r.episode.clone(), r.state)).collect();
    assert_eq!(history, [(rose_id.clone(), stronger)]);
    // Forgetting the episode forgets its history.
    assert!(store.delete_episode(&scope, &rose_id).unwrap());
    assert!(store.episode_reviews(&scope, &rose_id).unwrap().is_empty());
}

pub fn forgetting_reaches_recalls_held_for_review(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 4);
    let (a, b) = (
        episode(&conv, 1, 2, "Roses", "About roses."),
        episode(&conv, 3, 4, "Soil", "About soil."),
    );
    let (a_id, b_id) = (a.id.clone(), b.id.clone());
    segment(store, &conv, 2, vec![a]);
    store.record_pending_review(&conv, &recall("quoting the roses", &[&a_id])).unwrap();
    store.record_pending_review(&conv, &recall("anything", &[&a_id, &b_id])).unwrap();
    segment(store, &conv, 4, vec![b]);
    let job = store.claim_job("w", Timestamp(T0), 60_000).unwrap().unwrap();
    assert_eq!(store.reviews_of_job(job.id).unwrap().len(), 2);
    assert!(store.delete_episode(&Scope::tenant("t"), &b_id).unwrap());
    // Only recalls that returned the forgotten episode go (their query may quote it).
    assert_eq!(store.reviews_of_job(job.id).unwrap(), [recall("quoting the roses", &[&a_id])]);
    store.delete_conversation(&conv).unwrap();
    assert!(store.reviews_of_job(job.id).unwrap().is_empty());
}
