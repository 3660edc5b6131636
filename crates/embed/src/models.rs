//! Where models live, and choosing an embedder by name.

use std::{
    fmt,
    path::{Path, PathBuf},
    str::FromStr,
};

use xxhash_rust::xxh3::Xxh3;

use crate::{BertEmbedder, EmbedError, Embedder, HashEmbedder, StaticEmbedder};

/// The embedders epimem knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmbedderName {
    /// model2vec potion-base-8M.
    Potion,
    /// all-MiniLM-L6-v2 on candle.
    Minilm,
    /// Hashed words and trigrams, no model.
    Hash,
}

impl EmbedderName {
    /// The folder, under the models folder, its model files are in (none for `hash`).
    pub fn folder(self) -> Option<&'static str> {
        match self {
            Self::Potion => Some("potion-base-8M"),
            Self::Minilm => Some("all-MiniLM-L6-v2"),
            Self::Hash => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Potion => "potion",
            Self::Minilm => "minilm",
            Self::Hash => "hash",
        }
    }
}

impl fmt::Display for EmbedderName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EmbedderName {
    type Err = EmbedError;

    fn from_str(s: &str) -> Result<Self, EmbedError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "potion" | "static" | "potion-base-8m" | "model2vec" => Ok(Self::Potion),
            "minilm" | "bert" | "all-minilm-l6-v2" => Ok(Self::Minilm),
            "hash" => Ok(Self::Hash),
            _ => Err(EmbedError::UnknownName(s.to_owned())),
        }
    }
}

/// Loads the embedder `name`, with model files under `models_dir/<model folder>/`.
pub fn load_embedder(
    name: EmbedderName,
    models_dir: &Path,
) -> Result<Box<dyn Embedder>, EmbedError> {
    let dir = models_dir.join(name.folder().unwrap_or_default());
    Ok(match name {
        EmbedderName::Potion => Box::new(StaticEmbedder::load(&dir)?),
        EmbedderName::Minilm => Box::new(BertEmbedder::load(&dir)?),
        EmbedderName::Hash => Box::new(HashEmbedder::new(256)),
    })
}

/// The three files of a model folder, checked to exist.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    pub dir: PathBuf,
    pub tokenizer: PathBuf,
    pub config: PathBuf,
    pub weights: PathBuf,
}

impl ModelFiles {
    pub(crate) fn find(
        dir: &Path,
        name: &'static str,
        upstream: &'static str,
    ) -> Result<Self, EmbedError> {
        let files = Self {
            dir: dir.to_owned(),
            tokenizer: dir.join("tokenizer.json"),
            config: dir.join("config.json"),
            weights: dir.join("model.safetensors"),
        };
        let missing: Vec<&str> = [
            (&files.tokenizer, "tokenizer.json"),
            (&files.config, "config.json"),
            (&files.weights, "model.safetensors"),
        ]
        .into_iter()
        .filter(|(p, _)| !p.is_file())
        .map(|(_, n)| n)
        .collect();
        if !missing.is_empty() {
            return Err(EmbedError::ModelMissing {
                name,
                path: dir.display().to_string(),
                missing: missing.join(", "),
                upstream,
            });
        }
        Ok(files)
    }

    /// `kind:folder:dim:hash`, the hash over the weights and tokenizer, so a different copy of
    /// the model (or another model in the same folder) never shares a vector space.
    pub(crate) fn fingerprint(&self, kind: &str, dim: usize) -> Result<String, EmbedError> {
        let mut hasher = Xxh3::new();
        for path in [&self.weights, &self.tokenizer] {
            let bytes = std::fs::read(path).map_err(|e| EmbedError::Load {
                name: "model",
                path: path.display().to_string(),
                reason: e.to_string(),
            })?;
            hasher.update(&bytes);
        }
        let folder =
            self.dir.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        Ok(format!("{kind}:{folder}:{dim}:{:016x}", hasher.digest()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_model_says_how_to_fetch_it() {
        let dir = std::env::temp_dir().join("epimem-no-such-models");
        let err = load_embedder(EmbedderName::Potion, &dir).err().expect("missing model");
        let text = err.to_string();
        assert!(text.contains("scripts/fetch-models.sh"), "{text}");
        assert!(text.contains("python -m epimem fetch-models"), "{text}");
        assert!(text.contains("minishlab/potion-base-8M"), "{text}");
        assert!(text.contains("model.safetensors"), "{text}");
    }

    #[test]
    fn names_parse() {
        assert_eq!("static".parse::<EmbedderName>().unwrap(), EmbedderName::Potion);
        assert_eq!("MiniLM".parse::<EmbedderName>().unwrap(), EmbedderName::Minilm);
        assert!("gpt".parse::<EmbedderName>().is_err());
    }
}
