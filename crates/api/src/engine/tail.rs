//! The open tail in recall: messages stored and not yet closed into an episode, found as soon
//! as they are stored.
//!
//! Each process keeps the tail of each tenant it recalls in: read from the store at most
//! every [`TAIL_REFRESH`] (what other processes stored or closed is seen within it), added to
//! at once by this process's own writes, trimmed by its own closes and forgets. Reading the
//! whole tail from the store on every recall took most of a recall's time under a stream of
//! writes. It is read before the search index is caught up, so a message closed meanwhile is
//! in one or the other (or both, and then told once); and the lines a block quotes are read
//! again from the store, so what was forgotten or closed since is never quoted from it.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, OnceLock, PoisonError},
    time::{Duration, Instant},
};

use epimem_core::{ConversationKey, Episode, EpisodeId, Message, NewMessage, Scope};
use epimem_search::TailLine;
use epimem_store::PushOutcome;

use crate::engine::{Engine, EngineError};

/// The most messages of a conversation's open tail read at once: more than a segmentation
/// leaves open.
pub(crate) const TAIL_LINES: usize = 1_000;

/// How long a tenant's tail kept by a process stands for what the store holds.
pub const TAIL_REFRESH: Duration = Duration::from_secs(1);

/// A message of the open tail: its conversation, and what recall makes of it once.
#[derive(Debug)]
pub(crate) struct TailEntry {
    pub(crate) conversation: ConversationKey,
    pub(crate) message: Message,
    /// Of its author and text: what an index keeps its words by.
    fingerprint: u64,
    /// Its vector, embedded the first time a recall searches it.
    vector: OnceLock<Option<Arc<[f32]>>>,
}

impl TailEntry {
    fn new(conversation: ConversationKey, message: Message) -> Self {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        for part in [message.author(), message.content.as_str()] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        let fingerprint = hasher.digest();
        Self { conversation, message, fingerprint, vector: OnceLock::new() }
    }

    fn same(&self, other: &TailEntry) -> bool {
        self.conversation == other.conversation
            && self.message.seq == other.message.seq
            && self.fingerprint == other.fingerprint
    }
}

pub(crate) type TailMessage = Arc<TailEntry>;

/// The open tail a recall searches, newest first.
#[derive(Debug, Default)]
pub(crate) struct OpenTail {
    pub(crate) messages: Vec<TailMessage>,
}

impl OpenTail {
    /// The lines as a search index takes them.
    pub(crate) fn lines(&self) -> Vec<TailLine<'_>> {
        self.messages
            .iter()
            .map(|entry| {
                let m = &entry.message;
                TailLine {
                    conversation: &entry.conversation,
                    seq: m.seq,
                    role: m.role,
                    author: m.author(),
                    content: &m.content,
                    at: m.timestamp,
                    fingerprint: entry.fingerprint,
                    vector: entry.vector.get().and_then(|v| v.as_deref()),
                }
            })
            .collect()
    }
}

/// The tail of `conversation` as an episode to quote its lines under: `messages`, its
/// messages not yet in an episode as the store holds them now.
pub(crate) fn tail_episode(
    conversation: ConversationKey,
    mut messages: Vec<Message>,
) -> Option<(Episode, Vec<Message>)> {
    messages.sort_by_key(|m| m.seq);
    let (first, last) = (messages.first()?, messages.last()?);
    let episode = Episode {
        id: EpisodeId::open_tail(&conversation),
        user: None,
        agent: None,
        first_seq: first.seq,
        last_seq: last.seq,
        context_first_seq: None,
        start: first.timestamp,
        end: last.timestamp,
        title: String::new(),
        summary: String::new(),
        keywords: Vec::new(),
        surprise: 0.0,
        boundary_reason: epimem_core::BoundaryReason::Flush,
        fsrs: Default::default(),
        told_by: Default::default(),
        told_note: None,
        conversation,
    };
    Some((episode, messages))
}

/// The tails this process keeps, by tenant: newest first.
#[derive(Debug, Default)]
pub(crate) struct TailCache(Mutex<Kept>);

#[derive(Debug, Default)]
struct Kept {
    /// Messages a tenant's kept tail holds at most (its newest): twice what a recall
    /// searches, so that a conversation's or a period's tail is found in it too.
    most: usize,
    tenants: HashMap<String, KeptTail>,
    /// Numbers this process's writes in order, so that a tail read from the store keeps the
    /// writes made while it was read.
    writes: u64,
}

