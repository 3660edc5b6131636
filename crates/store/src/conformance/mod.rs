//! The storage conformance suite: every backend must pass every case.
//!
//! A backend's tests invoke `epimem_store::conformance_tests!(make_store())`, which expands to
//! one `#[test]` per case, each on a fresh, empty store. `make_store()` returns anything that
//! dereferences to the store (a `Box`, or a fixture that also owns a temporary directory).

use epimem_core::{
    BoundaryReason, ConversationKey, Episode, EpisodeId, FsrsState, JobId, JobKind, NewMessage,
    Role, Scope, Timestamp, Trigger, TriggerKind, episode_id,
};
use serde_json::json;

use crate::{JobState, JobsOf, PendingReview, SegmentationCommit, Store, StoreError};

mod changes;
mod edits;
mod facts;
mod forget;
mod jobs;
mod llm_usage;
mod reviews;
mod taking_back;
mod timeline;
mod transfer;
mod users;
pub use changes::*;
pub use edits::*;
pub use facts::*;
pub use forget::*;
pub use jobs::*;
pub use llm_usage::*;
pub use reviews::*;
pub use taking_back::*;
pub use timeline::*;
pub use transfer::*;
pub use users::*;

/// Expands to one test per conformance case; `$make` builds a fresh, empty store fixture.
#[macro_export]
macro_rules! conformance_tests {
    ($make:expr) => {
        $crate::conformance_tests!(@cases $make;
            push_assigns_gap_free_sequences_and_skips_duplicates,
            push_reports_each_conversation,
            conversation_time_only_moves_forward,
            the_open_tail_is_every_message_not_yet_in_an_episode,
            fences_are_exclusive_until_released_or_stale,
            commit_advances_watermark_and_retires_job,
            commit_without_the_fence_changes_nothing,
            commit_rejects_episodes_that_skip_messages,
            doubling_the_window_is_remembered,
            abandoned_jobs_retry_or_release_their_fence,
            leases_expire,
            a_claim_of_one_tenant_or_conversation_takes_its_jobs_only,
            leases_renew_only_for_their_worker,
            jobs_are_listed_with_where_they_stand,
            batches_carry_context,
            tenants_never_see_each_other,
            episodes_list_and_detail,
            episodes_are_paged_by_cursor,
            stats_count_everything,
            message_vectors_are_kept_per_model,
            index_rows_cover_closed_episodes_only,
            episodes_by_id_respect_scope_and_time,
            pending_reviews_are_taken_once,
            deleting_an_episode_removes_it_everywhere,
            an_edit_keeps_the_old_text_as_a_version_and_reaches_the_change_log,
            deleting_a_conversation_removes_all_of_it,
            deleting_a_tenant_removes_all_of_it_and_nothing_else,
            changes_are_logged_per_tenant_in_commit_order,
            api_keys_are_found_by_hash_until_revoked,
            llm_usage_adds_up_per_tenant_and_stage,
            closing_episodes_queues_a_review_of_pending_recalls,
            a_review_applies_once_and_never_over_a_newer_one,
            forgetting_reaches_recalls_held_for_review,
            closing_episodes_queues_consolidation_every_few_or_at_a_flashbulb,
            consolidation_writes_facts_once_and_invalidates_never_deletes,
            forgetting_an_episode_forgets_the_facts_from_it,
            a_consolidation_that_read_a_forgotten_episode_writes_nothing_told_from_it,
            timeline_nodes_are_versioned_and_marks_cleared_with_their_write,
            forgetting_an_episode_takes_its_words_out_of_the_timeline,
            a_node_told_from_children_gone_since_is_not_written,
            an_exported_conversation_imports_whole,
            compacting_keeps_everything_not_forgotten,
            two_users_of_one_tenant_never_meet_and_forget_apart,
            a_conversation_is_read_oldest_first_with_its_episodes,
            taking_back_removes_the_newest_open_message_only,
            facts_given_whole_need_no_job_and_are_written_once
        );
    };
    (@cases $make:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                let fixture = $make;
                $crate::conformance::$case(&*fixture);
            }
        )*
    };
}

const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/// A tenant's index rows as the engine reads them: the episodes its change log says were closed
/// and not forgotten, then their rows.
pub(crate) fn index_rows(
    store: &dyn Store,
    tenant: &str,
    fingerprint: Option<&str>,
) -> Vec<crate::IndexedMessage> {
    let mut ids: Vec<epimem_core::EpisodeId> = Vec::new();
    for change in store.episode_changes(tenant, 0, 1_000_000).unwrap() {
        if change.restated {
            continue;
        }
        ids.retain(|id| *id != change.episode);
        if !change.forgotten {
            ids.push(change.episode);
        }
    }
    store.indexed_messages_of(tenant, &ids, fingerprint).unwrap()
}

