//! The memory browser under `/ui`: its files are served from the binary with the headers that
//! keep them safe, reachable without a key, while the data they ask for still needs one.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use serde_json::Value;

use crate::{
    keys::create_key,
    serve::{FAST_WORKER, Server, message},
};

/// GET `path`: (status, content type, content security policy, body).
fn get(base: &str, path: &str) -> (u16, String, String, String) {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .new_agent();
    let mut response = agent.get(&format!("{base}{path}")).call().unwrap();
    let header = |name: &str| {
        response.headers().get(name).map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
    };
    let (kind, policy) = (header("content-type"), header("content-security-policy"));
    let status = response.status().as_u16();
    (status, kind, policy, response.body_mut().read_to_string().unwrap())
}

#[test]
fn the_browser_is_served_from_the_binary_and_its_data_needs_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let key = create_key(&db, "acme");
    let server = Server::start(&db, FAST_WORKER);

    let (status, kind, policy, page) = get(&server.base, "/ui");
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/html"), "{kind}");
    assert!(policy.contains("script-src 'self'"), "no inline script may run: {policy}");
    for part in ["<html lang=\"en\">", "id=\"main\"", "src=\"/ui/app.js\"", "href=\"/ui/app.css\""]
    {
        assert!(page.contains(part), "the page lacks {part}");
    }
    let (status, kind, _, script) = get(&server.base, "/ui/app.js");
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/javascript"), "{kind}");
    // Memory's text reaches the page as text only.
    assert!(!script.contains("innerHTML"), "the script must not parse memory as HTML");
    let (status, kind, _, _) = get(&server.base, "/ui/app.css");
    assert_eq!((status, kind.starts_with("text/css")), (200, true));
    assert_eq!(get(&server.base, "/ui/").0, 308, "the folder's address leads to the page");
    assert_eq!(get(&server.base, "/ui/missing.js").0, 404);

    // The data the page reads is the API's, under the same keys.
    assert_eq!(server.send("GET", "/v1/episodes", None).0, 401);
    assert_eq!(server.send_as(Some(&key), "GET", "/v1/episodes", None).0, 200);
}

/// The browser tests' folder and the Chromium to drive, or `None` (the test skips) when this
/// machine has not both; `scripts/test.sh` sets them up, and CI requires them.
fn browser() -> Option<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui-tests");
    let chromium =
        std::env::var("EPIMEM_TEST_BROWSER").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    if dir.join("node_modules/playwright-core").is_dir() && Path::new(&chromium).exists() {
        return Some((dir, chromium));
    }
    assert!(
        std::env::var_os("EPIMEM_REQUIRE_BROWSER").is_none(),
        "EPIMEM_REQUIRE_BROWSER is set but {chromium} or ui-tests/node_modules is missing \
         (scripts/browser.sh installs them)"
    );
    eprintln!("skipping: no Chromium or playwright-core (run the tests with scripts/test.sh)");
    None
}

/// Runs a browser test `script` against the server at `base` (opening the episode whose title
/// holds `topic`): what it printed, and where its screenshots are. Fails unless it succeeds.
fn run_browser(
    script: &Path,
    chromium: &str,
    base: &str,
    topic: Option<&str>,
) -> (String, PathBuf) {
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui-screenshots");
    let mut command = Command::new("node");
    command
        .arg(script)
        .env("EPIMEM_UI_BASE", base)
        .env("EPIMEM_UI_SHOTS", &shots)
        .env("EPIMEM_TEST_BROWSER", chromium);
    if let Some(topic) = topic {
        command.env("EPIMEM_UI_TOPIC", topic);
    }
    let out = command.output().unwrap();
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}\n(screenshots in {})", shots.display());
    (said, shots)
}

#[test]
fn in_a_browser_the_timeline_an_episode_a_correction_a_search_and_forgetting_work() {
    let Some((tests, chromium)) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("e.db"), FAST_WORKER);
    let conversations = [
        (
            "trip",
            [
                "We are planning a long weekend in Lisbon in May",
                "For Lisbon, stay in Alfama and take the tram up to the castle",
                "Is a day trip from Lisbon to Sintra worth it?",
            ],
        ),
        (
            "garden",
            [
                "The basil on the balcony keeps wilting",
                "Basil wants morning sun and water when the soil is dry",
                "I will move the basil pot to the east side",
            ],
        ),
        (
            "build",
            [
                "The release build fails with a linker error",
                "The linker error comes from a missing system library",
                "Installing the library fixed the release build",
            ],
        ),
    ];
    for (c, (conversation, lines)) in conversations.iter().enumerate() {
        for (i, line) in lines.iter().enumerate() {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            let time = format!("2026-03-{:02}T09:0{i}:00Z", 10 + c);
            let body = message(conversation, &(i + 1).to_string(), role, line, &time);
            assert_eq!(server.post("/v1/messages", &body).0, 200);
        }
        let flush = format!("/v1/conversations/{conversation}/flush");
        assert_eq!(server.send("POST", &flush, None).0, 200);
    }
    let before = server.send("GET", "/v1/episodes", None).1["episodes"].as_array().unwrap().len();

    let (said, shots) = run_browser(&tests.join("ui.mjs"), &chromium, &server.base, Some("Lisbon"));
    let result: Value = serde_json::from_str(said.lines().next().unwrap()).unwrap();
    assert_eq!(result["episodes"], before, "{said}");
    // What the browser forgot is gone from the API too.
    let after = server.send("GET", "/v1/episodes", None).1["episodes"].as_array().unwrap().len();
    assert_eq!(after, before - 1);
    for page in ["timeline", "episode", "edited", "search", "health", "forgotten"] {
        assert!(shots.join(format!("{page}.png")).is_file(), "no screenshot of {page}");
    }
}

#[test]
fn in_a_browser_ten_thousand_episodes_are_on_screen_within_a_second() {
    let Some((tests, chromium)) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("large.db");
    // The bench command's synthetic memory: 10,000 episodes in 100 conversations.
    let built = Command::new(env!("CARGO_BIN_EXE_epimem"))
        .args(["bench", "recall", "--episodes", "10000", "--queries", "1", "--db"])
        .arg(&db)
        .env("EPIMEM_EMBEDDER", "hash")
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let server = Server::start_as(&db, FAST_WORKER, "bench");
    assert_eq!(server.send("GET", "/v1/episodes?limit=1", None).0, 200);

    let (said, _) = run_browser(&tests.join("load.mjs"), &chromium, &server.base, None);
    eprintln!("{said}");
}
