//! The search port in PostgreSQL: stateless servers and workers share one index, kept in the
//! database beside the store it is derived from. Lexical recall is PostgreSQL's full-text
//! search (`tsvector` under GIN, scored by BM25 in SQL: `bm25.rs`); vector recall is pgvector (an HNSW index per
//! dimension, searched with iterative scans so a tenant's filter still fills the page). As
//! the embedded index does, it returns raw features only; ranking stays in core.
//!
//! Every row carries its tenant and every query filters by it, BM25's statistics included, so
//! no tenant's words change how another's rank.
//!
//! - `schema.rs`: the tables and indexes, made on first use (they need the `vector` extension).
//! - `apply.rs`: the port's updates: add, forget, restate, the generation.
//! - `text.rs`: a query's words as a `tsquery`, the names of who spoke.
//! - `vectors.rs`: nearest messages, each borrowing from the similarity of its neighbours.
//! - `episodes.rs`, `turns.rs`: the port's two queries.

mod apply;
mod bm25;
mod episodes;
mod schema;
mod text;
mod turns;
mod vectors;

use std::{
    collections::{HashMap, HashSet},
    sync::Mutex,
};

use epimem_core::recall::{Borrow, EpisodeCandidates, RankingConfig, TurnTable};
use epimem_search::{EpisodeQuery, Search, SearchError, TurnQuery, Update, WordVectors};
use epimem_store::StoreError;

use crate::{
    PostgresStore,
    connection::{self, Access, Failure, Manager, Tx},
};

/// A [`Search`] index in the PostgreSQL database of a [`PostgresStore`].
pub struct PostgresSearch {
    pool: r2d2::Pool<Manager>,
    borrow: Borrow,
    /// The embedder the vectors come from (`none` without one).
    fingerprint: String,
    /// Dimensions whose HNSW index this process has made sure of.
    dimensions: Mutex<HashSet<usize>>,
    /// Word vectors for soft word matching, from the caller's embedder (one per process).
    words: Mutex<HashMap<String, Vec<f32>>>,
    /// The open tail's lines as PostgreSQL's text search made their words (one per process).
    tail_words: epimem_search::TailWords,
}

impl std::fmt::Debug for PostgresSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresSearch").field("borrow", &self.borrow).finish_non_exhaustive()
    }
}

/// The search tables that hold text or vectors (rewritten by the store's `compact`).
pub(crate) const TEXT_TABLES: [&str; 5] =
    ["search_lines", "search_vectors", "search_episodes", "search_authors", "search_terms"];

/// Word vectors kept at most; past it the cache starts again (a vocabulary that large is
/// rare, and a word's vector is only ever asked for again).
const MAX_WORD_VECTORS: usize = 200_000;

impl PostgresStore {
    /// The search index in this store's database, its tables made if they are missing, for
    /// vectors from the embedder `fingerprint` names (`None` without one; a tenant indexed
    /// with another is refused until it is discarded and built again). Fails, saying so, when the server has no `vector`
    /// extension to create.
    pub fn search(
        &self,
        ranking: &RankingConfig,
        fingerprint: Option<&str>,
    ) -> Result<PostgresSearch, StoreError> {
        let borrow = Borrow::of(ranking);
        let search = PostgresSearch {
            pool: self.pool.clone(),
            borrow,
            fingerprint: fingerprint.unwrap_or("none").to_owned(),
            dimensions: Mutex::default(),
            words: Mutex::default(),
            tail_words: Default::default(),
        };
        search.run(Access::Write, schema::create).map_err(|e| match e {
            SearchError::Unavailable(m) => StoreError::Unavailable(m),
            e => StoreError::Internal(format!(
                "{e} (search in PostgreSQL needs the pgvector extension: install it on the \
                 server, or set search.backend = \"local\")"
            )),
        })?;
        Ok(search)
    }
}

