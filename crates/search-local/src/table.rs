//! The episodes the search indexes know, by slot, kept in columns: what ranking reads of each
//! episode side by side (where it sits, when it ran, its memory strength, a fingerprint of its
//! title and summary), the ids in one long string. Titles, summaries and keywords are the
//! store's: over a million episodes they were more than half the saved state, and ranking never
//! read them. A saved table is read back with a handful of allocations instead of several per
//! episode (at a million episodes that was most of the time a process took to open its index).
//! Scope keys are interned, so checking a scope against every episode costs a few integer
//! comparisons, not string compares.

use std::collections::HashMap;

use epimem_core::{
    Episode, EpisodeId, FsrsState, Scope, Timestamp,
    recall::{KeptEpisode, story_fingerprint},
};
use serde::{Deserialize, Serialize};

use self::slots_by_id::SlotsById;

mod slots_by_id;

/// No user or agent.
const NONE: u32 = u32::MAX;

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct EpisodeTable {
    spans: Vec<Span>,
    keys: Vec<Keys>,
    /// A forgotten episode keeps its slot, marked dead here.
    live: Vec<bool>,
    ids: Texts,
    /// Each episode's title and summary, fingerprinted (`story_fingerprint`): ranking tells a
    /// story told twice by it, and never reads the texts themselves (the store has them).
    stories: Vec<u64>,
    /// Names (tenants, conversations, users, agents) by number; `None` once no live episode
    /// uses one.
    names: Vec<Option<String>>,
    /// Numbers by name, made again from `names` after a load.
    #[serde(skip)]
    numbers: HashMap<String, u32>,
    /// Live episodes by id, made on the first change after a load: a process that only
    /// searches never needs it.
    #[serde(skip)]
    by_id: Option<SlotsById>,
    /// Live episodes of each conversation (tenant, conversation) by first message, to step
    /// from a message to its neighbours across episode edges.
    order: HashMap<(u32, u32), Vec<(u64, usize)>>,
}

/// Where an episode sits in its conversation and in time, and its memory strength.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Span {
    pub(crate) first_seq: u64,
    pub(crate) last_seq: u64,
    pub(crate) start: Timestamp,
    pub(crate) end: Timestamp,
    fsrs: FsrsState,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Keys {
    tenant: u32,
    conversation: u32,
    user: u32,
    agent: u32,
}

/// Many strings in one, each found by where it ends.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Texts {
    text: String,
    ends: Vec<u64>,
}

impl Texts {
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(self.text.len() as u64);
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        start..self.ends[i] as usize
    }

    fn get(&self, i: usize) -> &str {
        &self.text[self.range(i)]
    }

    /// Whether every string can be found (a saved file read back may be damaged).
    fn check(&self) -> bool {
        self.ends.windows(2).all(|w| w[0] <= w[1])
            && self.ends.last().map_or(0, |&end| end as usize) == self.text.len()
            && self.ends.iter().all(|&end| self.text.is_char_boundary(end as usize))
    }

    /// Overwrites strings `from..to` with zero bytes: what they said is gone at once, and
    /// every other string stays where it is.
    fn blank(&mut self, from: usize, to: usize) {
        if from >= to {
            return;
        }
        let range = self.range(from).start..self.range(to - 1).end;
        let zeros = "\0".repeat(range.len());
        self.text.replace_range(range, &zeros);
    }

    /// Made again without the strings `dead` says are blank (left empty), once they are most
    /// of the text.
    fn shrink(&mut self, dead: impl Fn(usize) -> bool) {
        let blank: usize =
            (0..self.ends.len()).filter(|&i| dead(i)).map(|i| self.range(i).len()).sum();
        if blank * 2 <= self.text.len() {
            return;
        }
        let mut kept = Self::default();
        for i in 0..self.ends.len() {
            kept.push(if dead(i) { "" } else { self.get(i) });
        }
        *self = kept;
    }
}

impl EpisodeTable {
    /// The slot of `episode`, added if new.
    pub(crate) fn insert(&mut self, episode: &Episode) -> usize {
        let (by_id, ids) = self.by_id();
        if let Some(slot) = by_id.get(&episode.id.0, ids) {
            return slot;
        }
        let keys = Keys {
            tenant: self.intern(&episode.conversation.tenant),
            conversation: self.intern(&episode.conversation.conversation),
            user: episode.user.as_deref().map_or(NONE, |u| self.intern(u)),
            agent: episode.agent.as_deref().map_or(NONE, |a| self.intern(a)),
        };
        let slot = self.spans.len();
        self.spans.push(Span {
            first_seq: episode.first_seq,
            last_seq: episode.last_seq,
            start: episode.start,
            end: episode.end,
            fsrs: episode.fsrs,
        });
        self.keys.push(keys);
        self.live.push(true);
        self.ids.push(&episode.id.0);
        self.stories.push(story_fingerprint(&episode.title, &episode.summary));
        let (by_id, ids) = self.by_id();
        by_id.insert(slot, ids);
        let order = self.order.entry((keys.tenant, keys.conversation)).or_default();
        // Episodes come in the order of their messages, nearly always.
        let at = order.partition_point(|&(seq, _)| seq < episode.first_seq);
        order.insert(at, (episode.first_seq, slot));
        slot
    }