#[derive(Debug)]
struct KeptTail {
    read_at: Instant,
    /// Each message, and the write that added it here (0: read from the store).
    messages: Vec<(u64, TailMessage)>,
}

impl TailCache {
    /// A cache for recalls that search `lines` of the tail.
    pub(crate) fn for_lines(lines: usize) -> Self {
        Self(Mutex::new(Kept { most: 2 * lines, ..Kept::default() }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The tenant's tail if kept and read less than `age` ago.
    fn fresh(&self, tenant: &str, age: Duration) -> Option<Vec<TailMessage>> {
        let kept = self.lock();
        let tail = kept.tenants.get(tenant)?;
        (tail.read_at.elapsed() < age)
            .then(|| tail.messages.iter().map(|(_, m)| m.clone()).collect())
    }

    /// The tenants kept whose tail was read `age` ago or more.
    fn older_than(&self, age: Duration) -> Vec<String> {
        let kept = self.lock();
        kept.tenants
            .iter()
            .filter(|(_, t)| t.read_at.elapsed() >= age)
            .map(|(t, _)| t.clone())
            .collect()
    }

    /// Where this process's writes stand: what a read begun now may miss comes after it.
    fn writes(&self) -> u64 {
        self.lock().writes
    }

    /// Keeps `read`, the tenant's tail read from the store from `read_at` on, with what this
    /// process stored since `writes` (which the read may not hold).
    fn keep(&self, tenant: &str, read_at: Instant, writes: u64, read: &[TailMessage]) {
        let mut kept = self.lock();
        let since: Vec<(u64, TailMessage)> = kept
            .tenants
            .get(tenant)
            .map(|t| t.messages.iter().filter(|(w, _)| *w > writes).cloned().collect())
            .unwrap_or_default();
        // What was kept and read again keeps what recall made of it (its vector).
        let before: HashMap<(&str, u64), &TailMessage> = kept
            .tenants
            .get(tenant)
            .map(|t| {
                t.messages
                    .iter()
                    .map(|(_, e)| ((e.conversation.conversation.as_str(), e.message.seq), e))
                    .collect()
            })
            .unwrap_or_default();
        let read: Vec<TailMessage> = read
            .iter()
            .map(|e| {
                let key = (e.conversation.conversation.as_str(), e.message.seq);
                match before.get(&key) {
                    Some(old) if old.same(e) => Arc::clone(old),
                    _ => Arc::clone(e),
                }
            })
            .collect();
        let held: std::collections::HashSet<(&str, u64)> =
            read.iter().map(|e| (e.conversation.conversation.as_str(), e.message.seq)).collect();
        let mut messages: Vec<(u64, TailMessage)> = since
            .into_iter()
            .filter(|(_, e)| !held.contains(&(e.conversation.conversation.as_str(), e.message.seq)))
            .collect();
        messages.extend(read.iter().map(|e| (0, e.clone())));
        messages.truncate(kept.most);
        kept.tenants.insert(tenant.to_owned(), KeptTail { read_at, messages });
    }

    /// Messages this process just stored join their tenants' kept tails.
    pub(crate) fn stored(&self, batch: &[NewMessage], outcomes: &[PushOutcome]) {
        let mut kept = self.lock();
        kept.writes += 1;
        let (write, most) = (kept.writes, kept.most);
        for outcome in outcomes {
            let Some(tail) = kept.tenants.get_mut(&outcome.conversation.tenant) else { continue };
            // Newest first, as the tail is kept.
            let new: Vec<(u64, TailMessage)> = outcome
                .messages
                .iter()
                .rev()
                .filter(|pushed| pushed.new)
                .map(|pushed| {
                    let m = &batch[pushed.index];
                    let message = Message {
                        seq: pushed.seq,
                        key: m.key.clone(),
                        role: m.role,
                        speaker: m.speaker.clone(),
                        content: m.content.clone(),
                        // As given: a block quotes the tail as the store holds it (`tail_now`).
                        timestamp: m.timestamp,
                        metadata: m.metadata.clone(),
                        tokens: m.tokens,
                    };
                    (write, Arc::new(TailEntry::new(outcome.conversation.clone(), message)))
                })
                .collect();
            tail.messages.splice(0..0, new);
            tail.messages.truncate(most);
        }
    }

    /// `conversation`'s messages up to `through` closed into episodes here.
    pub(crate) fn closed(&self, conversation: &ConversationKey, through: u64) {
        if let Some(tail) = self.lock().tenants.get_mut(&conversation.tenant) {
            tail.messages
                .retain(|(_, e)| e.conversation != *conversation || e.message.seq > through);
        }
    }

    /// A conversation forgotten here, or a whole tenant (`None`).
    pub(crate) fn forgotten(&self, tenant: &str, conversation: Option<&ConversationKey>) {
        let mut kept = self.lock();
        match conversation {
            None => {
                kept.tenants.remove(tenant);
            }
            Some(conversation) => {
                if let Some(tail) = kept.tenants.get_mut(tenant) {
                    tail.messages.retain(|(_, e)| e.conversation != *conversation);
                }
            }
        }
    }
}

impl Engine {
    /// The open tail of `scope`, newest first, each line embedded (with the engine's embedder)
    /// the first time it is searched.
    pub(crate) fn open_tail(&self, scope: &Scope) -> Result<OpenTail, EngineError> {
        let lines = self.config.ranking.open_tail_lines;
        if lines == 0 {
            return Ok(OpenTail::default());
        }
        let messages = self.tail_messages(scope)?;
        if let Some(embedder) = &self.embedder {
            let new: Vec<&TailMessage> =
                messages.iter().filter(|e| e.vector.get().is_none()).collect();
            if !new.is_empty() {
                let texts: Vec<&str> = new.iter().map(|e| e.message.content.as_str()).collect();
                for (entry, vector) in new.iter().zip(embedder.embed(&texts)?) {
                    let _ = entry.vector.set(Some(vector.into()));
                }
            }
        }
        Ok(OpenTail { messages })
    }

    /// The newest messages of `scope` not yet in an episode: for the whole tenant or a period
    /// of it, from its kept tail when fresh, else read from the store and kept; else read.
    fn tail_messages(&self, scope: &Scope) -> Result<Vec<TailMessage>, EngineError> {
        // One conversation's tail is a short read of its own; a user's or an agent's is
        // chosen by what the kept tail does not hold.
        if scope.conversation.is_some() || scope.user.is_some() || scope.agent.is_some() {
            let read = self.store.pending_messages(scope, self.config.ranking.open_tail_lines)?;
            return Ok(read.into_iter().map(|(c, m)| Arc::new(TailEntry::new(c, m))).collect());
        }
        let all = match self.tail_cache.fresh(&scope.tenant, TAIL_REFRESH) {
            Some(kept) => kept,
            None => self.read_tail(&scope.tenant)?,
        };
        let within = |entry: &&TailMessage| {
            let m = &entry.message;
            scope.conversation.as_ref().is_none_or(|c| *c == entry.conversation.conversation)
                && scope.since.is_none_or(|t| m.timestamp >= t)
                && scope.until.is_none_or(|t| m.timestamp <= t)
        };
        Ok(all.iter().filter(within).take(self.config.ranking.open_tail_lines).cloned().collect())
    }

    /// Reads the tenant's tail from the store and keeps it.
    fn read_tail(&self, tenant: &str) -> Result<Vec<TailMessage>, EngineError> {
        let (read_at, writes) = (Instant::now(), self.tail_cache.writes());
        let whole = Scope::tenant(tenant);
        let read: Vec<TailMessage> = self
            .store
            .pending_messages(&whole, 2 * self.config.ranking.open_tail_lines)?
            .into_iter()
            .map(|(c, m)| Arc::new(TailEntry::new(c, m)))
            .collect();
        self.tail_cache.keep(tenant, read_at, writes, &read);
        Ok(self.tail_cache.fresh(tenant, Duration::MAX).unwrap_or(read))
    }

    /// Reads again the kept tails half their refresh old: the owner's timer (a server's
    /// worker) calls it, so that recalls seldom wait for a read.
    pub(crate) fn refresh_tails(&self) -> Result<(), EngineError> {
        for tenant in self.tail_cache.older_than(TAIL_REFRESH / 2) {
            self.read_tail(&tenant)?;
        }
        Ok(())
    }

    /// The messages of `conversation` not yet in an episode, as the store holds them now: what
    /// a block quotes from the tail.
    pub(crate) fn tail_now(
        &self,
        scope: &Scope,
        conversation: &ConversationKey,
    ) -> Result<Vec<Message>, EngineError> {
        let one = Scope { conversation: Some(conversation.conversation.clone()), ..scope.clone() };
        let read = self.store.pending_messages(&one, TAIL_LINES)?;
        Ok(read.into_iter().map(|(_, m)| m).collect())
    }
}
