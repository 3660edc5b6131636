//! Versioned migrations, tracked in `PRAGMA user_version`.

use rusqlite::Connection;

use crate::map_err;
use epimem_store::StoreError;

/// Each entry moves the schema one version up. Never edit a released entry: append one.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE conversations (
    id             INTEGER PRIMARY KEY,
    tenant         TEXT NOT NULL,
    external_id    TEXT NOT NULL,
    user_id        TEXT,
    agent_id       TEXT,
    last_seq       INTEGER NOT NULL DEFAULT 0,
    watermark      INTEGER NOT NULL DEFAULT 0,
    newest_ts      INTEGER,
    window_doubled INTEGER NOT NULL DEFAULT 0,
    fence_job      INTEGER,
    fence_upto     INTEGER,
    fence_since    INTEGER,
    UNIQUE (tenant, external_id)
);

CREATE TABLE messages (
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    seq             INTEGER NOT NULL,
    key             TEXT NOT NULL,
    role            TEXT NOT NULL,
    speaker         TEXT,
    content         TEXT NOT NULL,
    ts              INTEGER NOT NULL,
    metadata        TEXT,
    tokens          INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, seq),
    UNIQUE (conversation_id, key)
) WITHOUT ROWID;

CREATE TABLE episodes (
    rowid             INTEGER PRIMARY KEY,
    id                TEXT NOT NULL UNIQUE,
    conversation_id   INTEGER NOT NULL REFERENCES conversations (id),
    first_seq         INTEGER NOT NULL,
    last_seq          INTEGER NOT NULL,
    context_first_seq INTEGER,
    start_ts          INTEGER NOT NULL,
    end_ts            INTEGER NOT NULL,
    title             TEXT NOT NULL,
    summary           TEXT NOT NULL,
    keywords          TEXT NOT NULL,
    surprise          REAL NOT NULL,
    boundary_reason   TEXT NOT NULL,
    stability         REAL,
    difficulty        REAL,
    last_review       INTEGER,
    due               INTEGER
);
CREATE INDEX episodes_by_conversation ON episodes (conversation_id, first_seq);

CREATE VIRTUAL TABLE episodes_fts USING fts5 (
    title, summary, body,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TABLE jobs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    payload     TEXT NOT NULL,
    state       TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'failed')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_until INTEGER,
    last_error  TEXT
);
CREATE INDEX jobs_runnable ON jobs (state, id);
"#,
    r#"
CREATE TABLE vector_models (
    id          INTEGER PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE
);

CREATE TABLE message_vectors (
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    seq             INTEGER NOT NULL,
    model_id        INTEGER NOT NULL REFERENCES vector_models (id),
    vector          BLOB NOT NULL,
    PRIMARY KEY (conversation_id, model_id, seq)
) WITHOUT ROWID;
"#,
    r#"
CREATE TABLE pending_reviews (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    review          TEXT NOT NULL
);
CREATE INDEX pending_reviews_by_conversation ON pending_reviews (conversation_id, id);
"#,
    r#"
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    body,
    conversation_id UNINDEXED,
    seq UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO messages_fts (body, conversation_id, seq)
SELECT coalesce(m.speaker, m.role) || ': ' || m.content, m.conversation_id, m.seq
FROM messages m JOIN episodes e
  ON e.conversation_id = m.conversation_id AND m.seq BETWEEN e.first_seq AND e.last_seq;
"#,
    // Full-text search moved to the engine's in-memory index (top-k BM25 that need not score
    // every match); the store keeps only the rows it is built from.
    r#"
DROP TABLE messages_fts;
DROP TABLE episodes_fts;
"#,
    // Every episode closed or forgotten, in order, per tenant: what search indexes (in this
    // process or any other) catch up from.
    r#"
CREATE TABLE episode_changes (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant     TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    forgotten  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX episode_changes_by_tenant ON episode_changes (tenant, seq);
INSERT INTO episode_changes (tenant, episode_id)
SELECT c.tenant, e.id FROM episodes e JOIN conversations c ON c.id = e.conversation_id
ORDER BY e.rowid;
"#,
    // API keys, by the SHA-256 of the key: the key itself is shown once and never stored.
    r#"
CREATE TABLE api_keys (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant  TEXT NOT NULL,
    name    TEXT NOT NULL,
    hash    TEXT NOT NULL UNIQUE,
    created INTEGER NOT NULL,
    revoked INTEGER
);
"#,
    // Episodes are listed newest first, a page at a time.
    r#"
CREATE INDEX episodes_by_start ON episodes (start_ts, id);
"#,
    // What calls to a language model cost, per tenant and stage (accounting, not memory: no
    // text, and it outlives a forgotten tenant as its API keys do).
    r#"
CREATE TABLE llm_usage (
    tenant            TEXT NOT NULL,
    stage             TEXT NOT NULL,
    calls             INTEGER NOT NULL DEFAULT 0,
    failures          INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    latency_ms        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, stage)
);
"#,
    // Memory review: recalls held for the review job that takes them (NULL: still pending),
    // and changes of an episode's memory strength in the change log, for the search indexes.
    r#"
