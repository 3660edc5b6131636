//! The client against the scripted server over real HTTP on loopback.

use std::time::{Duration, Instant};

use epimem_core::{ChatPrompt, ErrorKind, LlmStage};
use epimem_llm::scripted::{ScriptedReply, ScriptedServer, dead_url};
use epimem_llm::{ChatModel, LlmConfig, LlmError, OpenAiChat};
use serde_json::json;

fn config(url: String) -> LlmConfig {
    LlmConfig {
        url,
        model: "small".into(),
        api_key: "sk-test".into(),
        timeout_seconds: 1.0,
        max_retries: 2,
        retry_base_ms: 10,
        ..LlmConfig::default()
    }
}

fn client(server: &ScriptedServer) -> OpenAiChat {
    OpenAiChat::new(config(server.url())).unwrap()
}

fn prompt() -> ChatPrompt {
    ChatPrompt {
        system: "Answer in JSON.".into(),
        user: "Say ok.".into(),
        schema_name: "ok",
        schema: json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
    }
}

fn status(status: u16) -> ScriptedReply {
    ScriptedReply::Status {
        status,
        body: format!("{{\"error\": \"scripted {status}\"}}"),
        retry_after: None,
    }
}

const OK: &str = r#"{"ok": true}"#;

#[test]
fn an_answer_comes_back_with_the_tokens_the_server_reported() {
    let server = ScriptedServer::start([ScriptedReply::Answer(OK.into())]);
    let result = client(&server).complete(LlmStage::Segmentation, &prompt());
    assert_eq!(result.answer.unwrap(), OK);
    let (prompt_tokens, completion_tokens) = server.reported_tokens();
    assert!(prompt_tokens > 0);
    assert_eq!((result.usage.calls, result.usage.failures), (1, 0));
    assert_eq!(
        (result.usage.prompt_tokens, result.usage.completion_tokens),
        (prompt_tokens, completion_tokens)
    );
    let asked = &server.received()[0];
    assert_eq!(asked.body["model"], "small");
    assert_eq!(asked.authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(asked.response_format(), "json_schema");
    assert_eq!(asked.body["response_format"]["json_schema"]["strict"], true);
    assert_eq!(asked.body["response_format"]["json_schema"]["name"], "ok");
    assert_eq!(asked.message("user"), "Say ok.");
}

#[test]
fn a_rate_limit_is_waited_out_as_long_as_the_server_asks() {
    let limited = ScriptedReply::Status {
        status: 429,
        body: "slow down".into(),
        retry_after: Some("1".into()),
    };
    let server = ScriptedServer::start([limited, ScriptedReply::Answer(OK.into())]);
    let started = Instant::now();
    let result = client(&server).complete(LlmStage::Review, &prompt());
    assert_eq!(result.answer.unwrap(), OK);
    assert!(started.elapsed() >= Duration::from_secs(1), "Retry-After honoured");
    assert_eq!((result.usage.calls, result.usage.failures), (2, 1));
}

#[test]
fn server_errors_are_retried_then_reported() {
    let server = ScriptedServer::start([
        status(500),
        status(503),
        status(502),
        ScriptedReply::Answer(OK.into()),
    ]);
    let result = client(&server).complete(LlmStage::Summary, &prompt());
    match result.answer {
        Err(LlmError::Status { status: 502, .. }) => {}
        other => panic!("expected the last 502, got {other:?}"),
    }
    assert_eq!((result.usage.calls, result.usage.failures), (3, 3), "one try and two retries");
    assert_eq!(server.received().len(), 3);
}

#[test]
fn a_reply_slower_than_the_timeout_is_given_up_and_asked_again() {
    let slow =
        ScriptedReply::Slow(Duration::from_secs(3), Box::new(ScriptedReply::Answer(OK.into())));
    let server = ScriptedServer::start([slow, ScriptedReply::Answer(OK.into())]);
    let started = Instant::now();
    let result = client(&server).complete(LlmStage::Segmentation, &prompt());
    assert_eq!(result.answer.unwrap(), OK);
    assert!(started.elapsed() < Duration::from_millis(2800), "{:?}", started.elapsed());
    assert_eq!((result.usage.calls, result.usage.failures), (2, 1));
}

#[test]
fn a_timeout_on_every_try_is_a_timeout_error() {
    let slow = || {
        ScriptedReply::Slow(Duration::from_millis(1500), Box::new(ScriptedReply::Answer(OK.into())))
    };
    let server = ScriptedServer::start([slow(), slow(), slow()]);
    let config = LlmConfig { max_retries: 1, ..config(server.url()) };
    let result = OpenAiChat::new(config).unwrap().complete(LlmStage::Segmentation, &prompt());
    let error = result.answer.unwrap_err();
    assert!(matches!(error, LlmError::Timeout { .. }), "{error:?}");
    assert_eq!(error.kind(), ErrorKind::Unavailable);
}

#[test]
fn a_dead_port_is_unreachable_after_the_retries() {
    let chat = OpenAiChat::new(config(dead_url())).unwrap();
    let result = chat.complete(LlmStage::Segmentation, &prompt());
    let error = result.answer.unwrap_err();
    assert!(matches!(error, LlmError::Unreachable { .. }), "{error:?}");
    assert!(error.to_string().contains("/v1/chat/completions"), "{error}");
    assert_eq!((result.usage.calls, result.usage.failures), (3, 3));
}

#[test]
fn hang_ups_and_replies_that_are_no_completion_are_retried() {
    let not_json =
        ScriptedReply::Status { status: 200, body: "<html>proxy</html>".into(), retry_after: None };
    let no_choice =
        ScriptedReply::Status { status: 200, body: r#"{"choices": []}"#.into(), retry_after: None };
    let server = ScriptedServer::start([ScriptedReply::HangUp, not_json, no_choice]);
    let result = client(&server).complete(LlmStage::Segmentation, &prompt());
    let error = result.answer.unwrap_err();
    assert!(error.to_string().contains("choices[0].message.content"), "{error}");
    assert_eq!(result.usage.calls, 3);
}

#[test]
fn a_refused_key_is_not_retried() {
    let server = ScriptedServer::start([status(401), ScriptedReply::Answer(OK.into())]);
    let result = client(&server).complete(LlmStage::Segmentation, &prompt());
    let error = result.answer.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::BadInput);
    assert!(error.to_string().contains("401"), "{error}");
    assert_eq!(server.received().len(), 1);
}

#[test]
fn a_server_without_json_schema_is_asked_for_a_json_object_from_then_on() {
    let server =
        ScriptedServer::start([ScriptedReply::Answer(OK.into()), ScriptedReply::Answer(OK.into())]);
    server.without_json_schema();
    let chat = client(&server);
    let first = chat.complete(LlmStage::Segmentation, &prompt());
    assert_eq!(first.answer.unwrap(), OK);
    assert_eq!((first.usage.calls, first.usage.failures), (2, 1));
    let second = chat.complete(LlmStage::Segmentation, &prompt());
    assert_eq!((second.usage.calls, second.usage.failures), (1, 0));
    let formats: Vec<String> =
        server.received().iter().map(|r| r.response_format().to_owned()).collect();
    assert_eq!(formats, ["json_schema", "json_object", "json_object"]);
    let system = server.received()[1].message("system").to_owned();
    assert!(
        system.starts_with("Answer in JSON.") && system.contains("\"required\":[\"ok\"]"),
        "{system}"
    );
}

#[test]
fn settings_that_cannot_work_are_refused_by_name() {
    let bad = |c: LlmConfig| OpenAiChat::new(c).unwrap_err();
    assert!(bad(config("localhost:8080/v1".into())).contains("llm.url"));
    assert!(
        bad(LlmConfig { model: String::new(), ..config("http://127.0.0.1:1/v1".into()) })
            .contains("llm.model")
    );
    assert!(
        bad(LlmConfig { timeout_seconds: 0.0, ..config("http://127.0.0.1:1/v1".into()) })
            .contains("llm.timeout_seconds")
    );
}
