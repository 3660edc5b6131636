//! The search index of a command that never searches (`episodes`, `show`, `stats`, a hook):
//! it reads and writes the store only. An empty index in memory would be built for nothing,
//! and would link the whole index (tantivy) into the hook's binary, which each start of a
//! hook then had to load.

use epimem_core::recall::{EpisodeCandidates, TurnTable};
use epimem_search::{EpisodeQuery, Search, SearchError, TurnQuery, Update, WordVectors};

/// Holds nothing: updates change nothing, and a query is refused (never answered empty).
#[derive(Debug)]
pub(crate) struct NoIndex;

fn refused() -> SearchError {
    SearchError::Unavailable("this command opened no search index".into())
}

impl Search for NoIndex {
    fn generation(&self, _tenant: &str) -> Result<u64, SearchError> {
        Ok(0)
    }

    fn apply(&self, _tenant: &str, _update: &Update<'_>) -> Result<(), SearchError> {
        Ok(())
    }

    fn discard(&self, _tenant: &str) -> Result<(), SearchError> {
        Ok(())
    }

    fn episodes(&self, _query: &EpisodeQuery<'_>) -> Result<EpisodeCandidates, SearchError> {
        Err(refused())
    }

    fn turns(
        &self,
        _query: &TurnQuery<'_>,
        _words: Option<&dyn WordVectors>,
    ) -> Result<TurnTable, SearchError> {
        Err(refused())
    }

    fn embedding_text(&self, _tenant: &str, _text: &str) -> Result<String, SearchError> {
        Err(refused())
    }

    fn read_names(
        &self,
        _tenant: &str,
        _text: &str,
        _tail: &[epimem_search::TailLine<'_>],
    ) -> Result<Vec<epimem_core::recall::NameReading>, SearchError> {
        Err(refused())
    }

    fn vectors(&self) -> usize {
        0
    }
}
