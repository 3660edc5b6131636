//! Conversations and what the tenant holds: remembering messages, a conversation's state,
//! flushing, forgetting, jobs, facts and the timeline.

use std::collections::BTreeSet;

use epimem_core::{ConversationKey, Scope, Timestamp, TocNode, top_nodes};
use epimem_store::TakeBack;

use crate::{
    Batch, MAX_LIMIT, Memory, MemoryError, limit, user,
    wire::{
        AddedMessageOut, AddedOut, AddedStatus, ConversationOut, ConversationsOut,
        ConversationsQuery, DeletedOut, FactOut, FactsOut, FactsQuery, FlushedOut, JobOut, JobsOut,
        JobsQuery, MessagesOut, MessagesQuery, SessionSummaryOut, StoredMessageOut,
        TimelineNodeOut, TimelineOut, TimelineQuery, VersionQuery,
    },
};

impl Memory {
    /// Stores the messages durably and queues their segmentation for a worker; the answer
    /// says where each message is and how each conversation touched stands.
    pub fn remember(&self, mut batch: Batch) -> Result<AddedOut, MemoryError> {
        let tenant = batch.messages.first().map_or("", |m| m.conversation.tenant.as_str());
        let span = crate::traces::memory("create_memory", "remember", tenant);
        span.record("gen_ai.memory.record.count", batch.messages.len() as i64);
        crate::traces::within(span, |_| {
            let messages = std::mem::take(&mut batch.messages);
            let touched: BTreeSet<ConversationKey> =
                messages.iter().map(|m| m.conversation.clone()).collect();
            let sent: Vec<(String, Option<String>)> = messages
                .iter()
                .map(|m| {
                    let id = m.key.strip_prefix("id:").map(str::to_owned);
                    (m.conversation.conversation.clone(), id)
                })
                .collect();
            let report = self.engine.enqueue(messages).map_err(|e| batch.refusal(e))?;
            let placed =
                report.messages.iter().zip(sent).map(|(m, (conversation, id))| AddedMessageOut {
                    conversation,
                    id,
                    seq: m.seq,
                    new: m.new,
                    status: AddedStatus::of(m),
                });
            let conversations = touched
                .into_iter()
                .map(|key| self.conversation_state(&key, false))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(AddedOut {
                inserted: report.inserted,
                duplicates: report.duplicates,
                conflicts: report.conflicts,
                messages: placed.collect(),
                conversations,
            })
        })
    }

    /// A conversation: its messages, pending ones, episodes, jobs and summary; not found if it
    /// has no message.
    pub fn conversation(
        &self,
        tenant: &str,
        conversation: &str,
    ) -> Result<ConversationOut, MemoryError> {
        let span = crate::traces::reading("conversation", tenant);
        span.record("gen_ai.conversation.id", conversation);
        crate::traces::within(span, |_| {
            self.conversation_state(&ConversationKey::new(tenant, conversation), true)
        })
    }

    fn conversation_state(
        &self,
        key: &ConversationKey,
        in_full: bool,
    ) -> Result<ConversationOut, MemoryError> {
        let engine = &*self.engine;
        let queue = engine.queue(key)?.ok_or_else(|| not_found(&key.conversation))?;
        let (episodes, summary, jobs) = if in_full {
            let scope =
                Scope::tenant(&key.tenant).with_conversation(Some(key.conversation.clone()));
            let all = engine.episodes(&scope, None)?;
            let summary = (!all.is_empty()).then(|| {
                let s = epimem_core::session_summary(&all, engine.config().timeline.bullets);
                SessionSummaryOut {
                    title: s.title,
                    bullets: s.bullets,
                    keywords: s.keywords,
                    names: s.names,
                    messages: s.messages,
                }
            });
            let jobs = engine.jobs(&key.tenant, Some(&key.conversation), MAX_LIMIT)?;
            (Some(all.len() as u64), summary, Some(jobs.into_iter().map(JobOut::from).collect()))
        } else {
            (None, None, None)
        };
        Ok(ConversationOut {
            conversation: key.conversation.clone(),
            last_seq: queue.last_seq,
            pending: queue.pending(),
            last_activity: queue.newest.map(Timestamp::to_rfc3339),
            episodes,
            jobs,
            summary,
        })
    }

