//! The episodes the search indexes know, by slot. Scope keys are interned, so checking a
//! scope against every episode costs a few integer comparisons, not string compares.

use std::collections::{BTreeMap, HashMap};

use epimem_core::{Episode, EpisodeId, Scope};
use serde::{Deserialize, Serialize};

/// No user or agent.
const NONE: u32 = u32::MAX;

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct EpisodeTable {
    episodes: Vec<Episode>,
    keys: Vec<Keys>,
    /// Live episodes by id; a forgotten episode keeps its slot, marked dead here.
    by_id: HashMap<EpisodeId, usize>,
    live: Vec<bool>,
    names: HashMap<String, u32>,
    /// The next name's number (names of forgotten episodes leave `names`).
    next_name: u32,
    /// Live episodes of each conversation (tenant, conversation) by first message, to step
    /// from a message to its neighbours across episode edges.
    order: HashMap<(u32, u32), BTreeMap<u64, usize>>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Keys {
    tenant: u32,
    conversation: u32,
    user: u32,
    agent: u32,
}

impl EpisodeTable {
    /// The slot of `episode`, added if new.
    pub(crate) fn insert(&mut self, episode: &Episode) -> usize {
        if let Some(&slot) = self.by_id.get(&episode.id) {
            return slot;
        }
        let keys = Keys {
            tenant: self.intern(&episode.conversation.tenant),
            conversation: self.intern(&episode.conversation.conversation),
            user: episode.user.as_deref().map_or(NONE, |u| self.intern(u)),
            agent: episode.agent.as_deref().map_or(NONE, |a| self.intern(a)),
        };
        self.episodes.push(episode.clone());
        self.keys.push(keys);
        self.live.push(true);
        let slot = self.episodes.len() - 1;
        self.by_id.insert(episode.id.clone(), slot);
        self.order
            .entry((keys.tenant, keys.conversation))
            .or_default()
            .insert(episode.first_seq, slot);
        slot
    }

    /// Marks an episode dead; its slot, if it was live.
    pub(crate) fn remove(&mut self, id: &EpisodeId) -> Option<usize> {
        let slot = self.by_id.remove(id)?;
        self.live[slot] = false;
        // What it said goes now; the slot stays, dead.
        let episode = &mut self.episodes[slot];
        episode.conversation = epimem_core::ConversationKey::new("", "");
        (episode.user, episode.agent) = (None, None);
        (episode.title, episode.summary, episode.keywords) = Default::default();
        let k = self.keys[slot];
        if let Some(order) = self.order.get_mut(&(k.tenant, k.conversation)) {
            order.retain(|_, s| *s != slot);
        }
        Some(slot)
    }

    /// Drops the names only forgotten episodes used.
    pub(crate) fn compact(&mut self) {
        let used: std::collections::HashSet<u32> = (0..self.keys.len())
            .filter(|&slot| self.live[slot])
            .flat_map(|slot| {
                let k = self.keys[slot];
                [k.tenant, k.conversation, k.user, k.agent]
            })
            .collect();
        self.names.retain(|_, id| used.contains(id));
    }

    /// Takes `episode`'s memory strength, if it is here; whether it was.
    pub(crate) fn restate(&mut self, episode: &Episode) -> bool {
        let Some(&slot) = self.by_id.get(&episode.id) else { return false };
        self.episodes[slot].fsrs = episode.fsrs;
        true
    }

    pub(crate) fn contains(&self, id: &EpisodeId) -> bool {
        self.by_id.contains_key(id)
    }

    pub(crate) fn episode(&self, slot: usize) -> &Episode {
        &self.episodes[slot]
    }

    /// The live episode holding message `seq` of `slot`'s conversation, if it shares
    /// `slot`'s user and agent (a conversation's episodes normally all do).
    pub(crate) fn holding(&self, slot: usize, seq: u64) -> Option<usize> {
        let k = self.keys[slot];
        let (_, &found) = self.order.get(&(k.tenant, k.conversation))?.range(..=seq).next_back()?;
        let f = self.keys[found];
        (self.episodes[found].last_seq >= seq && f.user == k.user && f.agent == k.agent)
            .then_some(found)
    }

    /// One number per conversation (tenant and conversation), the same for all its episodes.
    pub(crate) fn conversation_of(&self, slot: usize) -> u64 {
        let k = self.keys[slot];
        (u64::from(k.tenant) << 32) | u64::from(k.conversation)
    }

    pub(crate) fn slots(&self) -> usize {
        self.episodes.len()
    }

    /// Per slot: live and inside `scope`.
    pub(crate) fn visible(&self, scope: &Scope) -> Vec<bool> {
        let known = |name: &str| self.names.get(name).copied();
        let Some(tenant) = known(&scope.tenant) else { return vec![false; self.slots()] };
        // A name never seen matches nothing.
        let want = |name: &Option<String>| name.as_deref().map(|n| known(n).unwrap_or(NONE - 1));
        let (conversation, user, agent) =
            (want(&scope.conversation), want(&scope.user), want(&scope.agent));
        self.keys
            .iter()
            .zip(&self.episodes)
            .zip(&self.live)
            .map(|((k, e), &live)| {
                live && k.tenant == tenant
                    && conversation.is_none_or(|c| k.conversation == c)
                    && user.is_none_or(|u| k.user == u)
                    && agent.is_none_or(|a| k.agent == a)
                    && scope.since.is_none_or(|t| e.end >= t)
                    && scope.until.is_none_or(|t| e.start <= t)
            })
            .collect()
    }

    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.names.get(name) {
            return id;
        }
        let id = self.next_name;
        self.next_name = id.checked_add(1).expect("fewer than 4 billion names");
        self.names.insert(name.to_owned(), id);
        id
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use epimem_core::{BoundaryReason, ConversationKey, FsrsState, Timestamp};

    use super::*;

    /// An episode of one message in `tenant`/`conversation` from `start` to `start + 10`.
    pub(crate) fn episode(
        tenant: &str,
        conversation: &str,
        user: Option<&str>,
        start: i64,
    ) -> Episode {
        Episode {
            id: EpisodeId(format!("{tenant}/{conversation}/{start}")),
            conversation: ConversationKey::new(tenant, conversation),
            user: user.map(str::to_owned),
            agent: None,
            first_seq: 1,
            last_seq: 1,
            context_first_seq: None,
            start: Timestamp(start),
            end: Timestamp(start + 10),
            title: String::new(),
            summary: String::new(),
            keywords: vec![],
            surprise: 0.0,
            boundary_reason: BoundaryReason::Flush,
            fsrs: FsrsState::default(),
            told_by: Default::default(),
            told_note: None,
        }
    }

    #[test]
    fn scopes_select_by_every_key() {
        let mut table = EpisodeTable::default();
        let a = table.insert(&episode("t", "c1", Some("u1"), 0));
        table.insert(&episode("t", "c2", None, 100));
        table.insert(&episode("other", "c1", Some("u1"), 0));
        assert_eq!(table.insert(&episode("t", "c1", Some("u1"), 0)), a, "same id, same slot");
        assert_eq!(table.visible(&Scope::tenant("t")), [true, true, false]);
        assert_eq!(table.visible(&Scope::tenant("nobody")), [false, false, false]);
        let c1 = Scope::tenant("t").with_conversation(Some("c1".into()));
        assert_eq!(table.visible(&c1), [true, false, false]);
        let unknown = Scope::tenant("t").with_conversation(Some("c9".into()));
        assert_eq!(table.visible(&unknown), [false, false, false]);
        let user = Scope { user: Some("u1".into()), ..Scope::tenant("t") };
        assert_eq!(table.visible(&user), [true, false, false]);
        let late = Scope { since: Some(Timestamp(50)), ..Scope::tenant("t") };
        assert_eq!(table.visible(&late), [false, true, false]);
        let early = Scope { until: Some(Timestamp(50)), ..Scope::tenant("t") };
        assert_eq!(table.visible(&early), [true, false, false]);
        let id = table.episode(a).id.clone();
        assert_eq!(table.remove(&id), Some(a));
        assert_eq!(table.remove(&id), None);
        assert_eq!(table.visible(&Scope::tenant("t")), [false, true, false]);
    }

    #[test]
    fn messages_are_found_across_episodes_of_one_conversation() {
        let mut table = EpisodeTable::default();
        let span = |tenant, conversation, first, last| Episode {
            id: EpisodeId(format!("{tenant}/{conversation}/{first}")),
            first_seq: first,
            last_seq: last,
            ..episode(tenant, conversation, None, 0)
        };
        let a = table.insert(&span("t", "c", 1, 4));
        let b = table.insert(&span("t", "c", 5, 6));
        let other = table.insert(&span("u", "c", 7, 9));
        assert_eq!(table.holding(a, 5), Some(b));
        assert_eq!(table.holding(b, 2), Some(a));
        assert_eq!(table.holding(a, 7), None, "another tenant's conversation");
        assert_eq!(table.holding(other, 8), Some(other));
        assert_eq!(table.conversation_of(a), table.conversation_of(b));
        assert_ne!(table.conversation_of(a), table.conversation_of(other));
        table.remove(&table.episode(b).id.clone());
        assert_eq!(table.holding(a, 5), None, "forgotten");
    }
}