fn key(tenant: &str, conversation: &str) -> ConversationKey {
    ConversationKey::new(tenant, conversation)
}

fn message(conv: &ConversationKey, n: u64, content: &str) -> NewMessage {
    NewMessage {
        conversation: conv.clone(),
        user: Some("u1".into()),
        agent: None,
        key: format!("k{n}"),
        role: if n % 2 == 1 { Role::User } else { Role::Assistant },
        speaker: (n % 2 == 1).then(|| "Caroline".to_owned()),
        content: content.to_owned(),
        timestamp: Timestamp(T0 + n as i64 * 60_000),
        metadata: if n == 1 { json!({"source": "test"}) } else { serde_json::Value::Null },
        tokens: 3,
    }
}

fn push_n(store: &dyn Store, conv: &ConversationKey, n: u64) {
    let msgs: Vec<_> =
        (1..=n).map(|i| message(conv, i, &format!("message number {i} about gardening"))).collect();
    store.push_messages(&msgs).unwrap();
}

pub(crate) fn episode(
    conv: &ConversationKey,
    first: u64,
    last: u64,
    title: &str,
    summary: &str,
) -> Episode {
    Episode {
        id: episode_id(conv, first, last),
        conversation: conv.clone(),
        user: Some("u1".into()),
        agent: None,
        first_seq: first,
        last_seq: last,
        context_first_seq: (first > 1).then_some(first - 1),
        start: Timestamp(T0 + first as i64 * 60_000),
        end: Timestamp(T0 + last as i64 * 60_000),
        title: title.into(),
        summary: summary.into(),
        keywords: vec!["garden".into()],
        surprise: 0.25,
        boundary_reason: BoundaryReason::IntentShift,
        fsrs: FsrsState::default(),
        told_by: Default::default(),
        told_note: None,
    }
}

fn fence(store: &dyn Store, conv: &ConversationKey, upto: u64) -> JobId {
    store
        .open_segmentation(
            conv,
            Trigger { kind: TriggerKind::Flush, upto_seq: upto },
            Timestamp(T0),
            60_000,
        )
        .unwrap()
        .expect("fence is free")
}

/// Fences, then commits `episodes` with the fence.
fn segment(store: &dyn Store, conv: &ConversationKey, upto: u64, episodes: Vec<Episode>) {
    let job = fence(store, conv, upto);
    store
        .commit_segmentation(&SegmentationCommit {
            job,
            conversation: conv.clone(),
            episodes,
            window_doubled: false,
            consolidate: None,
        })
        .unwrap();
}

pub fn push_assigns_gap_free_sequences_and_skips_duplicates(store: &dyn Store) {
    let conv = key("t", "c");
    let first: Vec<_> = (1..=3).map(|i| message(&conv, i, "hello")).collect();
    let out = store.push_messages(&first).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].inserted, out[0].queue.pending(), out[0].queue.last_seq), (3, 3, 3));
    assert_eq!(out[0].queue.oldest_pending, Some(Timestamp(T0 + 60_000)));
    assert_eq!(out[0].queue.newest, Some(Timestamp(T0 + 180_000)));

    // Messages 2 and 3 again, plus a new 4: only 4 is added, as seq 4.
    let again: Vec<_> = (2..=4).map(|i| message(&conv, i, "hello")).collect();
    let out = store.push_messages(&again).unwrap();
    assert_eq!((out[0].inserted, out[0].queue.pending(), out[0].queue.last_seq), (1, 4, 4));
    // Each message says where it is: the duplicates where they were stored first.
    let placed: Vec<_> = out[0].messages.iter().map(|m| (m.index, m.seq, m.new)).collect();
    assert_eq!(placed, [(0, 2, false), (1, 3, false), (2, 4, true)]);

    let batch = store.segmentation_batch(&conv, 4, 0).unwrap();
    let seqs: Vec<_> = batch.pending.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    assert_eq!(batch.pending[0].metadata, json!({"source": "test"}));
    assert_eq!(batch.pending[0].speaker.as_deref(), Some("Caroline"));
    assert_eq!(batch.pending[3].key, "k4");
    assert!(store.push_messages(&[]).unwrap().is_empty());
}

