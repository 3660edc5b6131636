//! Fences, commits, leases and the job queue.

use super::*;

pub fn fences_are_exclusive_until_released_or_stale(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 6);
    let trigger = Trigger { kind: TriggerKind::Count, upto_seq: 6 };
    let ttl = 120 * 60_000;
    let job = store.open_segmentation(&conv, trigger, Timestamp(T0), ttl).unwrap().unwrap();
    assert_eq!(store.open_segmentation(&conv, trigger, Timestamp(T0 + 1000), ttl).unwrap(), None);
    // A fence past its TTL is stale: the next caller takes over with a new job.
    let late = Timestamp(T0 + ttl + 1);
    let takeover = store.open_segmentation(&conv, trigger, late, ttl).unwrap().unwrap();
    assert_ne!(takeover, job);
    // The stale job may no longer commit.
    let stale = SegmentationCommit {
        job,
        conversation: conv.clone(),
        episodes: vec![episode(&conv, 1, 6, "t", "s")],
        window_doubled: false,
        consolidate: None,
    };
    assert!(matches!(store.commit_segmentation(&stale), Err(StoreError::Conflict(_))));
    // Fencing past the end of the conversation is refused.
    let beyond = Trigger { kind: TriggerKind::Count, upto_seq: 7 };
    assert!(matches!(
        store.open_segmentation(&key("t", "c"), beyond, late, ttl),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store.open_segmentation(&key("t", "nope"), trigger, late, ttl),
        Err(StoreError::NotFound(_))
    ));
}

pub fn commit_advances_watermark_and_retires_job(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 10);
    let job = fence(store, &conv, 10);
    assert_eq!(store.stats(None).unwrap().queued_jobs, 1);
    let claimed = store.claim_job("w", Timestamp(T0), 30_000).unwrap().unwrap();
    assert_eq!(claimed.id, job);
    assert_eq!(
        claimed.kind,
        JobKind::Segment { conversation: conv.clone(), upto_seq: 10, trigger: TriggerKind::Flush }
    );
    store
        .commit_segmentation(&SegmentationCommit {
            job,
            conversation: conv.clone(),
            episodes: vec![episode(&conv, 1, 4, "a", "s"), episode(&conv, 5, 7, "b", "s")],
            window_doubled: false,
            consolidate: None,
        })
        .unwrap();
    let q = store.queue(&conv).unwrap().unwrap();
    assert_eq!((q.watermark, q.pending()), (7, 3));
    assert_eq!(q.oldest_pending, Some(Timestamp(T0 + 8 * 60_000)));
    let stats = store.stats(None).unwrap();
    assert_eq!((stats.episodes, stats.queued_jobs, stats.pending_messages), (2, 0, 3));
    // The fence is free again.
    fence(store, &conv, 10);
}

pub fn commit_without_the_fence_changes_nothing(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 5);
    let commit = SegmentationCommit {
        job: JobId(12345),
        conversation: conv.clone(),
        episodes: vec![episode(&conv, 1, 5, "a", "s")],
        window_doubled: false,
        consolidate: None,
    };
    assert!(matches!(store.commit_segmentation(&commit), Err(StoreError::Conflict(_))));
    let job = fence(store, &conv, 5);
    store.commit_segmentation(&SegmentationCommit { job, ..commit.clone() }).unwrap();
    // Replaying the same commit (a retried job) is refused and duplicates nothing.
    assert!(matches!(
        store.commit_segmentation(&SegmentationCommit { job, ..commit }),
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(store.stats(None).unwrap().episodes, 1);
}

pub fn commit_rejects_episodes_that_skip_messages(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 8);
    let job = fence(store, &conv, 6);
    for episodes in [
        vec![episode(&conv, 2, 4, "gap at start", "s")],
        vec![episode(&conv, 1, 3, "a", "s"), episode(&conv, 5, 6, "gap", "s")],
        vec![episode(&conv, 1, 7, "past the fence", "s")],
        vec![episode(&key("t", "other"), 1, 3, "wrong conversation", "s")],
    ] {
        let commit = SegmentationCommit {
            job,
            conversation: conv.clone(),
            episodes,
            window_doubled: false,
            consolidate: None,
        };
        assert!(matches!(store.commit_segmentation(&commit), Err(StoreError::Invalid(_))));
    }
    assert_eq!(store.stats(None).unwrap().episodes, 0);
    assert_eq!(store.queue(&conv).unwrap().unwrap().watermark, 0);
}

pub fn doubling_the_window_is_remembered(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 20);
    let job = fence(store, &conv, 20);
    store
        .commit_segmentation(&SegmentationCommit {
            job,
            conversation: conv.clone(),
            episodes: vec![],
            window_doubled: true,
            consolidate: None,
        })
        .unwrap();
    let q = store.queue(&conv).unwrap().unwrap();
    assert!(q.window_doubled);
    assert_eq!(q.pending(), 20);
    segment(store, &conv, 20, vec![episode(&conv, 1, 20, "a", "s")]);
    assert!(!store.queue(&conv).unwrap().unwrap().window_doubled);
}

