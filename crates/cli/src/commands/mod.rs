//! One module per group of subcommands.

pub(crate) mod backfill;
pub(crate) mod demo;
pub(crate) mod edit;
pub(crate) mod facts;
pub(crate) mod hook;
pub(crate) mod import_from;
pub(crate) mod ingest;
pub(crate) mod keys;
pub(crate) mod mcp;
pub(crate) mod next_turn;
pub(crate) mod query;
pub(crate) mod reindex;
pub(crate) mod retell;
pub(crate) mod serve;
pub(crate) mod timeline;
pub(crate) mod transfer;
pub(crate) mod worker;

pub(crate) use epimem_app::{
    STOP_WAIT, SearchIndex, Searching, beside_this, hook_program, load_index, open_memory, open_on,
    open_searching, open_serving, open_with_embedder, search_folder, worker_report,
};
