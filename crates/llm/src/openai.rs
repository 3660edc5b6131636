//! The client for OpenAI-compatible chat completion APIs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use epimem_core::{ChatPrompt, LlmStage, LlmUsage};
use serde_json::{Value, json};

use crate::limit::CallLimit;
use crate::retry::{backoff, retry_after};
use crate::{ChatModel, ChatResult, LlmConfig, LlmError};

/// A chat model behind `POST {url}/chat/completions`.
///
/// Answers are held to the prompt's schema with `response_format: json_schema` (strict). A
/// server that rejects that (HTTP 400 or 422) is asked again in `json_object` mode, with the
/// schema stated in the instructions, and from then on always so; the caller validates what
/// comes back either way.
#[derive(Debug)]
pub struct OpenAiChat {
    config: LlmConfig,
    endpoint: String,
    agent: ureq::Agent,
    limit: CallLimit,
    json_schema: AtomicBool,
}

/// One request's outcome before retrying is decided.
struct Attempt {
    result: Result<(String, u64, u64), LlmError>,
    retry_after: Option<Duration>,
}

impl OpenAiChat {
    /// A client for `config`; an error names the setting that is missing or wrong.
    pub fn new(config: LlmConfig) -> Result<Self, String> {
        let url = config.url.trim().trim_end_matches('/');
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!(
                "llm.url must be an http:// or https:// base URL ending in /v1, not {url:?}"
            ));
        }
        if LlmStage::ALL.iter().any(|&stage| config.model_for(stage).trim().is_empty()) {
            return Err(
                "llm.model must name the model to call (or llm.models every stage's)".into()
            );
        }
        let timeout = std::time::Duration::try_from_secs_f64(config.timeout_seconds).ok();
        if timeout.is_none_or(|t| t.is_zero()) {
            return Err("llm.timeout_seconds must be a positive number of seconds".into());
        }
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(config.timeout()))
            .build()
            .new_agent();
        Ok(Self {
            endpoint: format!("{url}/chat/completions"),
            limit: CallLimit::new(config.concurrency),
            agent,
            config,
            json_schema: AtomicBool::new(true),
        })
    }

    fn body(&self, model: &str, prompt: &ChatPrompt, json_schema: bool) -> Value {
        let (system, format) = if json_schema {
            let schema =
                json!({"name": prompt.schema_name, "strict": true, "schema": prompt.schema});
            (prompt.system.clone(), json!({"type": "json_schema", "json_schema": schema}))
        } else {
            (prompt.system_with_schema(), json!({"type": "json_object"}))
        };
        json!({
            "model": model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": prompt.user},
            ],
            "temperature": 0,
            "response_format": format,
        })
    }

    fn send(&self, body: &Value) -> Attempt {
        let _permit = self.limit.acquire();
        let mut request = self.agent.post(&self.endpoint).content_type("application/json");
        if !self.config.api_key.is_empty() {
            request = request.header("Authorization", &format!("Bearer {}", self.config.api_key));
        }
        let mut response = match request.send(body.to_string()) {
            Ok(response) => response,
            Err(e) => return Attempt { result: Err(self.transport_error(e)), retry_after: None },
        };
        let status = response.status().as_u16();
        let hint = retry_after(response.headers().get("retry-after").and_then(|v| v.to_str().ok()));
        let text = match response.body_mut().read_to_string() {
            Ok(text) => text,
            Err(e) => return Attempt { result: Err(self.transport_error(e)), retry_after: None },
        };
        let result = if (200..300).contains(&status) {
            completion(&text)
        } else {
            Err(LlmError::Status { status, body: clip(&text, 300) })
        };
        Attempt { result, retry_after: hint }
    }

    /// One request, its cost added to `usage`.
    fn counted(
        &self,
        model: &str,
        prompt: &ChatPrompt,
        json_schema: bool,
        usage: &mut LlmUsage,
    ) -> Attempt {
        let started = Instant::now();
        let attempt = self.send(&self.body(model, prompt, json_schema));
        usage.calls += 1;
        usage.latency_ms += started.elapsed().as_millis() as u64;
        match &attempt.result {
            Ok((_, prompt_tokens, completion_tokens)) => {
                usage.prompt_tokens += prompt_tokens;
                usage.completion_tokens += completion_tokens;
            }
            Err(_) => usage.failures += 1,
        }
        attempt
    }

    fn transport_error(&self, e: ureq::Error) -> LlmError {
        match e {
            ureq::Error::Timeout(_) => LlmError::Timeout { seconds: self.config.timeout_seconds },
            e => LlmError::Unreachable { url: self.endpoint.clone(), reason: e.to_string() },
        }
    }
}