impl PostgresSearch {
    /// Runs `f` in a transaction on a pooled connection (see `connection::run`).
    fn run<T>(
        &self,
        access: Access,
        f: impl FnMut(&mut Tx<'_>) -> Result<T, Failure>,
    ) -> Result<T, SearchError> {
        let mut conn = self.pool.get().map_err(|e| SearchError::Unavailable(e.to_string()))?;
        connection::run(&mut conn, access, f).map_err(search_error)
    }
}

/// A store failure as the search port says it: an unreachable server is unavailable, the
/// rest is the index's.
fn search_error(e: StoreError) -> SearchError {
    match e {
        StoreError::Unavailable(m) => SearchError::Unavailable(m),
        e => SearchError::Index(e.to_string()),
    }
}

impl Search for PostgresSearch {
    fn generation(&self, tenant: &str) -> Result<u64, SearchError> {
        let Some(state) = self.run(Access::Read, |tx| apply::state(tx, tenant))? else {
            return Ok(0);
        };
        // The index is every process's: one that cannot read it as it is must not drop it for
        // all the others, so it is told, and `reindex` builds it again on purpose.
        if state.fingerprint != self.fingerprint {
            // Vectors of another embedder cannot be compared with this one's.
            return Err(SearchError::Index(format!(
                "tenant {tenant}'s search index in the database holds vectors of {}, and this \
                 process embeds with {}: run it with the embedder the servers use, or `epimem \
                 reindex` to build the index again with this one",
                state.fingerprint, self.fingerprint
            )));
        }
        if state.format < apply::FORMAT {
            return Err(SearchError::Index(format!(
                "tenant {tenant}'s search index in the database was written by an earlier \
                 version of epimem (rows of format {}, this version reads {}): run `epimem \
                 reindex` once to build it again",
                state.format,
                apply::FORMAT
            )));
        }
        Ok(state.generation)
    }

    fn apply(&self, tenant: &str, update: &Update<'_>) -> Result<(), SearchError> {
        self.ensure_dimensions(update)?;
        self.run(Access::Write, |tx| apply::apply(tx, tenant, update, &self.fingerprint))
    }

    fn discard(&self, tenant: &str) -> Result<(), SearchError> {
        self.run(Access::Write, |tx| apply::discard(tx, tenant))
    }

    fn episodes(&self, query: &EpisodeQuery<'_>) -> Result<EpisodeCandidates, SearchError> {
        self.run(Access::Read, |tx| episodes::candidates(tx, query, self.borrow))
    }

    fn turns(
        &self,
        query: &TurnQuery<'_>,
        words: Option<&dyn WordVectors>,
    ) -> Result<TurnTable, SearchError> {
        let mut table = self
            .run(Access::Read, |tx| turns::candidates(tx, query, self.borrow, &self.tail_words))?;
        if query.word_match
            && let Some(words) = words
        {
            self.score_words(query, &mut table, words)?;
        }
        Ok(table.table)
    }

    fn embedding_text(&self, tenant: &str, text: &str) -> Result<String, SearchError> {
        let names = self.run(Access::Read, |tx| text::Names::of(tx, tenant))?;
        Ok(names.without_names(text))
    }

    fn read_names(
        &self,
        tenant: &str,
        text: &str,
        tail: &[epimem_search::TailLine<'_>],
    ) -> Result<Vec<epimem_core::recall::NameReading>, SearchError> {
        let ahead = self.run(Access::Read, |tx| text::HeldAhead::of(tx, tenant, text))?;
        epimem_search::read_names(text, tail, &ahead)
    }

    fn vectors(&self) -> usize {
        self.run(Access::Read, |tx| {
            let row = tx.query_one("SELECT count(*) FROM search_vectors", &[])?;
            Ok(row.get::<_, i64>(0).max(0) as usize)
        })
        .unwrap_or(0)
    }
}

impl PostgresSearch {
    /// Makes sure an HNSW index exists for each dimension of the update's vectors; outside
    /// the update's transaction, since making one locks the table against writes.
    fn ensure_dimensions(&self, update: &Update<'_>) -> Result<(), SearchError> {
        let wanted: HashSet<usize> = update
            .added
            .iter()
            .flat_map(|e| &e.lines)
            .filter_map(|l| l.vector.map(<[f32]>::len))
            .collect();
        let known = self.dimensions.lock().map_err(|_| poisoned())?.clone();
        for dim in wanted.difference(&known) {
            self.run(Access::Write, |tx| schema::vector_index(tx, *dim))?;
            self.dimensions.lock().map_err(|_| poisoned())?.insert(*dim);
        }
        Ok(())
    }