    /// Marks an episode dead; its slot, if it was live.
    pub(crate) fn remove(&mut self, id: &EpisodeId) -> Option<usize> {
        let (by_id, ids) = self.by_id();
        let slot = by_id.remove(&id.0, ids)?;
        self.live[slot] = false;
        // What it said goes now; the slot stays, dead.
        self.ids.blank(slot, slot + 1);
        self.stories[slot] = 0;
        let k = self.keys[slot];
        if let Some(order) = self.order.get_mut(&(k.tenant, k.conversation)) {
            order.retain(|&(_, s)| s != slot);
        }
        Some(slot)
    }

    /// Drops the names only forgotten episodes used, and the room forgotten texts took.
    pub(crate) fn compact(&mut self) {
        let mut used = vec![false; self.names.len()];
        for slot in (0..self.keys.len()).filter(|&slot| self.live[slot]) {
            let k = self.keys[slot];
            for name in [k.tenant, k.conversation, k.user, k.agent] {
                if let Some(u) = used.get_mut(name as usize) {
                    *u = true;
                }
            }
        }
        for (name, used) in self.names.iter_mut().zip(used) {
            if !used && let Some(dropped) = name.take() {
                self.numbers.remove(&dropped);
            }
        }
        let live = &self.live;
        self.ids.shrink(|slot| !live[slot]);
    }

    /// After a load: checks that the columns hold together, and numbers the names.
    pub(crate) fn loaded(&mut self) -> Result<(), String> {
        let slots = self.spans.len();
        let columns = [self.keys.len(), self.live.len(), self.ids.ends.len(), self.stories.len()];
        let names = self.names.len() as u32;
        let keys_known = self.keys.iter().all(|k| {
            [k.tenant, k.conversation, k.user, k.agent].iter().all(|&n| n < names || n == NONE)
        });
        let whole = columns.iter().all(|&n| n == slots)
            && self.ids.check()
            && keys_known
            && self.order.values().flatten().all(|&(_, slot)| slot < slots);
        if !whole {
            return Err("episode table out of step".into());
        }
        self.numbers = self
            .names
            .iter()
            .enumerate()
            .filter_map(|(number, name)| Some((name.clone()?, number as u32)))
            .collect();
        Ok(())
    }

    /// Takes `episode`'s memory strength and the fingerprint of its title and summary, so the
    /// slot matches the record it is given, if it is here; whether it was. (A correction of
    /// the texts comes as a forget and an addition, not as a restatement.)
    pub(crate) fn restate(&mut self, episode: &Episode) -> bool {
        let (by_id, ids) = self.by_id();
        let Some(slot) = by_id.get(&episode.id.0, ids) else { return false };
        self.spans[slot].fsrs = episode.fsrs;
        self.stories[slot] = story_fingerprint(&episode.title, &episode.summary);
        true
    }

    pub(crate) fn contains(&mut self, id: &EpisodeId) -> bool {
        let (by_id, ids) = self.by_id();
        by_id.get(&id.0, ids).is_some()
    }

    /// What ranking needs of the episode in `slot` (its id the only text copied).
    pub(crate) fn indexed(&self, slot: usize) -> KeptEpisode {
        let s = &self.spans[slot];
        KeptEpisode {
            id: EpisodeId(self.ids.get(slot).to_owned()),
            start: s.start,
            end: s.end,
            fsrs: s.fsrs,
        }
    }

    /// The fingerprint of the title and summary of the episode in `slot` (0 once forgotten).
    pub(crate) fn story(&self, slot: usize) -> u64 {
        self.stories[slot]
    }

    /// Where the episode in `slot` sits in its conversation and in time.
    pub(crate) fn span(&self, slot: usize) -> &Span {
        &self.spans[slot]
    }

    /// The live episode holding message `seq` of `slot`'s conversation, if it shares
    /// `slot`'s user and agent (a conversation's episodes normally all do).
    pub(crate) fn holding(&self, slot: usize, seq: u64) -> Option<usize> {
        let k = self.keys[slot];
        let order = self.order.get(&(k.tenant, k.conversation))?;
        let at = order.partition_point(|&(first, _)| first <= seq).checked_sub(1)?;
        let found = order[at].1;
        let f = self.keys[found];
        (self.spans[found].last_seq >= seq && f.user == k.user && f.agent == k.agent)
            .then_some(found)
    }

    /// One number per conversation (tenant and conversation), the same for all its episodes.
    pub(crate) fn conversation_of(&self, slot: usize) -> u64 {
        let k = self.keys[slot];
        (u64::from(k.tenant) << 32) | u64::from(k.conversation)
    }

