//! `--online`: the data sets replayed through the engine's ingest path, as an agent would send
//! them, and scored on the episodes the store ends up with.
//!
//! Offline, the segmenter sees a whole dialogue at once. Online it sees what the triggers hand
//! it: a window of pending messages (20 by default, doubled to 40 once a window held one
//! topic), of which the last segment stays open for the next window, with the closed
//! messages before it as context. Users get the online cuts, so that is the figure that counts.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use epimem_api::{Engine, FixedClock, Memory, MessageInput};
use epimem_core::{ConversationKey, LlmUsage, Scope, Timestamp};
use epimem_embed::Embedder;
use epimem_llm::ChatModel;
use epimem_search_local::LocalSearch;
use epimem_store_sqlite::SqliteStore;
use indicatif::ProgressBar;

use super::data::Dialogue;
use epimem_app::config::AppConfig;

/// The data sets carry no times: utterances this far apart, as offline.
pub(super) const UTTERANCE_SPACING_MS: i64 = 30_000;

const TENANT: &str = "eval-online";

/// One dialogue after its replay.
#[derive(Debug)]
pub(super) struct Replayed {
    /// Indices of the utterances that open an episode, the first excluded.
    pub(super) boundaries: Vec<usize>,
    /// Ingest, segmentation (embedding included) and flush of the whole dialogue.
    pub(super) took: Duration,
}

/// Each dialogue's episodes as the store holds them after every utterance was ingested one at
/// a time and the conversation was flushed.
/// With `chat`, the language model cuts (consolidation, which would only add calls, is off);
/// what its calls cost is returned beside the dialogues.
pub(super) fn replay(
    config: &AppConfig,
    embedder: Option<Arc<dyn Embedder>>,
    chat: Option<Arc<dyn ChatModel>>,
    dialogues: &[Dialogue],
    progress: &ProgressBar,
) -> Result<(Vec<Replayed>, LlmUsage)> {
    let mut engine_config = config.engine();
    engine_config.consolidation.every_episodes = u32::MAX;
    engine_config.consolidation.flashbulb_surprise = f64::INFINITY;
    let search = Box::new(LocalSearch::in_memory(&engine_config.ranking));
    let store = SqliteStore::open_in_memory().context("cannot open an in-memory database")?;
    let clock = Box::new(FixedClock::new(Timestamp(0)));
    let mut engine =
        Engine::new(std::sync::Arc::new(store), search, engine_config, clock, "eval-online".into());
    if let Some(e) = embedder {
        engine = engine.with_embedder(Box::new(e));
    }
    if let Some(chat) = chat {
        engine = engine.with_chat_model(chat);
    }
    let memory = Memory::new(engine);
    let mut all = Vec::with_capacity(dialogues.len());
    for (index, d) in dialogues.iter().enumerate() {
        // Dialogue ids need not be unique across splits: the position is.
        let conversation = format!("{index}:{}", d.id);
        let started = Instant::now();
        let boundaries = replay_one(&memory, &conversation, d)
            .with_context(|| format!("replaying dialogue {}", d.id))?;
        all.push(Replayed { boundaries, took: started.elapsed() });
        progress.inc(1);
    }
    let mut usage = LlmUsage::default();
    for (_, stage) in memory.llm_usage(Some(TENANT))? {
        usage.add(stage);
    }
    Ok((all, usage))
}

fn replay_one(memory: &Memory, conversation: &str, d: &Dialogue) -> Result<Vec<usize>> {
    let key = ConversationKey::new(TENANT, conversation);
    for (i, (role, text)) in d.utterances.iter().enumerate() {
        memory.ingest(vec![MessageInput {
            conversation: key.clone(),
            user: None,
            agent: None,
            key: format!("u{i}"),
            role: *role,
            speaker: None,
            content: text.clone(),
            timestamp: Some(d.time(i)),
            metadata: serde_json::Value::Null,
        }])?;
    }
    let scope = Scope::tenant(TENANT).with_conversation(Some(conversation.to_owned()));
    memory.flush_now(&scope)?;
    let episodes = memory.measure().episodes(&scope, None)?;
    let closed: usize = episodes.iter().map(|e| (e.last_seq - e.first_seq + 1) as usize).sum();
    anyhow::ensure!(
        closed == d.utterances.len(),
        "{} of {} utterances ended in an episode",
        closed,
        d.utterances.len()
    );
    // Sequence numbers start at 1; an utterance's index is one less.
    let mut starts: Vec<usize> = episodes.iter().map(|e| e.first_seq as usize - 1).collect();
    starts.sort_unstable();
    starts.retain(|&s| s > 0);
    Ok(starts)
}
