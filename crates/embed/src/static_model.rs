//! model2vec static embeddings.

use std::path::Path;

use model2vec_rs::model::StaticModel;

use crate::{EmbedError, Embedder, ModelFiles};

const NAME: &str = "potion-base-8M";
const UPSTREAM: &str = "https://huggingface.co/minishlab/potion-base-8M";

/// A model2vec model: token vectors averaged, normalized.
#[derive(Debug)]
pub struct StaticEmbedder {
    model: StaticModel,
    fingerprint: String,
}

impl StaticEmbedder {
    /// Loads the model in `dir` (tokenizer.json, config.json, model.safetensors).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let files = ModelFiles::find(dir, NAME, UPSTREAM)?;
        let model =
            StaticModel::from_pretrained(&files.dir, None, Some(true), None).map_err(|e| {
                EmbedError::Load {
                    name: NAME,
                    path: dir.display().to_string(),
                    reason: format!("{e:#}"),
                }
            })?;
        let fingerprint = files.fingerprint("model2vec", model.dim())?;
        Ok(Self { model, fingerprint })
    }
}

impl Embedder for StaticEmbedder {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        self.model.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let owned: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
        let mut out = self.model.encode_with_args(&owned, Some(512), 1024);
        // model2vec leaves empty texts as zero vectors; normalize defensively either way.
        out.iter_mut().for_each(|v| crate::normalize(v));
        Ok(out)
    }
}
