//! The search conformance suite on PostgreSQL (full-text search and pgvector), each case in a
//! schema of its own on the test server.

use epimem_core::recall::RankingConfig;
use epimem_store_postgres::{
    PostgresSearch,
    test_support::{TestDatabase, test_database},
};

/// A search index in a fresh schema; the schema goes when it does.
struct Fixture {
    search: PostgresSearch,
    _database: TestDatabase,
}

impl std::ops::Deref for Fixture {
    type Target = PostgresSearch;
    fn deref(&self) -> &PostgresSearch {
        &self.search
    }
}

fn fixture() -> Option<Fixture> {
    let database = test_database()?;
    let search = database.store().search(&RankingConfig::default(), None).expect("search tables");
    Some(Fixture { search, _database: database })
}

epimem_search::conformance_tests!(match fixture() {
    Some(fixture) => fixture,
    None => return,
});

/// An episode of one line.
fn one_line(id: &str, text: &str) -> epimem_core::Episode {
    let conversation = epimem_core::ConversationKey::new("t", "c");
    let at = 1_767_225_600_000;
    let episode = epimem_search::conformance::episode(conversation, (1, 1), (at, at), text);
    epimem_core::Episode { id: epimem_core::EpisodeId(id.into()), ..episode }
}

#[test]
fn an_index_of_another_embedder_is_refused_until_built_again() {
    use epimem_search::{IndexedEpisode, IndexedLine, Search, Update};
    let Some(database) = test_database() else { return };
    let store = database.store();
    let ranking = RankingConfig::default();
    let text = "the zebras crossed the river";
    let episode = one_line("e1", text);
    let vector = [0.6f32, 0.8, 0.0];
    let line = IndexedLine {
        seq: 1,
        role: epimem_core::Role::User,
        author: "user",
        content: text,
        vector: Some(&vector),
    };
    let added = [IndexedEpisode { episode: &episode, lines: vec![line] }];
    let first = store.search(&ranking, Some("model-a")).unwrap();
    first.apply("t", &Update { added: &added, generation: Some(3), ..Update::default() }).unwrap();
    assert_eq!(first.generation("t").unwrap(), 3);
    assert_eq!(first.vectors(), 1);

    // The same model in another process sees the same index.
    let same = store.search(&ranking, Some("model-a")).unwrap();
    assert_eq!(same.generation("t").unwrap(), 3);
    // Another model's process is told, and leaves the index to the others...
    let other = store.search(&ranking, Some("model-b")).unwrap();
    let refused = other.generation("t").unwrap_err().to_string();
    assert!(refused.contains("model-a") && refused.contains("model-b"), "{refused}");
    assert!(refused.contains("reindex"), "{refused}");
    assert_eq!(same.generation("t").unwrap(), 3, "the index is untouched");
    // ...until it is built again on purpose (what `reindex` does: discard, then catch up).
    other.discard("t").unwrap();
    assert_eq!(other.vectors(), 0, "the old vectors are gone");
    other.apply("t", &Update { generation: Some(3), ..Update::default() }).unwrap();
    assert_eq!(other.generation("t").unwrap(), 3);
    assert!(same.generation("t").is_err(), "now the first model is the other one");
    let scope = epimem_core::Scope::tenant("t");
    let query = epimem_search::EpisodeQuery { scope: &scope, text, vector: None, candidates: 5 };
    assert!(other.episodes(&query).unwrap().candidates.is_empty());
}

#[test]
fn forgetting_takes_its_words_out_of_the_statistics() {
    use epimem_search::{IndexedEpisode, IndexedLine, Search, Update};
    let Some(database) = test_database() else { return };
    let search = database.store().search(&RankingConfig::default(), None).unwrap();
    let (zebras, taxes) = ("the zebras crossed the river", "the taxes are due in april");
    let (first, mut second) = (one_line("e1", zebras), one_line("e2", taxes));
    second.first_seq = 2;
    second.last_seq = 2;
    let line = |seq, content| IndexedLine {
        seq,
        role: epimem_core::Role::User,
        author: "user",
        content,
        vector: None,
    };
    let added = [
        IndexedEpisode { episode: &first, lines: vec![line(1, zebras)] },
        IndexedEpisode { episode: &second, lines: vec![line(2, taxes)] },
    ];
    search.apply("t", &Update { added: &added, ..Update::default() }).unwrap();
    let mut client = postgres::Client::connect(&database.url, postgres::NoTls).unwrap();
    let rows = |client: &mut postgres::Client, sql: &str| -> i64 {
        client.query_one(sql, &[]).unwrap().get(0)
    };
    let zebra = "SELECT count(*) FROM search_terms WHERE lexeme = 'zebra'";
    assert_eq!(rows(&mut client, zebra), 2, "a line and an episode hold it");
    let lines = "SELECT rows FROM search_stats WHERE tenant = 't' AND kind = 'line'";
    assert_eq!(rows(&mut client, lines), 2);

    let forgotten = [first.id.clone()];
    search.apply("t", &Update { forgotten: &forgotten, ..Update::default() }).unwrap();
    assert_eq!(rows(&mut client, zebra), 0, "the forgotten word is in no statistic");
    assert_eq!(rows(&mut client, lines), 1);
    let scope = epimem_core::Scope::tenant("t");
    let query =
        epimem_search::EpisodeQuery { scope: &scope, text: taxes, vector: None, candidates: 5 };
    let found = search.episodes(&query).unwrap().candidates;
    assert_eq!(found.len(), 1);
    assert!(found[0].lexical.unwrap().score > 0.0);
}

#[test]
fn an_index_written_before_line_rules_existed_is_refused_until_built_again() {
    use epimem_search::{IndexedEpisode, IndexedLine, Search, Update};
    let Some(database) = test_database() else { return };
    let store = database.store();
    let ranking = RankingConfig::default();
    let text = "Always pin exact versions when I ask about dependencies.";
    let episode = epimem_core::Episode { last_seq: 2, ..one_line("e1", text) };
    let line =
        |seq, role, content| IndexedLine { seq, role, author: "user", content, vector: None };
    let lines = vec![
        line(1, epimem_core::Role::User, text),
        line(2, epimem_core::Role::Assistant, "Noted."),
    ];
    let added = [IndexedEpisode { episode: &episode, lines }];
    let update = Update { added: &added, generation: Some(1), ..Update::default() };
    store.search(&ranking, None).unwrap().apply("t", &update).unwrap();
    // The tables as the version before wrote them: no rule column, no format.
    let mut client = postgres::Client::connect(&database.url, postgres::NoTls).unwrap();
    client
        .batch_execute(
            "ALTER TABLE search_lines DROP COLUMN instructs; \
             ALTER TABLE search_state DROP COLUMN format;",
        )
        .unwrap();

    // This version's process adds what is missing, and says the rows must be built again...
    let search = store.search(&ranking, None).unwrap();
    let refused = search.generation("t").unwrap_err().to_string();
    assert!(refused.contains("earlier version") && refused.contains("reindex"), "{refused}");
    // ...which `reindex` does: discard, then catch up.
    search.discard("t").unwrap();
    search.apply("t", &update).unwrap();
    assert_eq!(search.generation("t").unwrap(), 1);
    let rules: i64 =
        client.query_one("SELECT count(*) FROM search_lines WHERE instructs", &[]).unwrap().get(0);
    assert_eq!(rules, 1);
}
