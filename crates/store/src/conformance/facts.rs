use epimem_core::{
    ConversationKey, Episode, EpisodeId, JobId, JobKind, Scope, Timestamp,
    facts::{Fact, FactChange, FactId},
};

use super::{T0, episode, fence, key, push_n};
use crate::{ConsolidationCommit, ConsolidationRule, SegmentationCommit, Store, StoreError};

const RULE: ConsolidationRule = ConsolidationRule { every: 3, flashbulb: 0.85 };

/// Closes messages `first..=last` as one episode with `surprise`, under the consolidation rule.
fn close(
    store: &dyn Store,
    conv: &ConversationKey,
    first: u64,
    last: u64,
    surprise: f64,
) -> EpisodeId {
    let mut e = episode(conv, first, last, "Garden", "About the garden.");
    e.surprise = surprise;
    close_as(store, conv, e)
}

/// Closes `e` under the consolidation rule.
pub(super) fn close_as(store: &dyn Store, conv: &ConversationKey, e: Episode) -> EpisodeId {
    let job = fence(store, conv, e.last_seq);
    let id = e.id.clone();
    let commit = SegmentationCommit {
        job,
        conversation: conv.clone(),
        episodes: vec![e],
        window_doubled: false,
        consolidate: Some(RULE),
    };
    store.commit_segmentation(&commit).unwrap();
    id
}

/// Claims every runnable job at `T0 + at_ms`.
fn consolidations_at(store: &dyn Store, at_ms: i64) -> Vec<(JobId, JobKind)> {
    let mut found = Vec::new();
    while let Some(job) = store.claim_job("w", Timestamp(T0 + at_ms), 60_000).unwrap() {
        found.push((job.id, job.kind));
    }
    found
}

pub(super) fn consolidations(store: &dyn Store) -> Vec<(JobId, JobKind)> {
    consolidations_at(store, 0)
}

pub(super) fn fact(conv: &ConversationKey, n: u64, text: &str, sources: &[&EpisodeId]) -> Fact {
    Fact {
        id: FactId(format!("fact-{n}")),
        conversation: conv.clone(),
        text: text.into(),
        valid_at: Timestamp(T0 + n as i64),
        invalid_at: None,
        sources: sources.iter().map(|s| (*s).clone()).collect(),
        reinforced: 0,
    }
}

pub(super) fn commit(
    job: JobId,
    conv: &ConversationKey,
    changes: Vec<FactChange>,
    through: u64,
) -> ConsolidationCommit {
    ConsolidationCommit {
        job: Some(job),
        conversation: conv.clone(),
        changes,
        vectors: Vec::new(),
        fingerprint: None,
        through_seq: through,
        finished: true,
    }
}

pub fn closing_episodes_queues_consolidation_every_few_or_at_a_flashbulb(store: &dyn Store) {
    let (conv, other) = (key("t", "c"), key("t", "d"));
    push_n(store, &conv, 8);
    push_n(store, &other, 2);
    close(store, &conv, 1, 2, 0.2);
    close(store, &conv, 3, 4, 0.2);
    assert!(consolidations(store).is_empty(), "two episodes wait");
    close(store, &conv, 5, 6, 0.2);
    let jobs = consolidations(store);
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].1, JobKind::Consolidate { conversation: conv.clone(), upto_seq: 6 });
    // One at a time: while it is queued (here: leased), closing more queues nothing.
    store.abandon_job(jobs[0].0, None, "later", Some(Timestamp(T0 + 1))).unwrap();
    close(store, &conv, 7, 8, 0.2);
    assert_eq!(consolidations_at(store, 10).len(), 1, "still the one job");
    // A flashbulb episode queues one at once.
    close(store, &other, 1, 2, 0.9);
    let jobs = consolidations(store);
    assert!(
        jobs.iter()
            .any(|(_, k)| *k == JobKind::Consolidate { conversation: other.clone(), upto_seq: 2 }),
        "{jobs:?}"
    );
}