pub fn abandoned_jobs_retry_or_release_their_fence(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 6);
    let job = fence(store, &conv, 6);
    store.claim_job("w", Timestamp(T0), 30_000).unwrap().unwrap();
    store.abandon_job(job, Some(&conv), "model timed out", Some(Timestamp(T0 + 5_000))).unwrap();
    // Retried after its backoff, and it still holds the fence meanwhile.
    assert_eq!(store.claim_job("w", Timestamp(T0 + 4_999), 30_000).unwrap(), None);
    let again = store.claim_job("w", Timestamp(T0 + 5_000), 30_000).unwrap().unwrap();
    assert_eq!((again.id, again.attempts), (job, 2));
    assert_eq!(
        store
            .open_segmentation(
                &conv,
                Trigger { kind: TriggerKind::Flush, upto_seq: 6 },
                Timestamp(T0),
                60_000
            )
            .unwrap(),
        None
    );
    store.abandon_job(job, Some(&conv), "gave up", None).unwrap();
    assert_eq!(store.stats(None).unwrap().failed_jobs, 1);
    assert_eq!(store.claim_job("w", Timestamp(T0 + 10_000_000), 30_000).unwrap(), None);
    // The fence is free for a new job.
    fence(store, &conv, 6);
}

pub fn leases_expire(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 6);
    let job = fence(store, &conv, 6);
    let first = store.claim_job("w1", Timestamp(T0), 30_000).unwrap().unwrap();
    assert_eq!((first.id, first.attempts), (job, 1));
    assert_eq!(store.claim_job("w2", Timestamp(T0 + 29_999), 30_000).unwrap(), None);
    let second = store.claim_job("w2", Timestamp(T0 + 30_000), 30_000).unwrap().unwrap();
    assert_eq!((second.id, second.attempts), (job, 2));
}

pub fn a_claim_of_one_tenant_or_conversation_takes_its_jobs_only(store: &dyn Store) {
    let (a, b, other) = (key("t", "a"), key("t", "b"), key("u", "a"));
    for conv in [&a, &b, &other] {
        push_n(store, conv, 6);
        fence(store, conv, 6);
    }
    let claim = |of| {
        let job = store.claim_job_of("w", Timestamp(T0), 30_000, of).unwrap();
        job.map(|j| j.kind.conversation().clone())
    };
    let of = |tenant, conversation| JobsOf::Tenant { tenant, conversation };
    assert_eq!(claim(of("t", Some("b"))), Some(b), "b's, though a's is older");
    assert_eq!(claim(of("t", Some("b"))), None, "b has no other");
    assert_eq!(claim(of("u", None)), Some(other), "of the tenant, whatever the conversation");
    assert_eq!(claim(of("t", None)), Some(a));
    assert_eq!(claim(JobsOf::Everyone), None, "every job taken");
}

pub fn leases_renew_only_for_their_worker(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 6);
    let job = fence(store, &conv, 6);
    store.claim_job("w1", Timestamp(T0), 30_000).unwrap().unwrap();
    assert!(store.renew_lease(job, "w1", Timestamp(T0 + 60_000)).unwrap());
    // Renewed: not taken over when the first lease would have run out.
    assert_eq!(store.claim_job("w2", Timestamp(T0 + 45_000), 30_000).unwrap(), None);
    assert!(!store.renew_lease(job, "w2", Timestamp(T0 + 90_000)).unwrap(), "not w2's");
    let taken = store.claim_job("w2", Timestamp(T0 + 60_000), 30_000).unwrap().unwrap();
    assert_eq!(taken.id, job);
    assert!(!store.renew_lease(job, "w1", Timestamp(T0 + 120_000)).unwrap(), "lost to w2");
}

pub fn jobs_are_listed_with_where_they_stand(store: &dyn Store) {
    let (a, b, other) = (key("t", "a"), key("t", "b"), key("u", "a"));
    for conv in [&a, &b, &other] {
        push_n(store, conv, 3);
    }
    let (job_a, job_b) = (fence(store, &a, 3), fence(store, &b, 3));
    fence(store, &other, 3);
    let now = Timestamp(T0);
    let states = |conversation: Option<&str>, at: Timestamp| -> Vec<(JobId, JobState)> {
        let jobs = store.jobs("t", conversation, at, 10).unwrap();
        jobs.iter().map(|j| (j.id, j.state)).collect()
    };
    assert_eq!(states(None, now), [(job_a, JobState::Queued), (job_b, JobState::Queued)]);
    assert_eq!(states(Some("b"), now), [(job_b, JobState::Queued)]);

    store.claim_job("w", now, 30_000).unwrap().unwrap();
    let running = &store.jobs("t", Some("a"), now, 10).unwrap()[0];
    assert_eq!((running.state, running.worker.as_deref()), (JobState::Running, Some("w")));
    assert_eq!((running.attempts, running.until), (1, Some(Timestamp(T0 + 30_000))));
    assert_eq!((running.kind, running.conversation.as_ref()), (Some("segment"), Some(&a)));
    // A lease that ran out is queued again (its worker died).
    assert_eq!(states(Some("a"), Timestamp(T0 + 30_000)), [(job_a, JobState::Queued)]);

    store.abandon_job(job_a, Some(&a), "timed out", Some(Timestamp(T0 + 1_000))).unwrap();
    let retrying = &store.jobs("t", Some("a"), now, 10).unwrap()[0];
    assert_eq!(
        (retrying.state, retrying.last_error.as_deref()),
        (JobState::Retrying, Some("timed out"))
    );
    store.abandon_job(job_b, Some(&b), "gave up", None).unwrap();
    assert_eq!(states(Some("b"), now), [(job_b, JobState::Parked)]);
    assert_eq!(store.jobs("t", None, now, 1).unwrap().len(), 1, "at most the limit");
}
