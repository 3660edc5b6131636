//! Prompts that no memory answers: first prompts of new tasks (MT-Bench's and Vicuna-bench's),
//! asked in a memory built from another set. A good block is empty for nearly all of them.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

/// One prompt's text (its id, source and kind of task are not read).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Prompt {
    pub(crate) prompt: String,
}

/// Reads one `{id, source, category, prompt}` a line.
pub(crate) fn load(path: &Path) -> Result<Vec<Prompt>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut prompts = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let prompt: Prompt = serde_json::from_str(line)
            .with_context(|| format!("{} line {}", path.display(), i + 1))?;
        if prompt.prompt.trim().is_empty() {
            bail!("{} line {}: the prompt is empty", path.display(), i + 1);
        }
        prompts.push(prompt);
    }
    if prompts.is_empty() {
        bail!("{} holds no prompts", path.display());
    }
    Ok(prompts)
}
