//! The search tables. They are made on first use rather than by the store's migrations: they
//! need the `vector` extension, and a store without search in the database (the embedded
//! index beside it) must open on a server that lacks it.

use crate::connection::{Failure, Tx};

/// Serializes the statements below across processes (and test schemas: advisory locks are
/// the database's).
const SCHEMA_LOCK: i64 = 0x6570_6d73_6561_7263;

const TABLES: &str = r#"
CREATE TABLE IF NOT EXISTS search_state (
    tenant TEXT PRIMARY KEY,
    generation BIGINT NOT NULL,
    -- The embedder the tenant's message vectors came from ('none' without one).
    fingerprint TEXT NOT NULL,
    -- The shape of the tenant's rows (`apply::FORMAT`): older rows lack what this one reads.
    format INTEGER NOT NULL DEFAULT 1
);
ALTER TABLE search_state ADD COLUMN IF NOT EXISTS format INTEGER NOT NULL DEFAULT 1;
CREATE TABLE IF NOT EXISTS search_episodes (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    conversation TEXT NOT NULL,
    user_id TEXT,
    agent TEXT,
    first_seq BIGINT NOT NULL,
    last_seq BIGINT NOT NULL,
    start_ms BIGINT NOT NULL,
    end_ms BIGINT NOT NULL,
    added BIGSERIAL NOT NULL,
    episode JSONB NOT NULL,
    words TSVECTOR NOT NULL,
    -- Its length for BM25: positions, weighted by label.
    tokens FLOAT8 NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX IF NOT EXISTS search_episodes_words ON search_episodes USING GIN (words);
CREATE INDEX IF NOT EXISTS search_episodes_order
    ON search_episodes (tenant, conversation, first_seq);
CREATE TABLE IF NOT EXISTS search_lines (
    tenant TEXT NOT NULL,
    conversation TEXT NOT NULL,
    seq BIGINT NOT NULL,
    episode TEXT NOT NULL,
    added BIGINT NOT NULL,
    user_id TEXT,
    agent TEXT,
    start_ms BIGINT NOT NULL,
    end_ms BIGINT NOT NULL,
    author TEXT NOT NULL,
    by_person BOOLEAN NOT NULL,
    asks BOOLEAN NOT NULL,
    -- A person's standing rule for later requests (`standing_instructions`).
    instructs BOOLEAN NOT NULL DEFAULT false,
    -- Its episode holds tool output: an agent's lines there are its findings.
    in_work BOOLEAN NOT NULL DEFAULT false,
    content TEXT NOT NULL,
    words TSVECTOR NOT NULL,
    tokens FLOAT8 NOT NULL,
    PRIMARY KEY (tenant, conversation, seq)
);
ALTER TABLE search_lines ADD COLUMN IF NOT EXISTS instructs BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE search_lines ADD COLUMN IF NOT EXISTS in_work BOOLEAN NOT NULL DEFAULT false;
-- The lines' vectors, apart: a lexical search scans the lines that hold a word, and a
-- kilobyte of vector in each row made that scan three times slower.
CREATE TABLE IF NOT EXISTS search_vectors (
    tenant TEXT NOT NULL,
    conversation TEXT NOT NULL,
    seq BIGINT NOT NULL,
    episode TEXT NOT NULL,
    added BIGINT NOT NULL,
    user_id TEXT,
    agent TEXT,
    start_ms BIGINT NOT NULL,
    end_ms BIGINT NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (tenant, conversation, seq)
);
CREATE INDEX IF NOT EXISTS search_vectors_episode ON search_vectors (tenant, episode);
CREATE INDEX IF NOT EXISTS search_lines_words ON search_lines USING GIN (words);
CREATE INDEX IF NOT EXISTS search_lines_episode ON search_lines (tenant, episode);
CREATE INDEX IF NOT EXISTS search_lines_author ON search_lines (tenant, author);
-- BM25's statistics, per tenant and kind of row ('line', 'episode'): how many rows hold each
-- word, and how many rows there are and their total length.
CREATE TABLE IF NOT EXISTS search_terms (
    tenant TEXT NOT NULL,
    kind TEXT NOT NULL,
    lexeme TEXT NOT NULL,
    rows BIGINT NOT NULL,
    PRIMARY KEY (tenant, kind, lexeme)
);
CREATE TABLE IF NOT EXISTS search_stats (
    tenant TEXT NOT NULL,
    kind TEXT NOT NULL,
    rows BIGINT NOT NULL,
    tokens FLOAT8 NOT NULL,
    PRIMARY KEY (tenant, kind)
);
CREATE TABLE IF NOT EXISTS search_authors (
    tenant TEXT NOT NULL,
    author TEXT NOT NULL,
    PRIMARY KEY (tenant, author)
);
"#;

/// The extension and the tables, if they are missing.
pub(super) fn create(tx: &mut Tx<'_>) -> Result<(), Failure> {
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])?;
    // In `public`, where every schema's search path finds it: made in a schema of its own it
    // would go with that schema.
    tx.batch("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")?;
    tx.batch(TABLES)
}

/// An HNSW index over the message vectors of `dim` dimensions. The column holds vectors of
/// any size (one per embedder); each size gets an index of its own on a cast of it, which the
/// queries repeat.
pub(super) fn vector_index(tx: &mut Tx<'_>, dim: usize) -> Result<(), Failure> {
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])?;
    tx.batch(&format!(
        "CREATE INDEX IF NOT EXISTS search_vectors_{dim} ON search_vectors \
         USING hnsw ((embedding::vector({dim})) vector_cosine_ops) \
         WHERE vector_dims(embedding) = {dim}"
    ))
}
