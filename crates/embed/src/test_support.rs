//! For the tests of any crate that need the real models (feature `test-support`).

use std::path::PathBuf;

use crate::EmbedderName;

/// The models folder (`EPIMEM_MODELS`, else `~/.cache/epimem/models`) if it holds the models of
/// `names` (scripts/fetch-models.sh puts them there). `None` tells a test to skip, unless
/// `EPIMEM_REQUIRE_MODELS` is set (CI), which makes their absence a failure.
pub fn fetched_models(names: &[EmbedderName]) -> Option<PathBuf> {
    let dir = std::env::var_os("EPIMEM_MODELS").map(PathBuf::from).or_else(|| {
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/epimem/models"))
    })?;
    if names.iter().filter_map(|n| n.folder()).all(|folder| dir.join(folder).is_dir()) {
        return Some(dir);
    }
    assert!(
        std::env::var_os("EPIMEM_REQUIRE_MODELS").is_none(),
        "EPIMEM_REQUIRE_MODELS is set but the models are not in {}",
        dir.display()
    );
    eprintln!("skipping: models not fetched (run scripts/fetch-models.sh)");
    None
}
