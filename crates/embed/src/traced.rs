//! An embedder whose calls are spans, for traces.

use crate::{EmbedError, Embedder};

/// `E` with a GenAI `embeddings` span for each call made within a traced operation.
#[derive(Debug)]
pub struct TracedEmbedder<E> {
    inner: E,
    /// The model's family (`model2vec`, `bert`, `hash`) and name (`potion-base-8M`), from its
    /// fingerprint.
    family: String,
    model: String,
}

impl<E: Embedder> TracedEmbedder<E> {
    pub fn new(inner: E) -> Self {
        let mut parts = inner.fingerprint().split(':');
        let family = parts.next().unwrap_or_default().to_owned();
        let model = match parts.next().filter(|m| !m.is_empty()) {
            // The hashed embedder's second field is its version: no model has a name.
            Some(version) if family == "hash" => format!("hash-{version}"),
            Some(model) => model.to_owned(),
            None => family.clone(),
        };
        Self { inner, family, model }
    }
}

impl<E: Embedder> Embedder for TracedEmbedder<E> {
    fn fingerprint(&self) -> &str {
        self.inner.fingerprint()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if tracing::Span::current().is_none() {
            return self.inner.embed(texts);
        }
        // In this process, so INTERNAL; the provider is the model's family.
        let span = tracing::info_span!(
            "embeddings",
            otel.name = %format_args!("embeddings {}", self.model),
            otel.kind = "internal",
            gen_ai.operation.name = "embeddings",
            gen_ai.provider.name = %self.family,
            gen_ai.request.model = %self.model,
            gen_ai.embeddings.dimension.count = self.inner.dim() as i64,
            epimem.texts = texts.len() as i64,
        );
        span.in_scope(|| self.inner.embed(texts))
    }
}

#[cfg(test)]
mod tests {
    use super::TracedEmbedder;
    use crate::HashEmbedder;

    #[test]
    fn a_span_names_the_model_by_its_fingerprint() {
        let traced = TracedEmbedder::new(HashEmbedder::new(64));
        assert_eq!((traced.family.as_str(), traced.model.as_str()), ("hash", "hash-v1"));
    }
}