impl ChatModel for OpenAiChat {
    fn complete(&self, stage: LlmStage, prompt: &ChatPrompt) -> ChatResult {
        let span = self.span(stage, prompt);
        let result = span.in_scope(|| self.ask(stage, prompt));
        if !span.is_disabled() {
            span.record("gen_ai.usage.input_tokens", result.usage.prompt_tokens as i64);
            span.record("gen_ai.usage.output_tokens", result.usage.completion_tokens as i64);
            span.record("epimem.llm.calls", result.usage.calls as i64);
            match &result.answer {
                Ok(answer) => {
                    let output = json!([{"role": "assistant",
                        "parts": [{"type": "text", "content": answer}]}]);
                    span.record("gen_ai.output.messages", output.to_string());
                }
                Err(e) => {
                    span.record("error.type", e.error_type().as_ref());
                    span.record("otel.status_code", "error");
                }
            }
        }
        result
    }

    fn model_for(&self, stage: LlmStage) -> &str {
        self.config.model_for(stage)
    }
}

impl OpenAiChat {
    /// A GenAI `chat` span for one logical call (its retries included), if traced; the
    /// prompt's text is on it as the conventions' opt-in attributes, which leave the process
    /// only when content is captured.
    fn span(&self, stage: LlmStage, prompt: &ChatPrompt) -> tracing::Span {
        if tracing::Span::current().is_none() {
            return tracing::Span::none();
        }
        let model = self.config.model_for(stage);
        let server = self.endpoint.parse::<ureq::http::Uri>().ok();
        let span = tracing::info_span!(
            "chat",
            otel.name = %format_args!("chat {model}"),
            otel.kind = "client",
            otel.status_code = tracing::field::Empty,
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = "openai",
            gen_ai.request.model = model,
            gen_ai.request.temperature = 0.0,
            gen_ai.output.type = "json",
            server.address = server.as_ref().and_then(|u| u.host()),
            server.port = server.as_ref().and_then(|u| u.port_u16()).map(i64::from),
            epimem.llm.stage = stage.as_str(),
            epimem.llm.calls = tracing::field::Empty,
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
            error.type = tracing::field::Empty,
            gen_ai.system_instructions = tracing::field::Empty,
            gen_ai.input.messages = tracing::field::Empty,
            gen_ai.output.messages = tracing::field::Empty,
        );
        if !span.is_disabled() {
            let system = json!([{"type": "text", "content": prompt.system}]);
            let input =
                json!([{"role": "user", "parts": [{"type": "text", "content": prompt.user}]}]);
            span.record("gen_ai.system_instructions", system.to_string());
            span.record("gen_ai.input.messages", input.to_string());
        }
        span
    }

    fn ask(&self, stage: LlmStage, prompt: &ChatPrompt) -> ChatResult {
        let model = self.config.model_for(stage);
        let mut usage = LlmUsage::default();
        let mut retries = 0;
        loop {
            let json_schema = self.json_schema.load(Ordering::Relaxed);
            let attempt = self.counted(model, prompt, json_schema, &mut usage);
            let error = match attempt.result {
                Ok((content, ..)) => return ChatResult { answer: Ok(content), usage },
                Err(error) => error,
            };
            let schema_refused = matches!(error, LlmError::Status { status: 400 | 422, .. });
            if json_schema && schema_refused {
                // Asked once more without the schema: if that works, this server lacks it.
                let again = self.counted(model, prompt, false, &mut usage);
                if let Ok((content, ..)) = again.result {
                    self.json_schema.store(false, Ordering::Relaxed);
                    return ChatResult { answer: Ok(content), usage };
                }
            }
            if !error.is_transient() || retries >= self.config.max_retries {
                return ChatResult { answer: Err(error), usage };
            }
            let base = Duration::from_millis(self.config.retry_base_ms);
            let wait = backoff(
                retries,
                base,
                self.config.max_retry_wait(),
                attempt.retry_after,
                fastrand::f64(),
            );
            std::thread::sleep(wait);
            retries += 1;
        }
    }
}

/// The first choice's text and the token counts of a chat completion.
fn completion(text: &str) -> Result<(String, u64, u64), LlmError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| LlmError::Malformed(format!("{e}: {}", clip(text, 200))))?;
    let content =
        value.pointer("/choices/0/message/content").and_then(Value::as_str).ok_or_else(|| {
            LlmError::Malformed(format!("no choices[0].message.content in {}", clip(text, 200)))
        })?;
    let tokens = |field: &str| value.pointer(&format!("/usage/{field}")).and_then(Value::as_u64);
    Ok((
        content.to_owned(),
        tokens("prompt_tokens").unwrap_or(0),
        tokens("completion_tokens").unwrap_or(0),
    ))
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}