ALTER TABLE pending_reviews ADD COLUMN job_id INTEGER;
CREATE INDEX pending_reviews_by_job ON pending_reviews (job_id);
ALTER TABLE episode_changes ADD COLUMN restated INTEGER NOT NULL DEFAULT 0;
"#,
    // Facts distilled from episodes, with the episodes they came from; how far each
    // conversation is consolidated.
    r#"
ALTER TABLE conversations ADD COLUMN consolidated_upto INTEGER NOT NULL DEFAULT 0;
CREATE TABLE facts (
    id              TEXT PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    text            TEXT NOT NULL,
    valid_at        INTEGER NOT NULL,
    invalid_at      INTEGER,
    reinforced      INTEGER NOT NULL DEFAULT 0,
    fingerprint     TEXT,
    vector          BLOB
);
CREATE INDEX facts_by_conversation ON facts (conversation_id, valid_at);
CREATE TABLE fact_sources (
    fact_id    TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    PRIMARY KEY (fact_id, episode_id)
);
CREATE INDEX fact_sources_by_episode ON fact_sources (episode_id);
"#,
    // Which path cut and told each episode (the language model or the LLM-free one), and why.
    r#"
ALTER TABLE episodes ADD COLUMN told_by TEXT NOT NULL DEFAULT 'fallback';
ALTER TABLE episodes ADD COLUMN told_note TEXT;
"#,
    // The timeline: versioned nodes per tenant, the nodes waiting for a rollup, and how far the
    // timeline has taken in the change log.
    r#"
CREATE TABLE timeline_nodes (
    tenant   TEXT NOT NULL,
    node     TEXT NOT NULL,
    version  INTEGER NOT NULL,
    summary  TEXT NOT NULL,
    children TEXT NOT NULL,
    PRIMARY KEY (tenant, node, version)
);
CREATE TABLE timeline_marks (
    tenant TEXT NOT NULL,
    node   TEXT NOT NULL,
    PRIMARY KEY (tenant, node)
);
CREATE TABLE timeline_checkpoints (
    tenant  TEXT PRIMARY KEY,
    through INTEGER NOT NULL
);
"#,
    // What an episode's title and summary said before a person edited them.
    r#"
CREATE TABLE episode_versions (
    episode_id      TEXT NOT NULL,
    conversation_id INTEGER NOT NULL,
    version         INTEGER NOT NULL,
    title           TEXT NOT NULL,
    summary         TEXT NOT NULL,
    replaced_at     INTEGER NOT NULL,
    PRIMARY KEY (episode_id, version)
);
CREATE INDEX episode_versions_by_conversation ON episode_versions (conversation_id);
"#,
    // The memory state each review left an episode with.
    r#"
CREATE TABLE episode_reviews (
    episode_id      TEXT NOT NULL,
    conversation_id INTEGER NOT NULL,
    reviewed_at     INTEGER,
    stability       REAL,
    difficulty      REAL,
    due             INTEGER
);
CREATE INDEX episode_reviews_by_episode ON episode_reviews (episode_id);
CREATE INDEX episode_reviews_by_conversation ON episode_reviews (conversation_id);
"#,
];

/// Brings the schema to the newest version, one transaction per step.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let current: usize =
        conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(map_err)?;
    if current > MIGRATIONS.len() {
        return Err(StoreError::Internal(format!(
            "database schema version {current} is newer than this epimem understands ({}); \
             upgrade epimem",
            MIGRATIONS.len()
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current) {
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(map_err)?;
        // Another process may have migrated while we waited for the lock.
        let now: usize = tx.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(map_err)?;
        if now > i {
            continue;
        }
        tx.execute_batch(sql).map_err(map_err)?;
        tx.pragma_update(None, "user_version", i + 1).map_err(map_err)?;
        tx.commit().map_err(map_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrating_twice_is_a_no_op_and_future_schemas_are_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        migrate(&mut conn).unwrap();
        let v: usize = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(v, MIGRATIONS.len());
        conn.pragma_update(None, "user_version", 99).unwrap();
        let err = migrate(&mut conn).unwrap_err();
        assert!(err.to_string().contains("newer"), "{err}");
    }
}
