//! A model-free embedder: hashed words and character trigrams.

use xxhash_rust::xxh3::xxh3_64;

use crate::{EmbedError, Embedder, normalize};

/// Signed feature hashing of lower-cased words and their character trigrams. Texts that share
/// words point the same way; nothing is learned. Deterministic across runs and machines.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dim: usize,
    fingerprint: String,
}

impl HashEmbedder {
    pub fn new(dim: usize) -> Self {
        let dim = dim.max(8);
        Self { dim, fingerprint: format!("hash:v1:{dim}") }
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dim];
        let mut add = |feature: &[u8], weight: f32| {
            let h = xxh3_64(feature);
            let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
            v[(h % self.dim as u64) as usize] += sign * weight;
        };
        for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            let lower = word.to_lowercase();
            add(lower.as_bytes(), 1.0);
            let padded: Vec<char> = format!(" {lower} ").chars().collect();
            for tri in padded.windows(3) {
                let s: String = tri.iter().collect();
                add(s.as_bytes(), 0.3);
            }
        }
        normalize(&mut v);
        v
    }
}

impl Embedder for HashEmbedder {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn similar_texts_point_the_same_way() {
        let e = HashEmbedder::new(256);
        let v = e.embed(&["tomato garden", "the tomato garden", "guitar chords", ""]).unwrap();
        assert!((cos(&v[0], &v[0]) - 1.0).abs() < 1e-5);
        assert!(cos(&v[0], &v[1]) > cos(&v[0], &v[2]));
        assert!(v[3].iter().all(|&x| x == 0.0));
        assert_eq!(v[0].len(), 256);
        assert_eq!(e.fingerprint(), "hash:v1:256");
    }
}