pub fn consolidation_writes_facts_once_and_invalidates_never_deletes(store: &dyn Store) {
    let (conv, other) = (key("t", "c"), key("t", "d"));
    push_n(store, &conv, 6);
    push_n(store, &other, 2);
    let (a, b, c) = (
        close(store, &conv, 1, 2, 0.2),
        close(store, &conv, 3, 4, 0.2),
        close(store, &conv, 5, 6, 0.2),
    );
    close(store, &other, 1, 2, 0.9);
    let jobs = consolidations(store);
    let job_of = |c: &ConversationKey| jobs.iter().find(|(_, k)| k.conversation() == c).unwrap().0;
    let job = job_of(&conv);

    let batch = store.consolidation_batch(&conv, 6, 2, 10, Some("fp")).unwrap();
    let ids: Vec<&EpisodeId> = batch.episodes.iter().map(|d| &d.episode.id).collect();
    assert_eq!(ids, [&a, &b], "oldest first, at most two");
    assert!(!batch.episodes[0].messages.is_empty());
    assert!(batch.facts.is_empty());

    let porto = fact(&conv, 1, "Ana lives in Porto", &[&a]);
    let tea = fact(&conv, 2, "Ana likes tea", &[&b]);
    let step = ConsolidationCommit {
        vectors: vec![(porto.id.clone(), vec![0.6, 0.8])],
        fingerprint: Some("fp".into()),
        finished: false,
        ..commit(
            job,
            &conv,
            vec![FactChange::Insert(porto.clone()), FactChange::Insert(tea.clone())],
            4,
        )
    };
    store.commit_consolidation(&step).unwrap();
    store.commit_consolidation(&step).unwrap(); // a retried step writes nothing twice
    let batch = store.consolidation_batch(&conv, 6, 10, 10, Some("fp")).unwrap();
    assert_eq!(
        batch.episodes.iter().map(|d| &d.episode.id).collect::<Vec<_>>(),
        [&c],
        "through 4 is done"
    );
    let texts: Vec<(&str, Option<&[f32]>)> =
        batch.facts.iter().map(|f| (f.fact.text.as_str(), f.vector.as_deref())).collect();
    assert_eq!(
        texts,
        [("Ana likes tea", None), ("Ana lives in Porto", Some(&[0.6f32, 0.8][..]))],
        "newest first"
    );
    assert!(
        store
            .consolidation_batch(&conv, 6, 10, 10, Some("other"))
            .unwrap()
            .facts
            .iter()
            .all(|f| f.vector.is_none()),
        "vectors of one embedder only"
    );

    let lisbon = fact(&conv, 3, "Ana lives in Lisbon", &[&c]);
    let changes = vec![
        FactChange::Reinforce { id: tea.id.clone(), sources: vec![c.clone()] },
        FactChange::Invalidate { id: porto.id.clone(), at: Timestamp(T0 + 99) },
        FactChange::Insert(lisbon.clone()),
    ];
    store.commit_consolidation(&commit(job, &conv, changes.clone(), 6)).unwrap();
    assert!(
        matches!(
            store.commit_consolidation(&commit(job, &conv, changes, 6)),
            Err(StoreError::Conflict(_))
        ),
        "the job is done"
    );

    let scope = Scope::tenant("t");
    let valid: Vec<Fact> =
        store.facts(&scope, false, None, None).unwrap().into_iter().map(|f| f.fact).collect();
    assert_eq!(
        valid.iter().map(|f| f.text.as_str()).collect::<Vec<_>>(),
        ["Ana lives in Lisbon", "Ana likes tea"]
    );
    let tea_now = valid.iter().find(|f| f.id == tea.id).unwrap();
    assert_eq!((tea_now.reinforced, tea_now.sources.clone()), (1, vec![b.clone(), c.clone()]));
    let all = store.facts(&scope, true, None, None).unwrap();
    let porto_now = all.iter().find(|f| f.fact.id == porto.id).expect("invalidated, not deleted");
    assert_eq!(porto_now.fact.invalid_at, Some(Timestamp(T0 + 99)));
    assert_eq!(
        store.facts(&scope.clone().with_conversation(Some("d".into())), true, None, None).unwrap(),
        []
    );
    assert_eq!(store.facts(&Scope::tenant("u"), true, None, None).unwrap(), []);
    assert_eq!(store.facts(&scope, true, Some(1), None).unwrap().len(), 1);

    // A change to another conversation's fact is refused, and nothing of the step is written.
    let theirs = commit(
        job_of(&other),
        &other,
        vec![
            FactChange::Insert(fact(&other, 4, "Rui is a dog", &[])),
            FactChange::Invalidate { id: tea.id.clone(), at: Timestamp(T0) },
        ],
        2,
    );
    assert!(matches!(store.commit_consolidation(&theirs), Err(StoreError::Invalid(_))));
    assert_eq!(store.facts(&scope, false, None, None).unwrap().len(), 2);
}

