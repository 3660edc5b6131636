//! `reindex`: building a tenant's search index again from the database.

use std::{process::ExitCode, time::Instant};

use anyhow::{Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::{SearchIndex, Searching, open_searching, search_folder};
use crate::{
    config::{AppConfig, Database},
    output::json_line,
};

#[derive(Debug, Args)]
#[command(after_help = "The search index is saved beside the database (FILE.search) and keeps \
itself current: it catches up with what any process stored or forgot since it last ran, and is \
built again by itself when it is missing, damaged or was built with another embedder. Reindex \
does that rebuild now, with a progress bar, so that the next recall does not wait for it. On \
PostgreSQL the index is in the database (search.backend = \"auto\" or \"database\"), shared by \
every server and worker; reindex builds the tenant's again there.")]
pub(crate) struct ReindexArgs {
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn reindex(config: &AppConfig, args: &ReindexArgs) -> Result<ExitCode> {
    let database = config.database()?;
    let Searching { memory, search } = open_searching(config, &database)?;
    match (&search, &database) {
        (SearchIndex::Local(search), Database::Sqlite(path)) => {
            if !search.on_disk(&config.tenant)? {
                bail!(
                    "another process holds the search index in {}: stop it, then reindex",
                    search_folder(path).display()
                );
            }
        }
        (SearchIndex::Local(_), Database::Postgres(_)) => bail!(
            "{database} has no saved search index to build with search.backend = \"local\": \
             each process keeps one in memory, filled from the database when it first searches"
        ),
        // Servers keep answering meanwhile, from what is indexed so far.
        (SearchIndex::Database(_), _) => {}
    }
    let started = Instant::now();
    let bar = if args.json { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} indexing [{bar:30}] {pos}/{len} changes ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut changes = 0;
    memory.reindex(&config.tenant, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
        changes = total;
    })?;
    bar.finish_and_clear();
    let stats = memory.counts(Some(&config.tenant))?;
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let out = serde_json::json!({
            "tenant": config.tenant,
            "episodes": stats.episodes,
            "vectors": memory.indexed_vectors(),
            "changes": changes,
            "seconds": seconds,
        });
        outln!("{}", json_line(&out));
    } else {
        outln!(
            "indexed {} episode(s) and {} message vector(s) of tenant {} in {seconds:.1} s",
            stats.episodes,
            memory.indexed_vectors(),
            config.tenant
        );
    }
    Ok(ExitCode::SUCCESS)
}
