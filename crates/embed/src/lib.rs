//! Local text embedders: everything runs on the CPU, nothing touches the network.
//!
//! - [`StaticEmbedder`]: model2vec static embeddings (potion-base-8M, 256-d): a table lookup
//!   and a mean, fast enough to embed every message.
//! - [`BertEmbedder`]: a BERT sentence encoder (all-MiniLM-L6-v2, 384-d) on candle, the
//!   quality option.
//! - [`HashEmbedder`]: hashed words and character trigrams; no model at all. For tests, and as
//!   a last resort.
//!
//! Every embedder has a fingerprint naming the model and its weights: vectors made by different
//! fingerprints live in different spaces and must never be compared.

mod bert;
mod hash;
mod models;
mod static_model;
#[cfg(feature = "test-support")]
pub mod test_support;
mod traced;

pub use bert::BertEmbedder;
pub use hash::HashEmbedder;
pub use models::{EmbedderName, ModelFiles, load_embedder};
pub use static_model::StaticEmbedder;
pub use traced::TracedEmbedder;

/// Turns texts into unit-length vectors.
pub trait Embedder: Send + Sync {
    /// Identifies the model and its weights, e.g. `model2vec:potion-base-8M:256:1f2e…`.
    fn fingerprint(&self) -> &str;
    /// Length of every vector.
    fn dim(&self) -> usize;
    /// One L2-normalized vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

macro_rules! embedder_behind {
    ($pointer:ident) => {
        impl<E: Embedder + ?Sized> Embedder for $pointer<E> {
            fn fingerprint(&self) -> &str {
                (**self).fingerprint()
            }

            fn dim(&self) -> usize {
                (**self).dim()
            }

            fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
                (**self).embed(texts)
            }
        }
    };
}

use std::sync::Arc;
embedder_behind!(Arc);
embedder_behind!(Box);

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// The model's files are not where they were looked for.
    #[error(
        "the {name} model is missing: {path} does not hold {missing}. Fetch it with \
         `python -m epimem fetch-models` (the Python package) or scripts/fetch-models.sh (a \
         checkout), or point --models / EPIMEM_MODELS at a folder holding {name}/, with \
         tokenizer.json, config.json and model.safetensors (upstream: {upstream})"
    )]
    ModelMissing { name: &'static str, path: String, missing: String, upstream: &'static str },
    /// The files are there but unusable.
    #[error("cannot load the {name} model from {path}: {reason}")]
    Load { name: &'static str, path: String, reason: String },
    /// The model failed on some input.
    #[error("embedding failed: {0}")]
    Inference(String),
    #[error("unknown embedder {0:?}: expected potion (static), minilm (bert) or hash")]
    UnknownName(String),
}

/// Scales `v` to unit length (a zero vector stays zero).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}