pub fn push_reports_each_conversation(store: &dyn Store) {
    let (a, b) = (key("t", "a"), key("t", "b"));
    let msgs = vec![message(&a, 1, "x"), message(&b, 1, "y"), message(&a, 2, "z")];
    let out = store.push_messages(&msgs).unwrap();
    let summary: Vec<_> =
        out.iter().map(|o| (o.conversation.conversation.as_str(), o.queue.pending())).collect();
    assert_eq!(summary, [("a", 2), ("b", 1)]);
    let indices: Vec<Vec<(usize, u64)>> =
        out.iter().map(|o| o.messages.iter().map(|m| (m.index, m.seq)).collect()).collect();
    assert_eq!(indices, [vec![(0, 1), (2, 2)], vec![(1, 1)]]);
    assert_eq!(store.queue(&a).unwrap().unwrap().pending(), 2);
    assert_eq!(store.queue(&key("t", "missing")).unwrap(), None);
    let pending = store.pending_queues(Some("t")).unwrap();
    assert_eq!(pending.len(), 2);
    assert!(store.pending_queues(Some("other")).unwrap().is_empty());
}

pub fn conversation_time_only_moves_forward(store: &dyn Store) {
    let (conv, other) = (key("t", "c"), key("t", "other"));
    store.push_messages(&(1..=3).map(|i| message(&conv, i, "hello")).collect::<Vec<_>>()).unwrap();
    // A new message dated before the last one: stored at the last one's time, in arrival order.
    let mut late = message(&conv, 9, "late");
    late.timestamp = Timestamp(T0 + 60_000);
    late.metadata = json!({"source": "test"});
    let out = store.push_messages(&[late]).unwrap();
    assert_eq!(out[0].queue.newest, Some(Timestamp(T0 + 180_000)));
    let batch = store.segmentation_batch(&conv, 4, 0).unwrap();
    let times: Vec<i64> = batch.pending.iter().map(|m| m.timestamp.millis() - T0).collect();
    assert_eq!(times, [60_000, 120_000, 180_000, 180_000], "never backwards");
    assert_eq!(batch.pending[3].metadata["given_timestamp"], "2026-01-01T00:01:00Z");
    assert_eq!(batch.pending[3].metadata["source"], "test", "the rest of the metadata is kept");
    // Sending stored messages again changes nothing.
    assert_eq!(store.push_messages(&[message(&conv, 2, "hello")]).unwrap()[0].inserted, 0);
    // Each conversation has its own time.
    let early = store.push_messages(&[message(&other, 1, "early")]).unwrap();
    assert_eq!(early[0].queue.newest, Some(Timestamp(T0 + 60_000)));
}

pub fn the_open_tail_is_every_message_not_yet_in_an_episode(store: &dyn Store) {
    let (a, b, other) = (key("t", "a"), key("t", "b"), key("u", "a"));
    push_n(store, &a, 5);
    push_n(store, &b, 2);
    push_n(store, &other, 3);
    let tail = |scope: &Scope, limit| -> Vec<(String, u64)> {
        let found = store.pending_messages(scope, limit).unwrap();
        found.into_iter().map(|(c, m)| (c.conversation, m.seq)).collect()
    };
    let all = tail(&Scope::tenant("t"), 100);
    assert_eq!(all.len(), 7, "{all:?}");
    assert_eq!(all[0], ("a".to_owned(), 5), "newest first: {all:?}");
    assert!(all.iter().all(|(c, _)| c == "a" || c == "b"), "another tenant's: {all:?}");
    assert_eq!(tail(&Scope::tenant("t"), 3).len(), 3);
    let only_b = Scope::tenant("t").with_conversation(Some("b".into()));
    assert_eq!(tail(&only_b, 100), [("b".to_owned(), 2), ("b".to_owned(), 1)]);
    let since = Scope { since: Some(Timestamp(T0 + 4 * 60_000)), ..Scope::tenant("t") };
    assert_eq!(tail(&since, 100), [("a".to_owned(), 5), ("a".to_owned(), 4)]);
    // Closed into an episode, a message leaves the tail.
    segment(store, &a, 3, vec![episode(&a, 1, 3, "Gardening", "")]);
    let left: Vec<u64> = tail(&Scope::tenant("t").with_conversation(Some("a".into())), 100)
        .into_iter()
        .map(|t| t.1)
        .collect();
    assert_eq!(left, [5, 4]);
    let (_, m) = store.pending_messages(&only_b, 1).unwrap().remove(0);
    assert_eq!(
        (m.content.as_str(), m.speaker.as_deref()),
        ("message number 2 about gardening", None)
    );
}

