//! Versioned migrations, tracked in the table `epimem_schema`.

use crate::{Failure, Tx};
use epimem_store::StoreError;

/// Each entry moves the schema one version up. Never edit a released entry: append one.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE conversations (
    id                BIGSERIAL PRIMARY KEY,
    tenant            TEXT NOT NULL,
    external_id       TEXT NOT NULL,
    user_id           TEXT,
    agent_id          TEXT,
    last_seq          BIGINT NOT NULL DEFAULT 0,
    watermark         BIGINT NOT NULL DEFAULT 0,
    newest_ts         BIGINT,
    window_doubled    BOOLEAN NOT NULL DEFAULT FALSE,
    fence_job         BIGINT,
    fence_upto        BIGINT,
    fence_since       BIGINT,
    consolidated_upto BIGINT NOT NULL DEFAULT 0,
    UNIQUE (tenant, external_id)
);

CREATE TABLE messages (
    conversation_id BIGINT NOT NULL REFERENCES conversations (id),
    seq             BIGINT NOT NULL,
    key             TEXT NOT NULL,
    role            TEXT NOT NULL,
    speaker         TEXT,
    content         TEXT NOT NULL,
    ts              BIGINT NOT NULL,
    metadata        TEXT,
    tokens          BIGINT NOT NULL,
    PRIMARY KEY (conversation_id, seq),
    UNIQUE (conversation_id, key)
);

CREATE TABLE episodes (
    serial            BIGSERIAL PRIMARY KEY,
    id                TEXT NOT NULL UNIQUE,
    conversation_id   BIGINT NOT NULL REFERENCES conversations (id),
    first_seq         BIGINT NOT NULL,
    last_seq          BIGINT NOT NULL,
    context_first_seq BIGINT,
    start_ts          BIGINT NOT NULL,
    end_ts            BIGINT NOT NULL,
    title             TEXT NOT NULL,
    summary           TEXT NOT NULL,
    keywords          TEXT NOT NULL,
    surprise          DOUBLE PRECISION NOT NULL,
    boundary_reason   TEXT NOT NULL,
    stability         DOUBLE PRECISION,
    difficulty        DOUBLE PRECISION,
    last_review       BIGINT,
    due               BIGINT,
    told_by           TEXT NOT NULL DEFAULT 'fallback',
    told_note         TEXT
);
CREATE INDEX episodes_by_conversation ON episodes (conversation_id, first_seq);
CREATE INDEX episodes_by_start ON episodes (start_ts, id);

CREATE TABLE jobs (
    id          BIGSERIAL PRIMARY KEY,
    payload     JSONB NOT NULL,
    state       TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'failed')),
    attempts    BIGINT NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_until BIGINT,
    last_error  TEXT
);
CREATE INDEX jobs_runnable ON jobs (state, id);
CREATE INDEX jobs_by_conversation ON jobs
    ((payload -> 'conversation' ->> 'tenant'), (payload -> 'conversation' ->> 'conversation'));

CREATE TABLE vector_models (
    id          BIGSERIAL PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE
);

CREATE TABLE message_vectors (
    conversation_id BIGINT NOT NULL REFERENCES conversations (id),
    seq             BIGINT NOT NULL,
    model_id        BIGINT NOT NULL REFERENCES vector_models (id),
    vector          BYTEA NOT NULL,
    PRIMARY KEY (conversation_id, model_id, seq)
);

CREATE TABLE pending_reviews (
    id              BIGSERIAL PRIMARY KEY,
    conversation_id BIGINT NOT NULL REFERENCES conversations (id),
    review          JSONB NOT NULL,
    job_id          BIGINT
);
CREATE INDEX pending_reviews_by_conversation ON pending_reviews (conversation_id, id);
CREATE INDEX pending_reviews_by_job ON pending_reviews (job_id);

-- Every episode closed, forgotten or restated, numbered per tenant in commit order: a
-- transaction that appends holds its tenant's counter row until it commits, so a number is
-- never visible before a smaller one.
CREATE TABLE change_counters (
    tenant TEXT PRIMARY KEY,
    last   BIGINT NOT NULL
);
CREATE TABLE episode_changes (
    tenant     TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    episode_id TEXT NOT NULL,
    forgotten  BOOLEAN NOT NULL DEFAULT FALSE,
    restated   BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (tenant, seq)
);