    /// Scores the candidate turns by soft word matching (see `turns::Gathered`).
    fn score_words(
        &self,
        query: &TurnQuery<'_>,
        table: &mut turns::Gathered,
        embedder: &dyn WordVectors,
    ) -> Result<(), SearchError> {
        let query_words =
            epimem_core::telling::keyword_list(&table.names.without_names(query.text));
        if query_words.is_empty() {
            return Ok(());
        }
        let mut cache = self.words.lock().map_err(|_| poisoned())?;
        let mut missing: Vec<&str> = Vec::new();
        let mut seen = HashSet::new();
        for word in table.turn_words.iter().flatten().chain(&query_words) {
            if !cache.contains_key(word) && seen.insert(word.as_str()) {
                missing.push(word);
            }
        }
        if !missing.is_empty() {
            if cache.len() + missing.len() > MAX_WORD_VECTORS {
                cache.clear();
            }
            let vectors = embedder.embed_words(&missing)?;
            for (word, vector) in missing.iter().zip(vectors) {
                cache.insert((*word).to_owned(), vector);
            }
        }
        let query_vectors: Vec<&[f32]> =
            query_words.iter().filter_map(|w| cache.get(w)).map(Vec::as_slice).collect();
        for (turn, words) in table.table.turns.iter_mut().zip(&table.turn_words) {
            let line_words = words
                .iter()
                .filter_map(|w| cache.get(w))
                .map(|v| epimem_core::recall::similarities(v, &query_vectors));
            let score = epimem_core::recall::max_sim(query_vectors.len(), line_words);
            turn.words = (score > 0.0).then_some(score);
        }
        Ok(())
    }
}

fn poisoned() -> SearchError {
    SearchError::Index("a thread panicked while holding the search index".into())
}

/// A scope as the parameters of a filter on the search tables' episode columns (conversation,
/// user, agent, start and end, kept on every line too).
pub(super) struct ScopeFilter {
    conversation: Option<String>,
    user: Option<String>,
    agent: Option<String>,
    since: Option<i64>,
    until: Option<i64>,
}

impl ScopeFilter {
    pub(super) fn new(scope: &epimem_core::Scope) -> Self {
        Self {
            conversation: scope.conversation.clone(),
            user: scope.user.clone(),
            agent: scope.agent.clone(),
            since: scope.since.map(|t| t.0),
            until: scope.until.map(|t| t.0),
        }
    }

    /// The filter's SQL, its parameters numbered from `$first` (an episode overlaps the
    /// range: it ends after `since` and starts before `until`).
    pub(super) fn sql(first: usize, table: &str) -> String {
        let p = |i: usize| first + i;
        format!(
            "(${0}::text IS NULL OR {t}.conversation = ${0}) \
             AND (${1}::text IS NULL OR {t}.user_id = ${1}) \
             AND (${2}::text IS NULL OR {t}.agent = ${2}) \
             AND (${3}::bigint IS NULL OR {t}.end_ms >= ${3}) \
             AND (${4}::bigint IS NULL OR {t}.start_ms <= ${4})",
            p(0),
            p(1),
            p(2),
            p(3),
            p(4),
            t = table
        )
    }

    /// The parameters of [`Self::sql`], in order.
    pub(super) fn params(&self) -> [&(dyn postgres::types::ToSql + Sync); 5] {
        [&self.conversation, &self.user, &self.agent, &self.since, &self.until]
    }
}
