//! Decisions every backend makes the same way, as pure functions over the rows it read: who
//! may fence a conversation, what a segmentation commit leaves as the watermark, and which
//! changes of a consolidation stand. A backend reads the rows, calls the rule, and writes what
//! it returns, in one transaction.

use std::collections::HashSet;

use epimem_core::{
    ConversationKey, EpisodeId, JobId, Timestamp, Trigger,
    facts::{Fact, FactChange, FactId},
};

use crate::{ConsolidationCommit, SegmentationCommit, StoreError};

/// A conversation's queue and fence, as its row holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FenceRow {
    pub last_seq: u64,
    pub watermark: u64,
    pub fence_job: Option<JobId>,
    /// How far the fenced batch reaches.
    pub fence_upto: Option<u64>,
    /// When the fence was taken.
    pub fence_since: Option<Timestamp>,
}

/// What opening a segmentation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// Nothing: the batch is closed already, or another job's live fence holds the
    /// conversation.
    Skip,
    /// Fence the conversation for a new job. `stale` is the job whose fence outlived its time:
    /// it is presumed dead, marked failed, and may no longer commit.
    Open { stale: Option<JobId> },
}

/// Whether a trigger up to `trigger.upto_seq` opens a segmentation of `key` at `now`: only past
/// the watermark, and unless another fence younger than `fence_ttl_ms` holds it.
pub fn opening(
    key: &ConversationKey,
    row: &FenceRow,
    trigger: Trigger,
    now: Timestamp,
    fence_ttl_ms: i64,
) -> Result<Opening, StoreError> {
    if trigger.upto_seq > row.last_seq {
        return Err(StoreError::Invalid(format!(
            "cannot segment {key} up to message {} of {}",
            trigger.upto_seq, row.last_seq
        )));
    }
    if trigger.upto_seq <= row.watermark {
        return Ok(Opening::Skip);
    }
    match row.fence_job {
        None => Ok(Opening::Open { stale: None }),
        Some(held) => {
            let since = row.fence_since.unwrap_or(Timestamp(i64::MIN));
            if now.since(since) < fence_ttl_ms {
                Ok(Opening::Skip)
            } else {
                Ok(Opening::Open { stale: Some(held) })
            }
        }
    }
}

/// The watermark `commit` leaves, if it may commit: its job holds the fence, and its episodes
/// tile the queue from the watermark on without passing the fenced batch.
pub fn committed_watermark(row: &FenceRow, commit: &SegmentationCommit) -> Result<u64, StoreError> {
    let key = &commit.conversation;
    if row.fence_job != Some(commit.job) {
        return Err(StoreError::Conflict(format!(
            "job {} no longer holds the segmentation fence of {key}",
            commit.job.0
        )));
    }
    let mut next = row.watermark + 1;
    for e in &commit.episodes {
        if e.conversation != *key || e.first_seq != next || e.last_seq < e.first_seq {
            return Err(StoreError::Invalid(format!(
                "episode {} ({}..={}) does not continue {key} at message {next}",
                e.id, e.first_seq, e.last_seq
            )));
        }
        next = e.last_seq + 1;
    }
    let watermark = next - 1;
    if row.fence_upto.is_some_and(|upto| watermark > upto) {
        return Err(StoreError::Invalid(format!(
            "episodes reach past the fenced batch of {key} (message {watermark})"
        )));
    }
    Ok(watermark)
}

/// What recording a failed job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abandonment {
    /// Queue it again, claimable from `at`; it keeps its fence, since it will run again.
    Retry { at: Timestamp },
    /// Park it (kept as failed, never run again). `release_fence`: it still holds its
    /// conversation's fence, which goes, so a later job can segment those messages.
    Park { release_fence: bool },
}

/// What recording that `job` failed does: retried at `retry_at` if given, else parked; a
/// parked job gives up its conversation's fence only if it still holds it (`fence_job`).
pub fn abandonment(
    job: JobId,
    fence_job: Option<JobId>,
    retry_at: Option<Timestamp>,
) -> Abandonment {
    match retry_at {
        Some(at) => Abandonment::Retry { at },
        None => Abandonment::Park { release_fence: fence_job == Some(job) },
    }
}

/// What a consolidation commit must read before [`consolidation_writes`] decides: whether each
/// fact it changes is the conversation's, and whether each episode it cites is still there.
pub fn consolidation_reads(commit: &ConsolidationCommit) -> (Vec<&FactId>, Vec<&EpisodeId>) {
    let mut facts = Vec::new();
    let mut sources = Vec::new();
    for change in &commit.changes {
        match change {
            FactChange::Insert(fact) => sources.extend(&fact.sources),
            FactChange::Reinforce { id, sources: cited } => {
                facts.push(id);
                sources.extend(cited);
            }
            FactChange::Invalidate { id, .. } => facts.push(id),
        }
    }
    (facts, sources)
}

/// The rows [`consolidation_reads`] named, as found.
#[derive(Debug, Default)]
pub struct ConsolidationRows<'a> {
    /// The facts among those changed that belong to the commit's conversation.
    pub ours: HashSet<&'a FactId>,
    /// The cited episodes still there.
    pub kept: HashSet<&'a EpisodeId>,
}

/// One write a consolidation commit makes.
#[derive(Debug, Clone, PartialEq)]
pub enum FactWrite<'a> {
    /// Store the fact (a fact already there is left as it is), with its vector of
    /// `fingerprint` when the commit has one.
    Insert { fact: &'a Fact, vector: Option<&'a [f32]>, fingerprint: Option<&'a str> },
    /// Count one more confirmation of a fact that holds, and add its sources.
    Reinforce { fact: &'a FactId, sources: &'a [EpisodeId] },
    /// Mark a fact no longer true from `at` (never delete it).
    Invalidate { fact: &'a FactId, at: Timestamp },
}

/// The writes of `commit` that stand, in order. A change told from an episode forgotten since
/// the job read it is left out (a fact would bring its words back); a change to another
/// conversation's fact refuses the whole commit.
pub fn consolidation_writes<'a>(
    commit: &'a ConsolidationCommit,
    rows: &ConsolidationRows<'_>,
) -> Result<Vec<FactWrite<'a>>, StoreError> {
    let conversation = &commit.conversation;
    let kept = |sources: &[EpisodeId]| sources.iter().all(|s| rows.kept.contains(s));
    let ours = |fact: &FactId| {
        if rows.ours.contains(fact) {
            Ok(())
        } else {
            Err(StoreError::Invalid(format!("fact {fact} is not of {conversation}")))
        }
    };
    let mut writes = Vec::with_capacity(commit.changes.len());
    for change in &commit.changes {
        match change {
            FactChange::Insert(fact) => {
                if fact.conversation != *conversation {
                    return Err(StoreError::Invalid(format!(
                        "fact {} is not of {conversation}",
                        fact.id
                    )));
                }
                if !kept(&fact.sources) {
                    continue;
                }
                let vector = commit.vectors.iter().find(|(f, _)| *f == fact.id);
                writes.push(FactWrite::Insert {
                    fact,
                    vector: vector.map(|(_, v)| v.as_slice()),
                    fingerprint: vector.and(commit.fingerprint.as_deref()),
                });
            }
            FactChange::Reinforce { id, sources } => {
                if !kept(sources) {
                    continue;
                }
                ours(id)?;
                writes.push(FactWrite::Reinforce { fact: id, sources });
            }
            FactChange::Invalidate { id, at } => {
                ours(id)?;
                writes.push(FactWrite::Invalidate { fact: id, at: *at });
            }
        }
    }
    Ok(writes)
}

#[cfg(test)]
mod tests;
