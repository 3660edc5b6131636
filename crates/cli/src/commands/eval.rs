//! `epimem eval`: the harness (`epimem-eval`) on the configured engine and models.

use std::{process::ExitCode, sync::Arc};

use anyhow::Result;
use epimem_engine::{Engine, EngineConfig};
use epimem_eval::{EvalCommand, Setup, Target};
use epimem_llm::ChatModel;

use super::open_engine_on;
use crate::config::{AppConfig, Database};

/// What the harness is handed: this command's configuration.
struct Configured<'a>(&'a AppConfig);

impl Setup for Configured<'_> {
    fn engine_config(&self) -> EngineConfig {
        self.0.engine()
    }

    fn chat_model(&self) -> Result<Option<Arc<dyn ChatModel>>> {
        self.0.chat_model()
    }

    fn embedder_fingerprint(&self) -> Result<String> {
        Ok(self.0.embedder()?.map_or_else(|| "none".to_owned(), |e| e.fingerprint().to_owned()))
    }

    fn open_engine(&self, target: Target<'_>) -> Result<Engine> {
        let database = match target {
            Target::Sqlite(path) => Database::Sqlite(path.to_owned()),
            Target::Postgres(url) => Database::Postgres(url.to_owned()),
        };
        open_engine_on(self.0, &database, true)
    }
}

pub(crate) fn eval(config: &AppConfig, command: &EvalCommand) -> Result<ExitCode> {
    let setup = Configured(config);
    match command {
        EvalCommand::Segmentation(args) => {
            let embedder = config.embedder()?.map(Arc::from);
            epimem_eval::segmentation::run(&setup, embedder, args)
        }
        EvalCommand::Recall(args) => epimem_eval::recall::run(&setup, args),
        EvalCommand::FitSegmenter(args) => {
            let embedder = config.embedder()?.map(Arc::from);
            epimem_eval::fit::run(&setup, embedder, args)
        }
    }
}
