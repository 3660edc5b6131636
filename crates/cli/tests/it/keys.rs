//! API keys and tenants over the server: each key works in its tenant only, a revoked key is
//! refused at once, and a deleted tenant's words are in no file.

use std::{path::Path, process::Command};

use serde_json::{Value, json};

use crate::{
    common,
    serve::{FAST_WORKER, Server, message},
};

/// `epimem keys create` for `tenant`: the key it printed.
pub(crate) fn create_key(db: &Path, tenant: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", db.to_str().unwrap(), "--tenant", tenant, "keys", "create", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let created: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(created["tenant"], tenant);
    created["key"].as_str().unwrap().to_owned()
}

#[test]
fn with_keys_every_request_works_in_its_keys_tenant_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let acme = create_key(&db, "acme");
    let globex = create_key(&db, "globex");
    assert!(acme.starts_with("epm_") && acme.len() == 68 && acme != globex);
    let server = Server::start(&db, FAST_WORKER);

    let body = message(
        "plans",
        "1",
        "user",
        "The zephyrquartz launch moves to June",
        "2026-03-14T09:00:00Z",
    )
    .to_string();
    for key in [None, Some("epm_0000"), Some("not-a-key")] {
        let (status, error) = server.send_as(key, "POST", "/v1/messages", Some(&body));
        assert_eq!(
            (status, error["error"]["code"].as_str()),
            (401, Some("unauthorized")),
            "{key:?}"
        );
    }
    assert_eq!(server.send("GET", "/v1/conversations/plans", None).0, 401);
    // Health and the API's description are public.
    assert_eq!(server.send("GET", "/healthz", None).0, 200);
    assert_eq!(server.send("GET", "/v1/openapi.json", None).0, 200);

    assert_eq!(server.send_as(Some(&acme), "POST", "/v1/messages", Some(&body)).0, 200);
    assert_eq!(server.send_as(Some(&acme), "POST", "/v1/conversations/plans/flush", None).0, 200);
    let query = json!({"query": "zephyrquartz launch"}).to_string();
    let (_, found) = server.send_as(Some(&acme), "POST", "/v1/recall", Some(&query));
    let id = found["hits"][0]["id"].as_str().expect("acme finds its own episode").to_owned();

    // Another tenant finds nothing, lists nothing and cannot read, flush or delete it.
    let (_, found) = server.send_as(Some(&globex), "POST", "/v1/recall", Some(&query));
    assert_eq!(found["hits"], json!([]));
    let (_, listed) = server.send_as(Some(&globex), "GET", "/v1/episodes", None);
    assert_eq!(listed["episodes"], json!([]));
    for (method, path) in [
        ("GET", format!("/v1/episodes/{id}")),
        ("DELETE", format!("/v1/episodes/{id}")),
        ("GET", "/v1/conversations/plans".to_owned()),
        ("DELETE", "/v1/conversations/plans".to_owned()),
    ] {
        let (status, answer) = server.send_as(Some(&globex), method, &path, None);
        assert_eq!(status, 404, "{method} {path}");
        assert!(!answer.to_string().contains("zephyrquartz"), "{answer}");
    }
    assert_eq!(server.send_as(Some(&acme), "GET", &format!("/v1/episodes/{id}"), None).0, 200);

    // A revoked key is refused at once, by the running server.
    let out = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", db.to_str().unwrap(), "keys", "list", "--json"])
        .output()
        .unwrap();
    let listed = crate::common::listed(&out, "keys");
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|k| k.get("key").is_none()), "keys are never shown again");
    let acme_id = listed.iter().find(|k| k["tenant"] == "acme").unwrap()["id"].to_string();
    let revoked = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["--db", db.to_str().unwrap(), "keys", "revoke", &acme_id])
        .status()
        .unwrap();
    assert!(revoked.success());
    assert_eq!(server.send_as(Some(&acme), "POST", "/v1/recall", Some(&query)).0, 401);
    assert_eq!(server.send_as(Some(&globex), "POST", "/v1/recall", Some(&query)).0, 200);
}

#[test]
fn deleting_a_tenant_leaves_its_words_in_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let db = data.join("e.db");
    let (acme, globex) = (create_key(&db, "acme"), create_key(&db, "globex"));
    let server = Server::start(&db, FAST_WORKER);
    let say = |key: &str, conversation: &str, text: &str| {
        let m = message(conversation, "1", "user", text, "2026-03-14T09:00:00Z").to_string();
        assert_eq!(server.send_as(Some(key), "POST", "/v1/messages", Some(&m)).0, 200);
        let flush = format!("/v1/conversations/{conversation}/flush");
        assert_eq!(server.send_as(Some(key), "POST", &flush, None).0, 200);
    };
    say(&acme, "a", "The vermilionotter budget is approved");
    say(&acme, "b", "Remember the vermilionotter launch date");
    say(&globex, "a", "The saffronwalrus audit starts Monday");
    // Recall loads each tenant's index, so both are on disk when the tenant goes.
    let recall = |key: &str, query: &str| {
        let body = json!({"query": query}).to_string();
        server.send_as(Some(key), "POST", "/v1/recall", Some(&body)).1["hits"].clone()
    };
    assert_eq!(recall(&acme, "vermilionotter").as_array().unwrap().len(), 2);
    assert_eq!(recall(&globex, "saffronwalrus").as_array().unwrap().len(), 1);
    assert!(common::in_some_file(&data, "vermilionotter").is_some(), "the scan finds stored text");

    let (status, deleted) = server.send_as(Some(&acme), "DELETE", "/v1/tenant", None);
    assert_eq!((status, deleted["episodes"].as_u64()), (200, Some(2)));
    assert_eq!(recall(&acme, "vermilionotter"), json!([]));
    let (_, listed) = server.send_as(Some(&acme), "GET", "/v1/episodes", None);
    assert_eq!(listed["episodes"], json!([]));
    assert_eq!(
        common::in_some_file(&data, "vermilionotter"),
        None,
        "acme's words are gone from every file"
    );
    // The other tenant keeps its memory.
    assert_eq!(recall(&globex, "saffronwalrus").as_array().unwrap().len(), 1);
    assert!(common::in_some_file(&data, "saffronwalrus").is_some());
}