    /// The tenant's conversations by name, in name order: those starting with `prefix`, after
    /// `after`, at most `limit` (default 100).
    pub fn conversation_names(
        &self,
        tenant: &str,
        query: ConversationsQuery,
    ) -> Result<ConversationsOut, MemoryError> {
        let limit = limit(query.limit, 100)?;
        let prefix = query.prefix.unwrap_or_default();
        let mut names: Vec<String> = (self.engine.conversations(tenant)?.into_iter())
            .map(|key| key.conversation)
            .filter(|name| name.starts_with(&prefix))
            .filter(|name| query.after.as_ref().is_none_or(|after| name > after))
            .collect();
        names.sort_unstable();
        let next_after = (names.len() > limit).then(|| names[limit - 1].clone());
        names.truncate(limit);
        Ok(ConversationsOut { conversations: names, next_after })
    }

    /// A conversation's messages as it holds them, oldest first: the newest `limit` (default
    /// 100) of those before `before`, each with its metadata and the episode it closed into;
    /// not found if there is no such conversation.
    pub fn messages(
        &self,
        tenant: &str,
        conversation: &str,
        query: MessagesQuery,
    ) -> Result<MessagesOut, MemoryError> {
        let span = crate::traces::reading("messages", tenant);
        span.record("gen_ai.conversation.id", conversation);
        crate::traces::within(span, |_| {
            let limit = limit(query.limit, 100)?;
            let key = ConversationKey::new(tenant, conversation);
            let read = self.engine.conversation_messages(&key, query.before, limit)?;
            let read = read.ok_or_else(|| not_found(conversation))?;
            let next_before = match read.first() {
                Some((oldest, _)) if read.len() == limit && oldest.seq > 1 => Some(oldest.seq),
                _ => None,
            };
            Ok(MessagesOut {
                conversation: conversation.to_owned(),
                messages: read.iter().map(|(m, e)| StoredMessageOut::new(m, e.as_ref())).collect(),
                next_before,
            })
        })
    }

    /// Takes back a conversation's newest message while it is in no episode (an agent undoing
    /// its last turn): it is gone from every file, and its id may be sent again. A conflict
    /// once an episode holds it, or a segmentation is closing it; not found when the
    /// conversation holds no message.
    pub fn take_back(
        &self,
        tenant: &str,
        conversation: &str,
    ) -> Result<StoredMessageOut, MemoryError> {
        let span = crate::traces::memory("delete_memory", "take_back", tenant);
        span.record("gen_ai.conversation.id", conversation);
        crate::traces::within(span, |_| {
            let key = ConversationKey::new(tenant, conversation);
            match self.engine.take_back_newest(&key)? {
                TakeBack::Taken(message) => Ok(StoredMessageOut::new(&message, None)),
                TakeBack::Nothing => Err(MemoryError::not_found(format!(
                    "a message in conversation {conversation:?}"
                ))),
                TakeBack::Closed(Some(episode)) => Err(MemoryError::conflict(format!(
                    "the newest message of conversation {conversation:?} is in episode {episode}: \
                 only a message not yet in an episode can be taken back"
                ))),
                TakeBack::Closed(None) => Err(MemoryError::conflict(format!(
                    "the newest message of conversation {conversation:?} is being closed into an \
                 episode: only a message not yet in an episode can be taken back"
                ))),
            }
        })
    }

    /// Closes everything pending in a conversation into episodes now (the end of a session);
    /// not found if it has no message.
    pub fn flush(&self, tenant: &str, conversation: &str) -> Result<FlushedOut, MemoryError> {
        let span = crate::traces::memory("create_memory", "flush", tenant);
        span.record("gen_ai.conversation.id", conversation);
        crate::traces::within(span, |_| {
            self.conversation_state(&ConversationKey::new(tenant, conversation), false)?;
            let scope = Scope::tenant(tenant).with_conversation(Some(conversation.to_owned()));
            Ok(self.engine.flush(&scope)?.into())
        })
    }

    /// Closes everything pending in every conversation of the tenant into episodes now (the
    /// end of an import).
    pub fn flush_tenant(&self, tenant: &str) -> Result<FlushedOut, MemoryError> {
        let span = crate::traces::memory("create_memory", "flush", tenant);
        crate::traces::within(span, |_| Ok(self.engine.flush(&Scope::tenant(tenant))?.into()))
    }