/// Three episodes of conversation "c" of tenant "t" closed, and the consolidation that queued.
fn three_closed(store: &dyn Store) -> (ConversationKey, [EpisodeId; 3], JobId) {
    let conv = key("t", "c");
    push_n(store, &conv, 6);
    let closed = [1, 3, 5].map(|first| close(store, &conv, first, first + 1, 0.2));
    let (job, _) = consolidations(store).pop().unwrap();
    (conv, closed, job)
}

pub fn forgetting_an_episode_forgets_the_facts_from_it(store: &dyn Store) {
    let (conv, [a, b, c], job) = three_closed(store);
    let changes = vec![
        FactChange::Insert(fact(&conv, 1, "From a", &[&a])),
        FactChange::Insert(fact(&conv, 2, "From a and b", &[&a, &b])),
        FactChange::Insert(fact(&conv, 3, "From c", &[&c])),
    ];
    store.commit_consolidation(&commit(job, &conv, changes, 6)).unwrap();
    assert!(store.delete_episode(&Scope::tenant("t"), &a).unwrap());
    let left: Vec<String> = store
        .facts(&Scope::tenant("t"), true, None, None)
        .unwrap()
        .into_iter()
        .map(|f| f.fact.text)
        .collect();
    assert_eq!(left, ["From c"]);
    store.delete_tenant("t").unwrap();
    assert_eq!(store.facts(&Scope::tenant("t"), true, None, None).unwrap(), []);
}

/// A consolidation reads its batch, asks a model, then commits: an episode forgotten in between
/// must not come back as a fact told from it (nor reinforce one); the rest is written.
pub fn a_consolidation_that_read_a_forgotten_episode_writes_nothing_told_from_it(
    store: &dyn Store,
) {
    let (conv, [a, b, c], job) = three_closed(store);
    let partly =
        |changes| ConsolidationCommit { finished: false, ..commit(job, &conv, changes, 6) };
    store
        .commit_consolidation(&partly(vec![FactChange::Insert(fact(&conv, 1, "From c", &[&c]))]))
        .unwrap();
    assert!(store.delete_episode(&Scope::tenant("t"), &a).unwrap());
    let late = vec![
        FactChange::Insert(fact(&conv, 2, "From c again", &[&c])),
        FactChange::Insert(fact(&conv, 3, "From a and b, read before", &[&a, &b])),
    ];
    store.commit_consolidation(&partly(late)).unwrap();
    let reinforce = vec![FactChange::Reinforce { id: FactId("fact-1".into()), sources: vec![a] }];
    store.commit_consolidation(&partly(reinforce)).unwrap();
    let facts = store.facts(&Scope::tenant("t"), true, None, None).unwrap();
    let mut told: Vec<(&str, u32)> =
        facts.iter().map(|f| (f.fact.text.as_str(), f.fact.reinforced)).collect();
    told.sort();
    assert_eq!(told, [("From c", 0), ("From c again", 0)], "nothing told from the forgotten");
}

pub fn facts_given_whole_need_no_job_and_are_written_once(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 2);
    let source = close(store, &conv, 1, 2, 0.2);
    let given = ConsolidationCommit {
        job: None,
        vectors: vec![(FactId("fact-1".into()), vec![1.0, 0.0])],
        fingerprint: Some("fp".into()),
        ..commit(
            JobId(0),
            &conv,
            vec![FactChange::Insert(fact(&conv, 1, "Ana likes tea", &[&source]))],
            0,
        )
    };
    store.commit_consolidation(&given).unwrap();
    store.commit_consolidation(&given).unwrap();
    let held = store.facts(&Scope::tenant("t"), false, None, Some("fp")).unwrap();
    assert_eq!(held.len(), 1, "given twice, written once");
    assert_eq!(
        (held[0].fact.text.as_str(), &held[0].fact.sources),
        ("Ana likes tea", &vec![source])
    );
    assert_eq!(held[0].vector.as_deref(), Some(&[1.0, 0.0][..]));
}