pub fn batches_carry_context(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 10);
    segment(store, &conv, 10, vec![episode(&conv, 1, 6, "a", "s")]);
    let batch = store.segmentation_batch(&conv, 9, 2).unwrap();
    let ctx: Vec<_> = batch.context.iter().map(|m| m.seq).collect();
    let pending: Vec<_> = batch.pending.iter().map(|m| m.seq).collect();
    assert_eq!((ctx, pending), (vec![5, 6], vec![7, 8, 9]));
    assert_eq!((batch.watermark, batch.user.as_deref()), (6, Some("u1")));
    let all = store.segmentation_batch(&conv, 10, 100).unwrap();
    assert_eq!(all.context.len(), 6);
}

pub fn tenants_never_see_each_other(store: &dyn Store) {
    let (mine, theirs) = (key("mine", "c"), key("theirs", "c"));
    store
        .push_messages(&[message(&mine, 1, "weekly budget review"), message(&mine, 2, "ok")])
        .unwrap();
    store
        .push_messages(&[
            message(&theirs, 1, "secret merger plans merger merger"),
            message(&theirs, 2, "ok"),
        ])
        .unwrap();
    segment(store, &mine, 2, vec![episode(&mine, 1, 2, "Budget review", "A budget review.")]);
    segment(store, &theirs, 2, vec![episode(&theirs, 1, 2, "Merger plans", "Merger merger.")]);
    let scope = Scope::tenant("mine");
    assert_eq!(store.episodes(&scope, None, None).unwrap().len(), 1);
    let their_id = episode_id(&theirs, 1, 2);
    assert_eq!(store.episode(&scope, &their_id).unwrap(), None);
    assert_eq!(store.stats(Some("mine")).unwrap().episodes, 1);
    assert_eq!(store.stats(None).unwrap().episodes, 2);
    assert_eq!(store.tenants().unwrap(), ["mine", "theirs"], "in name order, once each");
}

pub fn episodes_list_and_detail(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 6);
    segment(
        store,
        &conv,
        6,
        vec![episode(&conv, 1, 3, "first", "s1"), episode(&conv, 4, 6, "second", "s2")],
    );
    let scope = Scope::tenant("t");
    let list = store.episodes(&scope, None, None).unwrap();
    assert_eq!(list.iter().map(|e| e.title.as_str()).collect::<Vec<_>>(), ["second", "first"]);
    assert_eq!(list[0], episode(&conv, 4, 6, "second", "s2"));
    assert_eq!(store.episodes(&scope, None, Some(1)).unwrap().len(), 1);
    let detail = store.episode(&scope, &list[0].id).unwrap().unwrap();
    assert_eq!(detail.messages.iter().map(|m| m.seq).collect::<Vec<_>>(), [4, 5, 6]);
    assert_eq!(detail.context.iter().map(|m| m.seq).collect::<Vec<_>>(), [3]);
    // Several at once come in the order asked, without the ones that are not there.
    let missing = EpisodeId("no-such-episode".into());
    let ids = [list[0].id.clone(), missing, list[1].id.clone()];
    let details = store.episode_details(&scope, &ids).unwrap();
    assert_eq!(details.iter().map(|d| d.episode.first_seq).collect::<Vec<_>>(), [4, 1]);
    assert_eq!(details[1].messages.iter().map(|m| m.seq).collect::<Vec<_>>(), [1, 2, 3]);
    let user_scope = Scope { user: Some("someone-else".into()), ..Scope::tenant("t") };
    assert!(store.episodes(&user_scope, None, None).unwrap().is_empty());
}