    /// Forgets a conversation: its messages, episodes, vectors and pending work, from every
    /// file and index.
    pub fn forget_conversation(
        &self,
        tenant: &str,
        conversation: &str,
    ) -> Result<DeletedOut, MemoryError> {
        let span = crate::traces::memory("delete_memory", "forget_conversation", tenant);
        span.record("gen_ai.conversation.id", conversation);
        crate::traces::within(span, |_| {
            let key = ConversationKey::new(tenant, conversation);
            let episodes = self.engine.delete_conversation(&key)?;
            Ok(DeletedOut { episodes: episodes as u64 })
        })
    }

    /// Forgets everything one person said: every conversation whose messages carry `user`, from
    /// every file and index; the tenant's timeline is told again without them.
    pub fn forget_user(&self, tenant: &str, user: &str) -> Result<DeletedOut, MemoryError> {
        let span = crate::traces::memory("delete_memory", "forget_user", tenant);
        crate::traces::within(span, |_| {
            let episodes = self.engine.delete_user(tenant, user)?;
            Ok(DeletedOut { episodes: episodes as u64 })
        })
    }

    /// Forgets everything the tenant remembers, from every file and index. Its API keys stay.
    pub fn forget_tenant(&self, tenant: &str) -> Result<DeletedOut, MemoryError> {
        let span = crate::traces::memory("delete_memory_store", "forget_tenant", tenant);
        crate::traces::within(span, |_| {
            let episodes = self.engine.delete_tenant(tenant)?;
            Ok(DeletedOut { episodes: episodes as u64 })
        })
    }

    /// The tenant's jobs not yet done: queued, running, retrying or parked.
    pub fn jobs(&self, tenant: &str, query: JobsQuery) -> Result<JobsOut, MemoryError> {
        let limit = limit(query.limit, 100)?;
        let jobs = self.engine.jobs(tenant, query.conversation.as_deref(), limit)?;
        Ok(JobsOut { jobs: jobs.into_iter().map(JobOut::from).collect() })
    }

    /// Facts distilled from the tenant's episodes, newest first (by when they became true).
    pub fn facts(&self, tenant: &str, query: FactsQuery) -> Result<FactsOut, MemoryError> {
        let span = crate::traces::reading("facts", tenant);
        crate::traces::within(span, |_| {
            let limit = limit(query.limit, 100)?;
            let scope = Scope { user: user(query.user)?, ..Scope::tenant(tenant) }
                .with_conversation(query.conversation);
            let facts = self.engine.facts(&scope, query.all, Some(limit))?;
            Ok(FactsOut { facts: facts.iter().map(FactOut::from).collect() })
        })
    }

    /// The top of the tenant's timeline (or, given a `user`, of theirs): the periods rolled
    /// up whose parent is not, oldest first.
    pub fn timeline(&self, tenant: &str, query: TimelineQuery) -> Result<TimelineOut, MemoryError> {
        let span = crate::traces::reading("timeline", tenant);
        crate::traces::within(span, |_| {
            let nodes = match user(query.user)? {
                None => self.engine.timeline_top(tenant)?,
                Some(user) => {
                    let mut told = self.engine.user_timeline(tenant, &user)?;
                    top_nodes(told.keys().copied())
                        .iter()
                        .filter_map(|id| told.remove(id))
                        .collect()
                }
            };
            Ok(TimelineOut { nodes: nodes.iter().map(TimelineNodeOut::from).collect() })
        })
    }

    /// One node of the tenant's timeline (its newest version, or `version`), with its
    /// children's ids.
    pub fn timeline_node(
        &self,
        tenant: &str,
        node: &str,
        query: VersionQuery,
    ) -> Result<TimelineNodeOut, MemoryError> {
        let id: TocNode = node.parse().map_err(|e| MemoryError::bad_input(format!("node: {e}")))?;
        let found = match user(query.user)? {
            None => self.engine.timeline_node(tenant, &id, query.version)?,
            // A timeline told on the spot has one version.
            Some(user) if query.version.is_none_or(|v| v == 1) => {
                self.engine.user_timeline(tenant, &user)?.remove(&id)
            }
            Some(_) => None,
        };
        let found = found.ok_or_else(|| MemoryError::not_found(format!("timeline node {node}")))?;
        Ok(TimelineNodeOut::from(&found))
    }
}

fn not_found(conversation: &str) -> MemoryError {
    MemoryError::not_found(format!("conversation {conversation:?}"))
}
