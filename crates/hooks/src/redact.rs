//! Secrets kept out of memory: what an agent's session shows (a command's output, a pasted
//! key) may hold credentials, and memory outlives the session and may be shared (a server, an
//! export). Well-known token shapes, private keys, passwords in URLs and `secret=value`
//! assignments are replaced by `[redacted]` before anything is stored.

use std::{borrow::Cow, sync::OnceLock};

use regex::Regex;

/// A secret's shape, a cheap test that the text may hold one (most text skips the regular
/// expression, and a hook compiles only those it needs: a few milliseconds each otherwise),
/// and what replaces it (`$name` keeps the part that says what it was).
struct Rule {
    may_hold: fn(&str, &str) -> bool,
    pattern: &'static str,
    replacement: &'static str,
    compiled: OnceLock<Regex>,
}

const fn rule(
    may_hold: fn(&str, &str) -> bool,
    pattern: &'static str,
    replacement: &'static str,
) -> Rule {
    Rule { may_hold, pattern, replacement, compiled: OnceLock::new() }
}

/// Each rule's test gets the text and the text in ASCII lower case.
static RULES: [Rule; 11] = [
    rule(
        |t, _| t.contains("PRIVATE KEY-----"),
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
        "[redacted private key]",
    ),
    // AWS access keys, GitHub, OpenAI / Anthropic, Slack, Google, epimem's own keys.
    rule(
        |t, _| t.contains("AKIA") || t.contains("ASIA"),
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        "[redacted]",
    ),
    rule(
        |t, _| {
            ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"].iter().any(|p| t.contains(p))
        },
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
        "[redacted]",
    ),
    rule(|t, _| t.contains("sk-"), r"\bsk-(?:[A-Za-z]+-)?[A-Za-z0-9_\-]{20,}", "[redacted]"),
    rule(|t, _| t.contains("xox"), r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", "[redacted]"),
    rule(|t, _| t.contains("AIza"), r"\bAIza[0-9A-Za-z_\-]{35}", "[redacted]"),
    rule(|t, _| t.contains("epm_"), r"\bepm_[A-Za-z0-9_\-]{20,}", "[redacted]"),
    rule(
        |_, lower| lower.contains("bearer"),
        r"(?i)\b(?P<name>bearer\s+)[A-Za-z0-9\-._~+/]{16,}=*",
        "${name}[redacted]",
    ),
    // A password in a URL: scheme://user:password@host.
    rule(
        |t, _| t.contains("://") && t.contains('@'),
        r"(?P<name>[a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+@",
        "${name}[redacted]@",
    ),
    // `"password": "…"`, `token='…'`: the whole quoted value.
    rule(
        names_a_secret,
        r#"(?i)(?P<name>\b[a-z0-9_.\-]*(?:password|passwd|secret|token|api[_\-]?key|access[_\-]?key)["']?\s*[:=]\s*)(?:"[^"\n]*"|'[^'\n]*')"#,
        "${name}\"[redacted]\"",
    ),
    // `password=…`, `API_KEY: …`.
    rule(
        names_a_secret,
        r#"(?i)(?P<name>\b[a-z0-9_.\-]*(?:password|passwd|secret|token|api[_\-]?key|access[_\-]?key)["']?\s*[:=]\s*["']?)[^\s"',;]{6,}"#,
        "${name}[redacted]",
    ),
];

fn names_a_secret(_: &str, lower: &str) -> bool {
    ["passw", "secret", "token", "key"].iter().any(|w| lower.contains(w))
}

/// `text` with every secret it seemed to hold replaced.
pub fn redact(text: &str) -> Cow<'_, str> {
    let lower = text.to_ascii_lowercase();
    let mut out = Cow::Borrowed(text);
    for rule in &RULES {
        if !(rule.may_hold)(&out, &lower) {
            continue;
        }
        let pattern =
            rule.compiled.get_or_init(|| Regex::new(rule.pattern).expect("the patterns compile"));
        if let Cow::Owned(changed) = pattern.replace_all(&out, rule.replacement) {
            out = Cow::Owned(changed);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_and_ordinary_text_is_not() {
        let cases = [
            (
                "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
                "export AWS_ACCESS_KEY_ID=[redacted]",
            ),
            ("token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB here", "token [redacted] here"),
            ("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123", "OPENAI_API_KEY=[redacted]"),
            (
                "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def'",
                "curl -H 'Authorization: Bearer [redacted]'",
            ),
            (
                "postgres://app:hunter2secret@db.internal:5432/shop",
                "postgres://app:[redacted]@db.internal:5432/shop",
            ),
            (r#"{"password": "correct horse battery"}"#, r#"{"password": "[redacted]"}"#),
            ("DB_PASSWORD: s3cr3tvalue", "DB_PASSWORD: [redacted]"),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nok",
                "[redacted private key]\nok",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(redact(text), expected, "{text}");
        }
        for plain in [
            "cargo test refund_webhook -- --nocapture",
            "the token budget is 4000 tokens",
            "fn password_is_valid(p: &str) -> bool",
            "see https://docs.rs/regex/latest/regex/",
            "git commit -m 'Rotate the API key reader'",
        ] {
            assert!(matches!(redact(plain), Cow::Borrowed(_)), "{plain} -> {}", redact(plain));
        }
    }
}