CREATE TABLE api_keys (
    id      BIGSERIAL PRIMARY KEY,
    tenant  TEXT NOT NULL,
    name    TEXT NOT NULL,
    hash    TEXT NOT NULL UNIQUE,
    created BIGINT NOT NULL,
    revoked BIGINT
);

CREATE TABLE llm_usage (
    tenant            TEXT NOT NULL,
    stage             TEXT NOT NULL,
    calls             BIGINT NOT NULL DEFAULT 0,
    failures          BIGINT NOT NULL DEFAULT 0,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    latency_ms        BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, stage)
);

CREATE TABLE facts (
    id              TEXT PRIMARY KEY,
    conversation_id BIGINT NOT NULL REFERENCES conversations (id),
    text            TEXT NOT NULL,
    valid_at        BIGINT NOT NULL,
    invalid_at      BIGINT,
    reinforced      BIGINT NOT NULL DEFAULT 0,
    fingerprint     TEXT,
    vector          BYTEA
);
CREATE INDEX facts_by_conversation ON facts (conversation_id, valid_at);
CREATE TABLE fact_sources (
    serial     BIGSERIAL,
    fact_id    TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    PRIMARY KEY (fact_id, episode_id)
);
CREATE INDEX fact_sources_by_episode ON fact_sources (episode_id);

CREATE TABLE timeline_nodes (
    tenant   TEXT NOT NULL,
    node     TEXT NOT NULL,
    version  BIGINT NOT NULL,
    summary  TEXT NOT NULL,
    children JSONB NOT NULL,
    PRIMARY KEY (tenant, node, version)
);
CREATE TABLE timeline_marks (
    tenant TEXT NOT NULL,
    node   TEXT NOT NULL,
    PRIMARY KEY (tenant, node)
);
CREATE TABLE timeline_checkpoints (
    tenant  TEXT PRIMARY KEY,
    through BIGINT NOT NULL
);
"#,
    // What an episode's title and summary said before a person edited them.
    r#"
CREATE TABLE episode_versions (
    episode_id TEXT NOT NULL,
    conversation_id BIGINT NOT NULL,
    version BIGINT NOT NULL,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    replaced_at BIGINT NOT NULL,
    PRIMARY KEY (episode_id, version)
);
CREATE INDEX episode_versions_by_conversation ON episode_versions (conversation_id);
"#,
    // The memory state each review left an episode with.
    r#"
CREATE TABLE episode_reviews (
    id BIGSERIAL PRIMARY KEY,
    episode_id TEXT NOT NULL,
    conversation_id BIGINT NOT NULL,
    reviewed_at BIGINT,
    stability DOUBLE PRECISION,
    difficulty DOUBLE PRECISION,
    due BIGINT
);
CREATE INDEX episode_reviews_by_episode ON episode_reviews (episode_id);
CREATE INDEX episode_reviews_by_conversation ON episode_reviews (conversation_id);
"#,
];

/// Any number: the advisory lock that keeps two processes from migrating at once.
const MIGRATION_LOCK: i64 = 0x6570_696d_656d;

/// Brings the schema to the newest version, in one transaction that holds the migration lock.
pub(crate) fn migrate(tx: &mut Tx<'_>) -> Result<(), Failure> {
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch("CREATE TABLE IF NOT EXISTS epimem_schema (version BIGINT NOT NULL)")?;
    let current: i64 = match tx.query_opt("SELECT version FROM epimem_schema", &[])? {
        Some(row) => row.get(0),
        None => {
            tx.execute("INSERT INTO epimem_schema (version) VALUES (0)", &[])?;
            0
        }
    };
    let current = usize::try_from(current).unwrap_or(usize::MAX);
    if current > MIGRATIONS.len() {
        return Err(StoreError::Internal(format!(
            "database schema version {current} is newer than this epimem understands ({}); \
             upgrade epimem",
            MIGRATIONS.len()
        ))
        .into());
    }
    for sql in &MIGRATIONS[current..] {
        tx.batch(sql)?;
    }
    tx.execute("UPDATE epimem_schema SET version = $1", &[&(MIGRATIONS.len() as i64)])?;
    Ok(())
}

/// The schema version this build writes.
pub(crate) fn newest() -> usize {
    MIGRATIONS.len()
}
