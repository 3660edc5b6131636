//! Episodes: a page of them, one in full, a person's corrections, and forgetting one.

use epimem_core::{EpisodeId, Scope};
use epimem_store::EpisodeCursor;

use crate::{
    Memory, MemoryError, limit, time, user,
    wire::{
        DeletedOut, EpisodeEditIn, EpisodeOut, EpisodeVersionOut, EpisodeVersionsOut, EpisodesOut,
        EpisodesQuery, MemoryOut, decode_cursor, encode_cursor,
    },
};

/// Episodes on a page that names no limit.
const DEFAULT_PAGE: usize = 50;

/// Points of the forgetting curve an episode is shown with.
const CURVE_POINTS: usize = 24;

impl Memory {
    /// Episodes, newest first (by start), a page at a time.
    pub fn episodes(&self, tenant: &str, query: EpisodesQuery) -> Result<EpisodesOut, MemoryError> {
        let span = crate::traces::reading("episodes", tenant);
        crate::traces::within(span, |_| {
            let limit = limit(query.limit, DEFAULT_PAGE)?;
            let after = match query.cursor.as_deref() {
                None => None,
                Some(c) => Some(decode_cursor(c).ok_or_else(|| {
                    MemoryError::bad_input(format!(
                        "cursor: {c:?} is not a cursor this server gave"
                    ))
                })?),
            };
            let scope = Scope {
                since: time(query.since.as_deref(), "since")?,
                until: time(query.until.as_deref(), "until")?,
                user: user(query.user)?,
                agent: query.project,
                ..Scope::tenant(tenant).with_conversation(query.conversation)
            };
            // One more than the page says whether there is a next one.
            let mut episodes = self.engine.episodes_after(&scope, after.as_ref(), limit + 1)?;
            let more = episodes.len() > limit;
            episodes.truncate(limit);
            Ok(EpisodesOut {
                next_cursor: episodes
                    .last()
                    .filter(|_| more)
                    .map(|e| encode_cursor(&EpisodeCursor::after(e))),
                episodes: episodes.iter().map(EpisodeOut::from).collect(),
            })
        })
    }

    /// One episode with its messages (and the overlap carried in from the one before), its
    /// memory strength and forgetting curve, and what it said before each edit.
    pub fn episode(&self, tenant: &str, id: &str) -> Result<EpisodeOut, MemoryError> {
        let span = crate::traces::reading("episode", tenant);
        crate::traces::within(span, |_| {
            let scope = Scope::tenant(tenant);
            let detail = self.engine.episode(&scope, &EpisodeId(id.to_owned()))?;
            let state = &detail.episode.fsrs;
            let (now, curve) = self.engine.memory_curve(state, CURVE_POINTS);
            let reviews = self.engine.episode_reviews(&scope, &detail.episode.id)?;
            let versions = self.engine.episode_versions(&scope, &detail.episode.id)?;
            Ok(EpisodeOut {
                memory: Some(MemoryOut::new(state, now, &curve, &reviews)),
                versions: Some(versions.iter().map(EpisodeVersionOut::from).collect()),
                ..EpisodeOut::from(&detail)
            })
        })
    }

    /// Gives an episode a new title or summary; the old is kept as a version.
    pub fn edit_episode(
        &self,
        tenant: &str,
        id: &str,
        edit: EpisodeEditIn,
    ) -> Result<EpisodeOut, MemoryError> {
        let span = crate::traces::memory("update_memory", "edit_episode", tenant);
        span.record("gen_ai.memory.record.id", id);
        crate::traces::within(span, |_| {
            let scope = Scope::tenant(tenant);
            let id = EpisodeId(id.to_owned());
            let edited = self.engine.edit_episode(&scope, &id, edit.title, edit.summary)?;
            Ok(EpisodeOut::from(&edited))
        })
    }

    /// What an episode's title and summary said before each edit.
    pub fn episode_versions(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<EpisodeVersionsOut, MemoryError> {
        let scope = Scope::tenant(tenant);
        let id = EpisodeId(id.to_owned());
        // An episode this tenant cannot see is not found, rather than never edited.
        self.engine.episode(&scope, &id)?;
        let versions = self.engine.episode_versions(&scope, &id)?;
        Ok(EpisodeVersionsOut { versions: versions.iter().map(EpisodeVersionOut::from).collect() })
    }

    /// Forgets an episode: it leaves every index, and its messages lose their text.
    pub fn forget_episode(&self, tenant: &str, id: &str) -> Result<DeletedOut, MemoryError> {
        let span = crate::traces::memory("delete_memory", "forget_episode", tenant);
        span.record("gen_ai.memory.record.id", id);
        crate::traces::within(span, |_| {
            self.engine.delete_episode(&Scope::tenant(tenant), &EpisodeId(id.to_owned()))?;
            Ok(DeletedOut { episodes: 1 })
        })
    }
}
