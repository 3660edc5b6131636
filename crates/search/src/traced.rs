//! An index whose queries and updates are spans, for traces.

use epimem_core::recall::{EpisodeCandidates, NameReading, TurnTable};

use crate::{EpisodeQuery, Search, SearchError, TailLine, TurnQuery, Update, WordVectors};

/// `S` with a span for each query (a GenAI retrieval, from the data source `episodes` or
/// `lines`) and each update. A call outside a traced operation opens none.
#[derive(Debug)]
pub struct TracedSearch<S> {
    inner: S,
    /// What the index is (`local`, `postgresql`): `epimem.index` on every span.
    kind: &'static str,
}

impl<S> TracedSearch<S> {
    pub fn new(inner: S, kind: &'static str) -> Self {
        Self { inner, kind }
    }

    fn span(&self, name: &'static str, data_source: Option<&'static str>) -> tracing::Span {
        if tracing::Span::current().is_none() {
            return tracing::Span::none();
        }
        match data_source {
            Some(source) => tracing::info_span!(
                "index",
                otel.name = %format_args!("retrieval {source}"),
                otel.kind = "internal",
                gen_ai.operation.name = "retrieval",
                gen_ai.data_source.id = source,
                gen_ai.retrieval.query.text = tracing::field::Empty,
                epimem.index = self.kind,
                epimem.candidates = tracing::field::Empty,
            ),
            None => tracing::info_span!(
                "index",
                otel.name = %format_args!("index {name}"),
                otel.kind = "internal",
                epimem.index = self.kind,
            ),
        }
    }
}

impl<S: Search> Search for TracedSearch<S> {
    fn generation(&self, tenant: &str) -> Result<u64, SearchError> {
        self.inner.generation(tenant)
    }
    fn apply(&self, tenant: &str, update: &Update<'_>) -> Result<(), SearchError> {
        let _span = self.span("apply", None).entered();
        self.inner.apply(tenant, update)
    }
    fn discard(&self, tenant: &str) -> Result<(), SearchError> {
        let _span = self.span("discard", None).entered();
        self.inner.discard(tenant)
    }
    fn started_again(&self, tenant: &str) -> Result<Option<String>, SearchError> {
        self.inner.started_again(tenant)
    }
    fn held_elsewhere(&self, tenant: &str) -> Result<bool, SearchError> {
        self.inner.held_elsewhere(tenant)
    }
    fn adopt(&self, tenant: &str) -> Result<bool, SearchError> {
        let _span = self.span("adopt", None).entered();
        self.inner.adopt(tenant)
    }
    fn settle(&self, tenant: &str) -> Result<(), SearchError> {
        let _span = self.span("settle", None).entered();
        self.inner.settle(tenant)
    }
    fn verify(&self, tenant: &str) -> Result<(), SearchError> {
        let _span = self.span("verify", None).entered();
        self.inner.verify(tenant)
    }
    fn episodes(&self, query: &EpisodeQuery<'_>) -> Result<EpisodeCandidates, SearchError> {
        let span = self.span("episodes", Some("episodes"));
        span.record("gen_ai.retrieval.query.text", query.text);
        let found = span.in_scope(|| self.inner.episodes(query))?;
        span.record("epimem.candidates", found.candidates.len() as i64);
        Ok(found)
    }
    fn turns(
        &self,
        query: &TurnQuery<'_>,
        words: Option<&dyn WordVectors>,
    ) -> Result<TurnTable, SearchError> {
        let span = self.span("turns", Some("lines"));
        span.record("gen_ai.retrieval.query.text", query.text);
        let found = span.in_scope(|| self.inner.turns(query, words))?;
        span.record("epimem.candidates", found.turns.len() as i64);
        Ok(found)
    }
    fn embedding_text(&self, tenant: &str, text: &str) -> Result<String, SearchError> {
        self.inner.embedding_text(tenant, text)
    }
    fn read_names(
        &self,
        tenant: &str,
        text: &str,
        tail: &[TailLine<'_>],
    ) -> Result<Vec<NameReading>, SearchError> {
        let _span = self.span("read_names", None).entered();
        self.inner.read_names(tenant, text, tail)
    }
    fn vectors(&self) -> usize {
        self.inner.vectors()
    }
}