pub fn episodes_are_paged_by_cursor(store: &dyn Store) {
    // Episodes of "a" and "b" start at the same minutes: ties are broken by id.
    let (a, b) = (key("t", "a"), key("t", "b"));
    for conv in [&a, &b] {
        push_n(store, conv, 6);
        let episodes = vec![episode(conv, 1, 2, "", "s"), episode(conv, 3, 6, "", "s")];
        segment(store, conv, 6, episodes);
    }
    let scope = Scope::tenant("t");
    let all = store.episodes(&scope, None, None).unwrap();
    let keys: Vec<(Timestamp, EpisodeId)> = all.iter().map(|e| (e.start, e.id.clone())).collect();
    assert_eq!(keys.len(), 4);
    assert!(keys.windows(2).all(|w| w[0] > w[1]), "newest first, then by id: {keys:?}");
    let page = |after: Option<&crate::EpisodeCursor>| store.episodes(&scope, after, Some(2));
    let first = page(None).unwrap();
    assert_eq!(first, all[..2]);
    let cursor = crate::EpisodeCursor::after(&first[1]);
    assert_eq!(page(Some(&cursor)).unwrap(), all[2..]);
    // Removing what a page already showed does not shift the next page.
    store.delete_episode(&scope, &first[0].id).unwrap();
    assert_eq!(page(Some(&cursor)).unwrap(), all[2..]);
    let last = crate::EpisodeCursor::after(&all[3]);
    assert!(page(Some(&last)).unwrap().is_empty());
}

pub fn stats_count_everything(store: &dyn Store) {
    push_n(store, &key("t", "a"), 7);
    push_n(store, &key("t", "b"), 3);
    let conv = key("t", "a");
    segment(store, &conv, 7, vec![episode(&conv, 1, 5, "a", "s")]);
    let s = store.stats(None).unwrap();
    assert_eq!(
        (s.conversations, s.messages, s.pending_messages, s.episodes, s.queued_jobs),
        (2, 10, 5, 1, 0)
    );
}

pub fn message_vectors_are_kept_per_model(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 5);
    let a: Vec<(u64, Vec<f32>)> = vec![(1, vec![0.5, -1.25]), (3, vec![1.0, 0.0])];
    store.put_message_vectors(&conv, "model-a", &a).unwrap();
    store.put_message_vectors(&conv, "model-b", &[(1, vec![9.0, 9.0, 9.0])]).unwrap();
    assert_eq!(store.message_vectors(&conv, 1, 5, "model-a").unwrap(), a);
    assert_eq!(store.message_vectors(&conv, 2, 5, "model-a").unwrap(), vec![(3, vec![1.0, 0.0])]);
    assert_eq!(
        store.message_vectors(&conv, 1, 5, "model-b").unwrap(),
        vec![(1, vec![9.0, 9.0, 9.0])]
    );
    assert!(store.message_vectors(&conv, 1, 5, "model-c").unwrap().is_empty());
    // Replacing is allowed: vectors are derived state.
    store.put_message_vectors(&conv, "model-a", &[(1, vec![2.0, 2.0])]).unwrap();
    assert_eq!(store.message_vectors(&conv, 1, 1, "model-a").unwrap(), vec![(1, vec![2.0, 2.0])]);
    assert!(matches!(
        store.put_message_vectors(&key("t", "nope"), "model-a", &a),
        Err(StoreError::NotFound(_))
    ));
}

pub fn index_rows_cover_closed_episodes_only(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 6);
    let vectors: Vec<(u64, Vec<f32>)> = (1..=6).map(|i| (i, vec![i as f32])).collect();
    store.put_message_vectors(&conv, "m", &vectors).unwrap();
    segment(store, &conv, 6, vec![episode(&conv, 1, 2, "a", "s"), episode(&conv, 3, 4, "b", "s")]);
    let rows = index_rows(store, "t", Some("m"));
    let got: Vec<(u64, u64)> = rows.iter().map(|r| (r.seq, r.episode.first_seq)).collect();
    assert_eq!(got, [(1, 1), (2, 1), (3, 3), (4, 3)], "messages 5 and 6 are still pending");
    assert_eq!(rows[2].vector, Some(vec![3.0]));
    // The author is the speaker, else the role.
    assert_eq!((rows[0].author.as_str(), rows[1].author.as_str()), ("Caroline", "assistant"));
    assert_eq!(rows[1].content, "message number 2 about gardening");
    // Another model's vectors are never handed out; the text still is.
    // Only the tenant's own rows.
    let theirs = key("u", "c");
    push_n(store, &theirs, 2);
    segment(store, &theirs, 2, vec![episode(&theirs, 1, 2, "x", "s")]);
    assert_eq!(index_rows(store, "t", Some("m")), rows);
    assert_eq!(index_rows(store, "u", Some("m")).len(), 2);
    assert!(index_rows(store, "nobody", None).is_empty());
    let other = index_rows(store, "t", Some("other"));
    assert_eq!(other.len(), 4);
    assert!(other.iter().all(|r| r.vector.is_none()));
    assert!(index_rows(store, "t", None).iter().all(|r| r.vector.is_none()));
}

