//! A hook that asks `epimem serve` on the same database for a prompt's earlier work, and
//! falls back to the prompt's keywords when the server is down or slow.

use serde_json::json;

use super::{Claude, debugging};
use crate::serve::{FAST_WORKER, Server};

const PROMPT: &str = "the refund webhook test is failing again after the mock server change";

/// Points the hooks at `url`, giving up on it after `timeout_ms`.
fn hooks_ask(claude: &Claude, url: &str, timeout_ms: u64) {
    hooks_ask_as(claude, "default", url, timeout_ms);
}

/// The same, the hooks storing their sessions in `tenant`.
fn hooks_ask_as(claude: &Claude, tenant: &str, url: &str, timeout_ms: u64) {
    let settings = format!(
        "tenant = \"{tenant}\"\n[hooks]\nbackground = false\nserver_url = \"{url}\"\n\
         server_timeout_ms = {timeout_ms}\n"
    );
    std::fs::write(&claude.config, settings).unwrap();
}

#[test]
fn a_prompt_is_told_what_the_server_recalls_and_its_keywords_choose_when_it_cannot() {
    let claude = Claude::new("");
    debugging(&claude, "s1");
    claude.close("s1");
    let by_keywords = claude.session("s2").prompt(PROMPT);
    assert!(by_keywords.contains("Earlier work in this project"), "{by_keywords}");

    let server = Server::start(&claude.db, FAST_WORKER);

    hooks_ask(&claude, &server.base, 5_000);
    let project = claude.project.display().to_string();
    let asked = json!({"project": project, "prompt": PROMPT, "session": "s3"});
    let (status, recalled) = server.post("/v1/project-memory", &asked);
    assert_eq!(status, 200, "{recalled}");
    let recalled = recalled["context"].as_str().unwrap().to_owned();
    assert!(recalled.contains("Earlier work in this project"), "{recalled}");
    assert!(recalled.contains("src/webhook.rs"), "{recalled}");
    // The hook hands on what the server chose (the prompt's own session's work never).
    assert_eq!(claude.session("s3").prompt(PROMPT), recalled);
    let in_s1 = json!({"project": project, "prompt": PROMPT, "session": "s1"});
    assert_eq!(server.post("/v1/project-memory", &in_s1).1["context"], "");
    assert!(!claude.log().contains("by keywords"), "{}", claude.log());
    let as_default = json!({"project": project, "prompt": PROMPT, "tenant": "default"});
    assert_eq!(server.post("/v1/project-memory", &as_default).1["context"], recalled.as_str());

    // A hook of another tenant is refused, not told this tenant's work; its own tenant's
    // keywords choose (nothing: it stored no work).
    let as_other = json!({"project": project, "prompt": PROMPT, "tenant": "other"});
    let (status, refused) = server.post("/v1/project-memory", &as_other);
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("conflict")), "{refused}");
    hooks_ask_as(&claude, "other", &server.base, 5_000);
    assert_eq!(claude.session("s3b").prompt(PROMPT), "");
    assert!(
        claude.log().contains("answered 409") && claude.log().contains("conflict"),
        "{}",
        claude.log()
    );
    hooks_ask(&claude, &server.base, 5_000);
    let (status, refused) = server.post("/v1/project-memory", &json!({"project": " "}));
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("bad_input")), "{refused}");

    // The server is gone: the keywords choose, and the log says why.
    drop(server);
    assert_eq!(claude.session("s4").prompt(PROMPT), by_keywords);
    assert!(
        claude.log().contains("a prompt's earlier work by keywords: cannot reach"),
        "{}",
        claude.log()
    );

    // A server that takes the connection and never answers is given up on in time.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    hooks_ask(&claude, &format!("http://{}", silent.local_addr().unwrap()), 200);
    assert_eq!(claude.session("s5").prompt(PROMPT), by_keywords);
    assert!(claude.log().contains("did not answer within 200 ms"), "{}", claude.log());
}
