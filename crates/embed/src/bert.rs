//! A BERT sentence encoder on candle: mean pooling over the last hidden state, normalized.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::{EmbedError, Embedder, ModelFiles, normalize};

const NAME: &str = "all-MiniLM-L6-v2";
const UPSTREAM: &str = "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2";
/// all-MiniLM-L6-v2 was trained on inputs of at most 256 word pieces.
const MAX_TOKENS: usize = 256;
const BATCH: usize = 32;

pub struct BertEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    dim: usize,
    fingerprint: String,
}

impl std::fmt::Debug for BertEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertEmbedder").field("fingerprint", &self.fingerprint).finish()
    }
}

impl BertEmbedder {
    /// Loads the model in `dir` (tokenizer.json, config.json, model.safetensors).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let files = ModelFiles::find(dir, NAME, UPSTREAM)?;
        let fail = |reason: String| EmbedError::Load {
            name: NAME,
            path: dir.display().to_string(),
            reason,
        };
        let config: Config =
            std::fs::read_to_string(&files.config).map_err(|e| fail(e.to_string())).and_then(
                |s| serde_json::from_str(&s).map_err(|e| fail(format!("config.json: {e}"))),
            )?;
        let mut tokenizer = Tokenizer::from_file(&files.tokenizer)
            .map_err(|e| fail(format!("tokenizer.json: {e}")))?;
        // Pad to the longest input of each batch, not to a fixed length.
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| fail(format!("truncation: {e}")))?;
        // Safety-free loading: the weights are read into memory rather than memory-mapped.
        let weights = std::fs::read(&files.weights).map_err(|e| fail(e.to_string()))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| fail(format!("model.safetensors: {e}")))?;
        let model = BertModel::load(vb, &config).map_err(|e| fail(format!("weights: {e}")))?;
        let dim = config.hidden_size;
        let fingerprint = files.fingerprint("bert", dim)?;
        Ok(Self { model, tokenizer, dim, fingerprint })
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let err = |e: &dyn std::fmt::Display| EmbedError::Inference(e.to_string());
        let encodings = self.tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| err(&e))?;
        let len = encodings.first().map_or(0, |e| e.get_ids().len());
        let rows = encodings.len();
        let mut ids = Vec::with_capacity(rows * len);
        let mut mask = Vec::with_capacity(rows * len);
        for e in &encodings {
            ids.extend(e.get_ids().iter().copied());
            mask.extend(e.get_attention_mask().iter().copied());
        }
        let device = Device::Cpu;
        let ids = Tensor::from_vec(ids, (rows, len), &device).map_err(|e| err(&e))?;
        let mask = Tensor::from_vec(mask, (rows, len), &device).map_err(|e| err(&e))?;
        let types = ids.zeros_like().map_err(|e| err(&e))?;
        let hidden = self.model.forward(&ids, &types, Some(&mask)).map_err(|e| err(&e))?;
        // Mean over the real (unpadded) tokens.
        let mask_f = mask.to_dtype(DType::F32).and_then(|m| m.unsqueeze(2)).map_err(|e| err(&e))?;
        let summed = hidden.broadcast_mul(&mask_f).and_then(|h| h.sum(1)).map_err(|e| err(&e))?;
        let counts = mask_f.sum(1).and_then(|c| c.clamp(1e-9, f64::MAX)).map_err(|e| err(&e))?;
        let pooled = summed.broadcast_div(&counts).map_err(|e| err(&e))?;
        let mut out: Vec<Vec<f32>> = pooled.to_vec2().map_err(|e| err(&e))?;
        out.iter_mut().for_each(|v| normalize(v));
        Ok(out)
    }
}

impl Embedder for BertEmbedder {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Batches of similar length waste little on padding; the order is restored after.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, v) in chunk.iter().zip(self.embed_batch(&batch)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}