pub fn episodes_by_id_respect_scope_and_time(store: &dyn Store) {
    let (mine, theirs) = (key("t", "c"), key("u", "c"));
    push_n(store, &mine, 6);
    push_n(store, &theirs, 2);
    segment(store, &mine, 6, vec![episode(&mine, 1, 3, "a", "s"), episode(&mine, 4, 6, "b", "s")]);
    segment(store, &theirs, 2, vec![episode(&theirs, 1, 2, "x", "s")]);
    let ids = vec![episode_id(&mine, 1, 3), episode_id(&mine, 4, 6), episode_id(&theirs, 1, 2)];
    let mut found = store.episodes_by_id(&Scope::tenant("t"), &ids).unwrap();
    found.sort_by_key(|e| e.first_seq);
    assert_eq!(found.iter().map(|e| e.first_seq).collect::<Vec<_>>(), [1, 4]);
    // Episode 1..=3 spans minutes 1-3, 4..=6 spans minutes 4-6.
    let late = Scope { since: Some(Timestamp(T0 + 4 * 60_000)), ..Scope::tenant("t") };
    let found = store.episodes_by_id(&late, &ids).unwrap();
    assert_eq!(found.iter().map(|e| e.first_seq).collect::<Vec<_>>(), [4]);
    let early = Scope { until: Some(Timestamp(T0 + 3 * 60_000)), ..Scope::tenant("t") };
    assert_eq!(store.episodes(&early, None, None).unwrap().len(), 1);
    assert!(store.episodes_by_id(&Scope::tenant("t"), &[]).unwrap().is_empty());
}

pub fn pending_reviews_are_taken_once(store: &dyn Store) {
    let conv = key("t", "c");
    push_n(store, &conv, 2);
    let review = PendingReview {
        query: "garden".into(),
        memory_ids: vec![episode_id(&conv, 1, 2)],
        at: Timestamp(T0),
    };
    store.record_pending_review(&conv, &review).unwrap();
    store
        .record_pending_review(&conv, &PendingReview { query: "soil".into(), ..review.clone() })
        .unwrap();
    let taken = store.take_pending_reviews(&conv).unwrap();
    assert_eq!(taken.iter().map(|r| r.query.as_str()).collect::<Vec<_>>(), ["garden", "soil"]);
    assert_eq!(taken[0], review);
    assert!(store.take_pending_reviews(&conv).unwrap().is_empty());
    assert!(store.take_pending_reviews(&key("t", "never")).unwrap().is_empty());
    assert!(matches!(
        store.record_pending_review(&key("t", "never"), &review),
        Err(StoreError::NotFound(_))
    ));
}

pub fn api_keys_are_found_by_hash_until_revoked(store: &dyn Store) {
    assert!(store.api_keys(None).unwrap().is_empty());
    let a = store.create_api_key("acme", "ci", "hash-a", Timestamp(T0)).unwrap();
    let b = store.create_api_key("other", "laptop", "hash-b", Timestamp(T0 + 1)).unwrap();
    assert_ne!(a.id, b.id);
    assert_eq!((a.tenant.as_str(), a.name.as_str(), a.revoked), ("acme", "ci", None));
    assert_eq!(store.tenant_of_api_key("hash-a").unwrap().as_deref(), Some("acme"));
    assert_eq!(store.tenant_of_api_key("hash-b").unwrap().as_deref(), Some("other"));
    assert_eq!(store.tenant_of_api_key("nothing").unwrap(), None);
    assert_eq!(store.api_keys(Some("acme")).unwrap(), std::slice::from_ref(&a));
    assert_eq!(store.api_keys(None).unwrap().len(), 2);
    // A hash is one key's.
    assert!(store.create_api_key("x", "dup", "hash-a", Timestamp(T0)).is_err());

    assert!(store.revoke_api_key(a.id, Timestamp(T0 + 5)).unwrap());
    assert!(!store.revoke_api_key(a.id, Timestamp(T0 + 6)).unwrap(), "revoked once");
    assert!(!store.revoke_api_key(9_999, Timestamp(T0)).unwrap());
    assert_eq!(store.tenant_of_api_key("hash-a").unwrap(), None);
    assert_eq!(store.api_keys(Some("acme")).unwrap()[0].revoked, Some(Timestamp(T0 + 5)));
    assert_eq!(store.tenant_of_api_key("hash-b").unwrap().as_deref(), Some("other"));
}
