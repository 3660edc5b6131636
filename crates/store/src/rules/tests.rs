use epimem_core::{Episode, TriggerKind};
use proptest::prelude::*;

use super::*;

fn key() -> ConversationKey {
    ConversationKey::new("t", "c")
}

fn episode(first: u64, last: u64) -> Episode {
    crate::conformance::episode(&key(), first, last, "", "")
}

fn trigger(upto_seq: u64) -> Trigger {
    Trigger { kind: TriggerKind::Flush, upto_seq }
}

prop_compose! {
    fn rows()(watermark in 0u64..50, pending in 0u64..50, fenced in any::<bool>(),
              job in 1i64..5, upto in 0u64..50, since in 0i64..10_000) -> FenceRow {
        FenceRow {
            last_seq: watermark + pending,
            watermark,
            fence_job: fenced.then_some(JobId(job)),
            fence_upto: fenced.then_some(watermark + upto.min(pending)),
            fence_since: fenced.then_some(Timestamp(since)),
        }
    }
}

proptest! {
    #[test]
    fn a_fence_is_taken_only_past_the_watermark_and_only_from_a_stale_holder(
        row in rows(), upto in 0u64..120, now in 0i64..20_000, ttl in 1i64..10_000,
    ) {
        match opening(&key(), &row, trigger(upto), Timestamp(now), ttl) {
            Err(_) => prop_assert!(upto > row.last_seq),
            Ok(Opening::Skip) => prop_assert!(upto <= row.watermark || row.fence_job.is_some()),
            Ok(Opening::Open { stale }) => {
                prop_assert!(upto > row.watermark && upto <= row.last_seq);
                // Taking a fence over always retires its job, and never a live one.
                prop_assert_eq!(stale, row.fence_job);
                if let Some(since) = row.fence_since {
                    prop_assert!(now - since.0 >= ttl);
                }
                // What opens now opens later too.
                let later = opening(&key(), &row, trigger(upto), Timestamp(now + ttl), ttl);
                prop_assert_eq!(later.unwrap(), Opening::Open { stale });
            }
        }
    }

    #[test]
    fn a_commit_that_tiles_its_fenced_batch_moves_the_watermark_to_its_end(
        watermark in 0u64..40, lengths in prop::collection::vec(1u64..6, 0..8), extra in 0u64..5,
    ) {
        let mut first = watermark + 1;
        let episodes: Vec<Episode> = lengths.iter().map(|n| {
            let e = episode(first, first + n - 1);
            first += n;
            e
        }).collect();
        let end = first - 1;
        let row = FenceRow {
            last_seq: end + extra,
            watermark,
            fence_job: Some(JobId(7)),
            fence_upto: Some(end + extra),
            fence_since: Some(Timestamp(0)),
        };
        let commit = SegmentationCommit {
            job: JobId(7),
            conversation: key(),
            episodes: episodes.clone(),
            window_doubled: false,
            consolidate: None,
        };
        prop_assert_eq!(committed_watermark(&row, &commit).unwrap(), end);
        // Another job's commit changes nothing.
        let theirs = SegmentationCommit { job: JobId(8), ..commit.clone() };
        prop_assert!(matches!(committed_watermark(&row, &theirs), Err(StoreError::Conflict(_))));
        // A gap, an overlap or a batch past the fence is refused.
        if let Some(last) = episodes.last() {
            let mut gapped = commit.clone();
            gapped.episodes.push(episode(last.last_seq + 2, last.last_seq + 2));
            prop_assert!(committed_watermark(&row, &gapped).is_err());
            let mut overlapping = commit.clone();
            overlapping.episodes.push(episode(last.last_seq, last.last_seq + 1));
            prop_assert!(committed_watermark(&row, &overlapping).is_err());
            let short = FenceRow { fence_upto: Some(end - 1), ..row };
            prop_assert!(committed_watermark(&short, &commit).is_err());
        }
    }

    #[test]
    fn no_write_of_a_consolidation_cites_a_forgotten_episode_or_touches_anothers_fact(
        changes in prop::collection::vec((0u8..3, 0usize..4, prop::collection::vec(0usize..4, 0..3)), 0..8),
        kept in prop::collection::vec(any::<bool>(), 4),
        ours in prop::collection::vec(any::<bool>(), 4),
    ) {
        let sources: Vec<EpisodeId> = (0..4).map(|i| EpisodeId(format!("ep_{i}"))).collect();
        let facts: Vec<FactId> = (0..4).map(|i| FactId(format!("fact-{i}"))).collect();
        let cite = |picked: &[usize]| picked.iter().map(|&i| sources[i].clone()).collect::<Vec<_>>();
        let changes: Vec<FactChange> = changes.iter().map(|(kind, fact, cited)| match kind {
            0 => FactChange::Insert(Fact {
                id: facts[*fact].clone(),
                conversation: key(),
                text: "a fact".into(),
                valid_at: Timestamp(0),
                invalid_at: None,
                sources: cite(cited),
                reinforced: 0,
            }),
            1 => FactChange::Reinforce { id: facts[*fact].clone(), sources: cite(cited) },
            _ => FactChange::Invalidate { id: facts[*fact].clone(), at: Timestamp(1) },
        }).collect();
        let commit = ConsolidationCommit {
            job: Some(JobId(1)),
            conversation: key(),
            changes,
            vectors: Vec::new(),
            fingerprint: None,
            through_seq: 1,
            finished: true,
        };
        let rows = ConsolidationRows {
            ours: facts.iter().zip(&ours).filter(|(_, o)| **o).map(|(f, _)| f).collect(),
            kept: sources.iter().zip(&kept).filter(|(_, k)| **k).map(|(s, _)| s).collect(),
        };
        let (named_facts, named_sources) = consolidation_reads(&commit);
        match consolidation_writes(&commit, &rows) {
            Ok(writes) => {
                prop_assert!(writes.len() <= commit.changes.len());
                for write in &writes {
                    match write {
                        FactWrite::Insert { fact, .. } => {
                            prop_assert!(fact.sources.iter().all(|s| rows.kept.contains(s)));
                        }
                        FactWrite::Reinforce { fact, sources } => {
                            prop_assert!(rows.ours.contains(fact));
                            prop_assert!(sources.iter().all(|s| rows.kept.contains(s)));
                        }
                        FactWrite::Invalidate { fact, .. } => prop_assert!(rows.ours.contains(fact)),
                    }
                }
                // With every source kept and every fact ours, every change stands.
                if named_sources.iter().all(|s| rows.kept.contains(s))
                    && named_facts.iter().all(|f| rows.ours.contains(f)) {
                    prop_assert_eq!(writes.len(), commit.changes.len());
                }
            }
            // Refused only for a change to a fact that is not the conversation's.
            Err(e) => {
                prop_assert!(matches!(e, StoreError::Invalid(_)));
                prop_assert!(named_facts.iter().any(|f| !rows.ours.contains(f)));
            }
        }
    }
}

#[test]
fn a_parked_job_gives_up_only_its_own_fence_and_a_retried_one_keeps_it() {
    let (job, other) = (JobId(1), JobId(2));
    let at = Timestamp(5);
    assert_eq!(abandonment(job, Some(job), Some(at)), Abandonment::Retry { at });
    assert_eq!(abandonment(job, Some(job), None), Abandonment::Park { release_fence: true });
    assert_eq!(abandonment(job, Some(other), None), Abandonment::Park { release_fence: false });
    assert_eq!(abandonment(job, None, None), Abandonment::Park { release_fence: false });
}
