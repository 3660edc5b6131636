//! The real models, when present (scripts/fetch-models.sh puts them there; CI always does and
//! sets EPIMEM_REQUIRE_MODELS=1 so that their absence fails instead of skipping).

use epimem_embed::{EmbedderName, load_embedder, test_support::fetched_models};

fn models_dir() -> Option<std::path::PathBuf> {
    fetched_models(&[EmbedderName::Potion, EmbedderName::Minilm])
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn real_models_embed_meaningfully() {
    let Some(dir) = models_dir() else { return };
    for (name, dim) in [(EmbedderName::Potion, 256), (EmbedderName::Minilm, 384)] {
        let e = load_embedder(name, &dir).unwrap();
        assert_eq!(e.dim(), dim);
        let v = e
            .embed(&[
                "My tomato seedlings look pale and leggy on the balcony.",
                "The young tomato plants are weak because they get too little sunlight.",
                "Our CI pipeline fails on the payments integration tests.",
                "",
            ])
            .unwrap();
        assert_eq!(v.len(), 4);
        for x in &v[..3] {
            assert_eq!(x.len(), dim);
            assert!((cos(x, x) - 1.0).abs() < 1e-4, "{name}: vectors are unit length");
        }
        assert!(cos(&v[0], &v[1]) > cos(&v[0], &v[2]) + 0.1, "{name}: meaning beats chance");
        // Batching and padding do not change a text's vector.
        let alone = e.embed(&["Our CI pipeline fails on the payments integration tests."]).unwrap();
        assert!(cos(&alone[0], &v[2]) > 0.999, "{name}: batch-independent");
        assert!(e.fingerprint().contains(&dim.to_string()));
    }
}
