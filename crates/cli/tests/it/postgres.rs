//! Many processes on one PostgreSQL: servers and workers that share the store, and what must
//! hold when they race and when one of them dies mid-job.

use std::{
    collections::{BTreeMap, BTreeSet},
    io::{BufRead, BufReader},
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use epimem_llm::scripted::{ScriptedReply, ScriptedServer};
use epimem_store_postgres::test_support::{TestDatabase, test_database};
use serde_json::Value;

use crate::{common::run_on, serve::message};

const CONVERSATIONS: usize = 50;
const MESSAGES: usize = 12;

/// Short batches so that ingestion queues jobs as it goes, a worker tick every 0.1 s, leases
/// of 2 s (a dead worker's job is taken over quickly) and a language model that takes 0.3 s
/// to fail (so every job holds its lease a while, and is then cut LLM-free); no consolidation,
/// which would only fail.
fn config(llm: &str) -> String {
    format!(
        "[triggers]\nwindow = 4\nwindow_max = 8\nfloor = 2\n\
         [server]\ntick_seconds = 0.1\n[jobs]\nlease_seconds = 2\n\
         [consolidation]\nevery_episodes = 1000000\nflashbulb_surprise = 2.0\n\
         [llm]\nurl = \"{llm}\"\nmodel = \"slow\"\n"
    )
}

fn epimem(db: &TestDatabase, config: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_epimem"));
    command
        .args(["--db", &db.url, "--config", config.to_str().unwrap()])
        .env("EPIMEM_EMBEDDER", "hash")
        .env_remove("EPIMEM_TENANT")
        .env_remove("EPIMEM_LLM_URL")
        .env_remove("EPIMEM_LLM_MODEL");
    command
}

/// A process killed (SIGKILL) when dropped.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `epimem serve` on a free port: the process and its base URL.
fn serve(db: &TestDatabase, config: &Path) -> (Process, String) {
    let mut child = epimem(db, config)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let base = line.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{line:?}");
    (Process(child), base)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().new_agent()
}

fn post(base: &str, path: &str, body: &Value) -> ureq::http::Response<ureq::Body> {
    let call = agent().post(&format!("{base}{path}")).content_type("application/json");
    call.send(body.to_string()).unwrap()
}

fn get(base: &str, path: &str) -> Value {
    let mut response = agent().get(&format!("{base}{path}")).call().unwrap();
    assert_eq!(response.status().as_u16(), 200, "GET {path}");
    serde_json::from_str(&response.body_mut().read_to_string().unwrap()).unwrap()
}

/// Conversation `c`'s message `i`: two sittings an afternoon apart.
fn line(c: usize, i: usize) -> Value {
    let (hour, minute) = if i < MESSAGES / 2 { (9, i) } else { (15, i) };
    let role = if i.is_multiple_of(2) { "user" } else { "assistant" };
    let text = format!("conversation {c} line {i}: about topic {} and plan {}", c % 7, i / 3);
    message(
        &format!("c{c}"),
        &format!("{c}-{i}"),
        role,
        &text,
        &format!("2026-03-{:02}T{hour:02}:{minute:02}:00Z", 1 + c % 28),
    )
}

#[test]
fn servers_and_workers_share_one_postgres_and_a_killed_worker_loses_nothing() {
    let Some(db) = test_database() else { return };
    let llm = ScriptedServer::start([]);
    llm.otherwise(|_| {
        ScriptedReply::Slow(
            Duration::from_millis(300),
            Box::new(ScriptedReply::Status { status: 400, body: "no".into(), retry_after: None }),
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("epimem.toml");
    std::fs::write(&config, self::config(&llm.url())).unwrap();

    let servers: Vec<(Process, String)> = (0..2).map(|_| serve(&db, &config)).collect();
    let mut workers: Vec<Process> = (0..4)
        .map(|_| Process(epimem(&db, &config).arg("worker").stderr(Stdio::null()).spawn().unwrap()))
        .collect();

    // 50 conversations at once, each message to either server.
    std::thread::scope(|scope| {
        for chunk in 0..10 {
            let bases: Vec<&str> = servers.iter().map(|(_, b)| b.as_str()).collect();
            scope.spawn(move || {
                let agent = agent();
                for i in 0..MESSAGES {
                    for c in (chunk..CONVERSATIONS).step_by(10) {
                        let base = bases[(c + i) % 2];
                        let mut response = agent
                            .post(&format!("{base}/v1/messages"))
                            .content_type("application/json")
                            .send(line(c, i).to_string())
                            .unwrap();
                        let body = response.body_mut().read_to_string().unwrap();
                        assert_eq!(response.status().as_u16(), 200, "{body}");
                    }
                }
            });
        }
    });

    // A worker that holds a job's lease dies without a word.
    let base = &servers[0].1;
    let started = Instant::now();
    let (killed, job) = loop {
        assert!(started.elapsed() < Duration::from_secs(60), "no worker ever held a job");
        let jobs = get(base, "/v1/jobs?limit=500");
        let held = jobs["jobs"].as_array().unwrap().iter().find_map(|j| {
            let worker = j["worker"].as_str()?;
            // `pid:N`, or `pid:N@…` where /proc tells the process apart.
            let named = |pid: u32| {
                worker == format!("pid:{pid}") || worker.starts_with(&format!("pid:{pid}@"))
            };
            let at = workers.iter().position(|w| named(w.0.id()))?;
            (j["state"] == "running").then(|| (at, j["id"].as_i64().unwrap()))
        });
        if let Some(found) = held {
            break found;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(workers.remove(killed));

    // Everything closes: the idle trigger (these conversations are long silent) and the dead
    // worker's job, taken over by another (at once: the dead worker was on this machine).
    let started = Instant::now();
    loop {
        let jobs = get(base, "/v1/jobs?limit=500");
        let pending: u64 = (0..CONVERSATIONS)
            .map(|c| get(base, &format!("/v1/conversations/c{c}"))["pending"].as_u64().unwrap())
            .sum();
        if pending == 0 && jobs["jobs"].as_array().unwrap().is_empty() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "still pending: {pending} {jobs}");
        std::thread::sleep(Duration::from_millis(200));
    }

    // Every message in exactly one episode, no episode twice.
    let mut episodes: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    let mut ids = BTreeSet::new();
    let mut cursor = String::new();
    loop {
        let page = get(base, &format!("/v1/episodes?limit=100{cursor}"));
        for e in page["episodes"].as_array().unwrap() {
            assert!(ids.insert(e["id"].as_str().unwrap().to_owned()), "twice: {e}");
            let spans = episodes.entry(e["conversation"].as_str().unwrap().to_owned()).or_default();
            spans.push((e["first_seq"].as_u64().unwrap(), e["last_seq"].as_u64().unwrap()));
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => break,
        }
    }
    assert_eq!(episodes.len(), CONVERSATIONS);
    for (conversation, spans) in &mut episodes {
        spans.sort();
        let mut next = 1;
        for &(first, last) in spans.iter() {
            assert_eq!(first, next, "{conversation}: {spans:?}");
            next = last + 1;
        }
        assert_eq!(next - 1, MESSAGES as u64, "{conversation}: {spans:?}");
    }

    // No job completed twice: each episode closed once in the change log, none parked, and
    // the dead worker's job was finished by another.
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    let twice = client
        .query(
            "SELECT episode_id FROM episode_changes WHERE NOT forgotten AND NOT restated
             GROUP BY episode_id HAVING count(*) > 1",
            &[],
        )
        .unwrap();
    assert!(twice.is_empty(), "{} episodes closed twice", twice.len());
    let closed: i64 = client
        .query_one("SELECT count(*) FROM episode_changes WHERE NOT forgotten AND NOT restated", &[])
        .unwrap()
        .get(0);
    assert_eq!(closed as usize, ids.len());
    let left: i64 = client.query_one("SELECT count(*) FROM jobs", &[]).unwrap().get(0);
    assert_eq!(left, 0, "jobs left, parked ones included");
    let taken_over: i64 =
        client.query_one("SELECT count(*) FROM jobs WHERE id = $1", &[&job]).unwrap().get(0);
    assert_eq!(taken_over, 0, "job {job} of the killed worker was never finished");
}

#[test]
fn a_memory_moves_from_sqlite_to_postgres_and_back_without_loss() {
    let Some(db) = test_database() else { return };
    let dir = tempfile::tempdir().unwrap();
    let run = run_on;
    let first = dir.path().join("first.db");
    let first = first.to_str().unwrap();
    // Two tenants; closed episodes, a forgotten one, pending messages and a timeline.
    for (tenant, conversations) in [("alice", 3), ("bob", 2)] {
        let file = dir.path().join(format!("{tenant}.jsonl"));
        let lines: Vec<String> = (0..conversations)
            .flat_map(|c| (0..MESSAGES).map(move |i| line(c, i).to_string()))
            .collect();
        std::fs::write(&file, lines.join("\n")).unwrap();
        run(first, &["--tenant", tenant, "ingest", "--flush", file.to_str().unwrap()]);
        run(first, &["--tenant", tenant, "timeline"]);
    }
    let episodes = run(first, &["--tenant", "alice", "episodes", "--json"]);
    let episodes: Value = serde_json::from_str(&episodes).unwrap();
    let forgotten = &episodes["episodes"][0];
    run(first, &["--tenant", "alice", "forget", forgotten["id"].as_str().unwrap()]);
    let pending = dir.path().join("pending.jsonl");
    std::fs::write(&pending, line(9, 0).to_string()).unwrap();
    run(first, &["--tenant", "bob", "ingest", pending.to_str().unwrap()]);

    let exported = |target: &str, name: &str| {
        let file = dir.path().join(name);
        run(target, &["export", "--all-tenants", file.to_str().unwrap()]);
        std::fs::read_to_string(file).unwrap()
    };
    let from_sqlite = exported(first, "a.jsonl");
    for kind in ["conversation", "message", "episode", "vector", "timeline_node"] {
        assert!(from_sqlite.contains(&format!("{{\"kind\":\"{kind}\"")), "no {kind} exported");
    }
    run(&db.url, &["import", dir.path().join("a.jsonl").to_str().unwrap()]);
    let from_postgres = exported(&db.url, "b.jsonl");
    assert!(from_sqlite == from_postgres, "PostgreSQL's export differs from SQLite's");
    let back = dir.path().join("back.db");
    run(back.to_str().unwrap(), &["import", dir.path().join("b.jsonl").to_str().unwrap()]);
    assert!(exported(back.to_str().unwrap(), "c.jsonl") == from_sqlite, "the way back differs");

    // What was moved is memory, not only rows: recall finds it on PostgreSQL.
    let recalled = run(&db.url, &["--tenant", "bob", "recall", "topic 1 plan 3", "--json"]);
    assert!(recalled.contains("conversation 1 line"), "{recalled}");
}

/// Where the test schema's tables live in the server's data directory.
pub(crate) fn files(client: &mut postgres::Client) -> Vec<std::path::PathBuf> {
    let data: String = client.query_one("SHOW data_directory", &[]).unwrap().get(0);
    client
        .query(
            "SELECT pg_relation_filepath(c.oid) FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = current_schema() AND pg_relation_filepath(c.oid) IS NOT NULL",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| Path::new(&data).join(r.get::<_, String>(0)))
        .collect()
}

/// The write-ahead log's segments (the test server deletes old ones: `wal_recycle = off`).
pub(crate) fn wal(client: &mut postgres::Client) -> Vec<std::path::PathBuf> {
    let data: String = client.query_one("SHOW data_directory", &[]).unwrap().get(0);
    std::fs::read_dir(Path::new(&data).join("pg_wal"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect()
}

/// How many of `paths` hold `word`.
pub(crate) fn holding(paths: &[std::path::PathBuf], word: &str) -> usize {
    paths
        .iter()
        .filter(|p| {
            let bytes = std::fs::read(p).unwrap_or_default();
            bytes.windows(word.len()).any(|w| w == word.as_bytes())
        })
        .count()
}

#[test]
fn forgotten_text_leaves_postgres_table_files_once_compacted() {
    let Some(db) = test_database() else { return };
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| run_on(&db.url, args);
    let file = dir.path().join("chat.jsonl");
    let lines = [
        message("c", "1", "user", "The vault code is zanzibarquux", "2026-03-01T09:00:00Z"),
        message("c", "2", "assistant", "Noted: zanzibarquux", "2026-03-01T09:01:00Z"),
        message("d", "1", "user", "Water the basil on Sunday", "2026-03-01T09:00:00Z"),
    ];
    std::fs::write(&file, lines.map(|l| l.to_string()).join("\n")).unwrap();
    run(&["ingest", "--flush", file.to_str().unwrap()]);

    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    let holding = |paths: &[std::path::PathBuf]| holding(paths, "zanzibarquux");
    client.batch_execute("CHECKPOINT").unwrap();
    assert!(holding(&files(&mut client)) > 0, "the word is not on disk to begin with");
    assert!(holding(&wal(&mut client)) > 0, "the word is not in the log to begin with");

    run(&["forget", "--conversation", "c"]);
    // A rewrite keeps the rows a transaction open anywhere in the database may still see (the
    // other tests' schemas share it): those go at a later compact, once it has ended.
    for _ in 0..20 {
        run(&["compact"]);
        if holding(&files(&mut client)) == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    assert_eq!(holding(&files(&mut client)), 0, "a table file still holds the forgotten text");
    assert_eq!(holding(&wal(&mut client)), 0, "a log segment still holds the forgotten text");
    let left = run(&["recall", "basil"]);
    assert!(left.contains("Water the basil"), "what was not forgotten stays: {left}");
}

#[test]
fn the_search_index_lives_in_postgres_and_every_process_shares_it() {
    let Some(db) = test_database() else { return };
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| run_on(&db.url, args);
    let file = dir.path().join("chat.jsonl");
    let lines = [
        message("trip", "1", "user", "Book the ferry to Zanzibar for May", "2026-03-01T09:00:00Z"),
        message("trip", "2", "assistant", "Ferry booked for 3 May", "2026-03-01T09:01:00Z"),
        message("home", "1", "user", "Water the basil on Sunday", "2026-03-01T09:00:00Z"),
    ];
    std::fs::write(&file, lines.map(|l| l.to_string()).join("\n")).unwrap();
    // One process closes the episodes, the first recall indexes them in the database...
    run(&["ingest", "--flush", file.to_str().unwrap()]);
    let found = run(&["recall", "ferry to Zanzibar", "--json"]);
    assert!(found.contains("Ferry booked"), "{found}");
    let mut client = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    let count = |client: &mut postgres::Client, sql: &str| -> i64 {
        client.query_one(sql, &[]).unwrap().get(0)
    };
    assert_eq!(count(&mut client, "SELECT count(*) FROM search_lines"), 3);
    assert_eq!(count(&mut client, "SELECT count(*) FROM search_vectors"), 3);
    let generation = "SELECT generation FROM search_state WHERE tenant = 'default'";
    let indexed = count(&mut client, generation);
    assert!(indexed > 0);

    // ...and the next process finds them there, with nothing to catch up.
    let found = run(&["recall", "ferry to Zanzibar", "--json"]);
    assert!(found.contains("Ferry booked"), "{found}");
    assert_eq!(count(&mut client, generation), indexed);
    // The embedded index, filled from the same store, puts the same episode first.
    let local_config = dir.path().join("local.toml");
    std::fs::write(&local_config, "[search]\nbackend = \"local\"\n").unwrap();
    let local =
        run(&["--config", local_config.to_str().unwrap(), "recall", "ferry to Zanzibar", "--json"]);
    let first_id = |out: &str| -> Value {
        serde_json::from_str::<Value>(out).unwrap()["hits"][0]["id"].clone()
    };
    assert_eq!(first_id(&found), first_id(&local));

    // A process with another embedder is told, and leaves the shared index alone...
    let other = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", &db.url, "--embedder", "none", "recall", "ferry"])
        .env_remove("EPIMEM_TENANT")
        .env_remove("EPIMEM_CONFIG")
        .output()
        .unwrap();
    assert!(!other.status.success());
    let said = String::from_utf8_lossy(&other.stderr);
    assert!(said.contains("reindex") && said.contains("hash"), "{said}");
    assert_eq!(count(&mut client, generation), indexed);

    // Reindex builds it again in the database; forgetting takes the lines out of it.
    let rebuilt = run(&["reindex", "--json"]);
    let rebuilt: Value = serde_json::from_str(rebuilt.trim()).unwrap();
    assert_eq!(rebuilt["episodes"], 2, "{rebuilt}");
    assert_eq!(count(&mut client, "SELECT count(*) FROM search_lines"), 3);
    run(&["forget", "--conversation", "trip"]);
    assert_eq!(count(&mut client, "SELECT count(*) FROM search_lines"), 1);
    let left = run(&["recall", "ferry to Zanzibar", "--json"]);
    assert!(!left.contains("Ferry"), "{left}");

    // The database backend on a SQLite file is refused, saying why.
    let database_config = dir.path().join("database.toml");
    std::fs::write(&database_config, "[search]\nbackend = \"database\"\n").unwrap();
    let sqlite = dir.path().join("e.db");
    let out = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", sqlite.to_str().unwrap(), "--config"])
        .arg(&database_config)
        .args(["recall", "ferry"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("needs a PostgreSQL database"), "{said}");
}

#[test]
fn a_message_stored_by_one_server_is_recalled_by_another_at_once() {
    let Some(db) = test_database() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "").unwrap();
    let ((_a, first), (_b, second)) = (serve(&db, &config), serve(&db, &config));
    let said = serde_json::json!({"conversation": "ops", "id": "1", "role": "user",
                                  "content": "The staging certificate expires on the ninth"});
    let stored = post(&first, "/v1/messages", &said);
    assert_eq!(stored.status().as_u16(), 200);
    let recall = |base: &str| -> Value {
        let query = serde_json::json!({"query": "When does the staging certificate expire?",
                                       "budget": 500});
        let mut answer = post(base, "/v1/recall", &query);
        serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap()
    };
    let found = recall(&second);
    assert!(found["context"].as_str().unwrap().contains("on the ninth"), "{found}");
    assert!(found["context"].as_str().unwrap().contains("not yet an episode"), "{found}");
    assert_eq!(get(&second, "/v1/episodes")["episodes"], serde_json::json!([]));
    // Forgotten through one, gone from the other.
    let gone = agent().delete(&format!("{second}/v1/conversations/ops")).call().unwrap();
    assert_eq!(gone.status().as_u16(), 200);
    assert_eq!(recall(&first)["nothing_relevant"], true);
}

/// The recipe of docs/operations.md: a PostgreSQL memory dumped with `pg_dump`, restored with
/// `pg_restore` into a new database, opens with the same contents and recalls.
#[test]
fn a_pg_dump_restored_into_a_new_database_holds_the_same_memory() {
    let Some(source) = test_database() else { return };
    let Some(bin) = std::env::var_os("EPIMEM_TEST_POSTGRES_BIN").map(std::path::PathBuf::from)
    else {
        assert!(
            std::env::var_os("EPIMEM_REQUIRE_POSTGRES").is_none(),
            "EPIMEM_TEST_POSTGRES_BIN is not set"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let lines = dir.path().join("talk.jsonl");
    std::fs::write(
        &lines,
        "{\"conversation\": \"trip\", \"role\": \"user\", \"content\": \"We are moving the offsite to Lisbon in June.\"}\n\
         {\"conversation\": \"trip\", \"role\": \"user\", \"content\": \"Ana is vegetarian, remember it for the dinner.\"}\n",
    )
    .unwrap();
    run_on(&source.url, &["ingest", lines.to_str().unwrap(), "--flush"]);
    let before = run_on(&source.url, &["stats", "--json"]);

    let run = |program: &str, args: &[&str]| {
        let out = Command::new(bin.join(program)).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let dump = dir.path().join("epimem.dump");
    run(
        "pg_dump",
        &[
            "--format=custom",
            "--schema",
            source.schema(),
            "--file",
            dump.to_str().unwrap(),
            source.server(),
        ],
    );
    let target = format!("restored_{}_{}", std::process::id(), source.schema().len());
    run("psql", &[source.server(), "-qc", &format!("DROP DATABASE IF EXISTS {target}")]);
    run("psql", &[source.server(), "-qc", &format!("CREATE DATABASE {target}")]);
    let (base, _) = source.server().rsplit_once('/').unwrap();
    let target_server = format!("{base}/{target}");
    // A dump of one schema leaves the extension out; a whole database's holds it.
    run("psql", &[&target_server, "-qc", "CREATE EXTENSION IF NOT EXISTS vector"]);
    run("pg_restore", &["--dbname", &target_server, dump.to_str().unwrap()]);
    let restored =
        format!("{target_server}?options=-c%20search_path%3D{}%2Cpublic", source.schema());
    assert_eq!(run_on(&restored, &["stats", "--json"]), before);
    let found = run_on(&restored, &["recall", "Who is vegetarian?", "--budget", "200"]);
    assert!(found.contains("Ana is vegetarian"), "{found}");
    run("psql", &[source.server(), "-qc", &format!("DROP DATABASE {target}")]);
}