    /// Whether the episode in `slot` is live (not forgotten).
    pub(crate) fn is_live(&self, slot: usize) -> bool {
        self.live.get(slot).copied().unwrap_or(false)
    }

    pub(crate) fn slots(&self) -> usize {
        self.spans.len()
    }

    /// Per slot: live and inside `scope`.
    pub(crate) fn visible(&self, scope: &Scope) -> Vec<bool> {
        let known = |name: &str| self.numbers.get(name).copied();
        let Some(tenant) = known(&scope.tenant) else { return vec![false; self.slots()] };
        // A name never seen matches nothing.
        let want = |name: &Option<String>| name.as_deref().map(|n| known(n).unwrap_or(NONE - 1));
        let (conversation, user, agent) =
            (want(&scope.conversation), want(&scope.user), want(&scope.agent));
        self.keys
            .iter()
            .zip(&self.spans)
            .zip(&self.live)
            .map(|((k, s), &live)| {
                live && k.tenant == tenant
                    && conversation.is_none_or(|c| k.conversation == c)
                    && user.is_none_or(|u| k.user == u)
                    && agent.is_none_or(|a| k.agent == a)
                    && scope.since.is_none_or(|t| s.end >= t)
                    && scope.until.is_none_or(|t| s.start <= t)
            })
            .collect()
    }

    /// Live episodes by id, made from the ids column the first time it is needed; and that
    /// column, which it reads.
    fn by_id(&mut self) -> (&mut SlotsById, &Texts) {
        let (ids, live) = (&self.ids, &self.live);
        let by_id = self.by_id.get_or_insert_with(|| SlotsById::of(live, ids));
        (by_id, ids)
    }

    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.numbers.get(name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("fewer than 4 billion names");
        assert!(id < NONE - 1, "fewer than 4 billion names");
        self.numbers.insert(name.to_owned(), id);
        self.names.push(Some(name.to_owned()));
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
        let id = table.indexed(a).id;
        assert_eq!(table.remove(&id), Some(a));
        assert_eq!(table.remove(&id), None);
        assert_eq!(table.visible(&Scope::tenant("t")), [false, true, false]);
    }

    #[test]
    fn a_saved_table_reads_back_whole_without_what_was_forgotten() {
        let mut table = EpisodeTable::default();
        let mut said = |start: i64, title: &str, keywords: &[&str]| {
            let e = Episode {
                title: title.into(),
                summary: format!("{title}, told"),
                keywords: keywords.iter().map(|k| k.to_string()).collect(),
                ..episode("t", &format!("c{}", start % 2), Some("u"), start)
            };
            table.insert(&e);
            e
        };
        let kept = said(0, "The Lisbon trip", &["lisbon", "tram 28"]);
        let forgotten = said(100, "A xylophonist cousin", &["xylophone"]);
        let last = said(201, "", &[]);
        assert!(table.remove(&forgotten.id).is_some());
        table.compact();
        let bytes = postcard::to_stdvec(&table).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(&forgotten.id.0), "a forgotten id is not saved");
        assert!(!text.contains("Lisbon"), "titles and summaries are the store's, not saved here");
        let mut read: EpisodeTable = postcard::from_bytes(&bytes).unwrap();
        read.loaded().unwrap();
        for (slot, e) in [(0, &kept), (2, &last)] {
            assert_eq!(read.indexed(slot), KeptEpisode::from(e));
            assert_eq!(read.story(slot), story_fingerprint(&e.title, &e.summary));
        }
        assert_ne!(read.story(0), read.story(2));
        assert_eq!(read.visible(&Scope::tenant("t")), [true, false, true]);
        let c1 = Scope::tenant("t").with_conversation(Some("c1".into()));
        assert_eq!(read.visible(&c1), [false, false, true]);
        assert!(read.contains(&kept.id) && !read.contains(&forgotten.id));
        assert_eq!(read.insert(&kept), 0, "known by its id after a load");
        assert_eq!(read.holding(0, 1), Some(0));
    }

    #[test]
    fn texts_blanked_keep_the_others_in_place_and_shrink_once_mostly_blank() {
        let mut texts = Texts::default();
        for s in ["alpha", "", "beta gamma", "delta"] {
            texts.push(s);
        }
        texts.blank(2, 3);
        assert_eq!((texts.get(0), texts.get(1), texts.get(3)), ("alpha", "", "delta"));
        assert_eq!(texts.get(2), "\0".repeat(10));
        texts.shrink(|i| i == 2);
        assert_eq!(texts.text.len(), 20, "blank text is under half: left as it is");
        texts.blank(0, 1);
        texts.shrink(|i| i == 0 || i == 2);
        assert_eq!(texts.text, "delta");
        assert_eq!((texts.get(0), texts.get(2), texts.get(3)), ("", "", "delta"));
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
        table.remove(&table.indexed(b).id);
        assert_eq!(table.holding(a, 5), None, "forgotten");
    }
}
