//! Telling again what an earlier version told without a model: the titles and summaries of
//! episodes, then the timeline's periods (after an upgrade that tells them better).

use epimem_core::{Scope, ToldBy, work::told_extractively};
use epimem_store::EpisodeEdit;

use crate::engine::{Engine, EngineError, RollupReport};

/// What a retelling did.
#[derive(Debug, Default)]
pub struct RetellReport {
    /// Episodes looked at.
    pub episodes: usize,
    /// Episodes given a new title or summary.
    pub retold: usize,
    /// Episodes left as they were: a model told them, or someone corrected them.
    pub kept: usize,
    pub timeline: RollupReport,
}

impl Engine {
    /// Tells `tenant`'s episodes again as a new episode is told without a model, from their
    /// messages, the old title and summary kept as a version; then every period of the
    /// timeline. An episode a model told, or one with a version (someone corrected it, or it
    /// was retold before), is left as it is. `progress(done, total)` after each episode.
    pub(crate) fn retell(
        &self,
        tenant: &str,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<RetellReport, EngineError> {
        let scope = Scope::tenant(tenant);
        let episodes = self.store.episodes(&scope, None, None)?;
        let mut report = RetellReport { episodes: episodes.len(), ..RetellReport::default() };
        for (done, episode) in episodes.iter().enumerate() {
            progress(done as u64, episodes.len() as u64);
            let untouched = episode.told_by == ToldBy::Fallback
                && self.store.episode_versions(&scope, &episode.id)?.is_empty();
            let detail = match untouched {
                true => self.store.episode(&scope, &episode.id)?,
                false => None,
            };
            // Forgotten meanwhile, or not ours to retell.
            let Some(detail) = detail.filter(|d| !d.messages.is_empty()) else {
                report.kept += 1;
                continue;
            };
            let told = told_extractively(&detail.messages, &self.config.summary);
            if told.title == episode.title && told.summary == episode.summary {
                continue;
            }
            let edit = EpisodeEdit {
                title: Some(told.title),
                summary: Some(told.summary),
                at: self.clock.now(),
            };
            self.store.edit_episode(&scope, &episode.id, &edit)?;
            report.retold += 1;
        }
        progress(episodes.len() as u64, episodes.len() as u64);
        self.index_after_write(tenant)?;
        report.timeline = self.retell_timeline(tenant)?;
        Ok(report)
    }
}
