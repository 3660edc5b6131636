//! Patterns across sessions of agent work: what the user keeps asking for, and what keeps
//! failing (the same command or file failing in several sessions).

use serde::{Deserialize, Serialize};

use crate::Timestamp;

/// What one session of agent work left behind.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionWork {
    pub conversation: String,
    pub start: Timestamp,
    pub end: Timestamp,
    /// Each episode's title and keywords, in order.
    pub intents: Vec<(String, Vec<String>)>,
    /// What failed in it (a command, a search or files), each once.
    pub failed: Vec<String>,
}

/// The same thing failing in several sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailurePattern {
    pub what: String,
    /// In how many sessions it failed...
    pub sessions: usize,
    /// ...and when it last did (the end of the last such session).
    pub last: Timestamp,
}

/// Work the user asked for in several sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntentPattern {
    /// The words its episodes share, most shared first.
    pub keywords: Vec<String>,
    /// The titles of its episodes, oldest first.
    pub titles: Vec<String>,
    pub sessions: usize,
    pub last: Timestamp,
}

/// What failed in at least `min_sessions` sessions, most sessions first, then most recent.
pub fn failure_patterns(sessions: &[SessionWork], min_sessions: usize) -> Vec<FailurePattern> {
    let mut out: Vec<FailurePattern> = Vec::new();
    for session in sessions {
        for what in &session.failed {
            match out.iter_mut().find(|p| &p.what == what) {
                Some(p) => {
                    p.sessions += 1;
                    p.last = p.last.max(session.end);
                }
                None => {
                    out.push(FailurePattern { what: what.clone(), sessions: 1, last: session.end })
                }
            }
        }
    }
    out.retain(|p| p.sessions >= min_sessions.max(2));
    out.sort_by(|a, b| {
        b.sessions.cmp(&a.sessions).then(b.last.cmp(&a.last)).then(a.what.cmp(&b.what))
    });
    out
}

/// Episodes whose keywords are alike (Jaccard ≥ `threshold` with one already grouped) across
/// at least `min_sessions` sessions; most sessions first, then most recent.
pub fn recurring_intents(
    sessions: &[SessionWork],
    threshold: f64,
    min_sessions: usize,
) -> Vec<IntentPattern> {
    struct Group<'a> {
        members: Vec<(&'a str, &'a [String])>,
        conversations: Vec<&'a str>,
        last: Timestamp,
    }
    let mut ordered: Vec<&SessionWork> = sessions.iter().collect();
    ordered.sort_by_key(|s| s.start);
    let mut groups: Vec<Group<'_>> = Vec::new();
    for session in ordered {
        for (title, keywords) in &session.intents {
            if keywords.is_empty() {
                continue;
            }
            let best = groups
                .iter_mut()
                .map(|g| {
                    let best =
                        g.members.iter().map(|(_, k)| jaccard(k, keywords)).fold(0.0, f64::max);
                    (best, g)
                })
                .filter(|(s, _)| *s >= threshold)
                .max_by(|a, b| a.0.total_cmp(&b.0));
            let group = match best {
                Some((_, g)) => g,
                None => {
                    groups.push(Group {
                        members: vec![],
                        conversations: vec![],
                        last: session.end,
                    });
                    groups.last_mut().expect("just pushed")
                }
            };
            group.members.push((title, keywords));
            if !group.conversations.contains(&session.conversation.as_str()) {
                group.conversations.push(&session.conversation);
            }
            group.last = group.last.max(session.end);
        }
    }
    let mut out: Vec<IntentPattern> = groups
        .into_iter()
        .filter(|g| g.conversations.len() >= min_sessions.max(2))
        .map(|g| IntentPattern {
            keywords: shared_words(&g.members),
            titles: g.members.iter().map(|(t, _)| t.to_string()).collect(),
            sessions: g.conversations.len(),
            last: g.last,
        })
        .collect();
    out.sort_by(|a, b| b.sessions.cmp(&a.sessions).then(b.last.cmp(&a.last)));
    out
}

fn jaccard(a: &[String], b: &[String]) -> f64 {
    let shared = a.iter().filter(|w| b.contains(w)).count();
    let union = a.len() + b.len() - shared;
    if union == 0 { 0.0 } else { shared as f64 / union as f64 }
}

/// Words in more than one member, most members first (at most five).
fn shared_words(members: &[(&str, &[String])]) -> Vec<String> {
    let mut counts: Vec<(&String, usize)> = Vec::new();
    for (_, words) in members {
        for w in words.iter() {
            match counts.iter_mut().find(|(x, _)| *x == w) {
                Some((_, n)) => *n += 1,
                None => counts.push((w, 1)),
            }
        }
    }
    counts.retain(|(_, n)| *n > 1);
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    counts.into_iter().take(5).map(|(w, _)| w.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, day: i64, intents: &[(&str, &[&str])], failed: &[&str]) -> SessionWork {
        SessionWork {
            conversation: id.into(),
            start: Timestamp(day * 86_400_000),
            end: Timestamp(day * 86_400_000 + 3_600_000),
            intents: intents
                .iter()
                .map(|(t, k)| (t.to_string(), k.iter().map(|w| w.to_string()).collect()))
                .collect(),
            failed: failed.iter().map(|f| f.to_string()).collect(),
        }
    }

    fn sessions() -> Vec<SessionWork> {
        vec![
            session(
                "s1",
                1,
                &[("Refund webhook test", &["refund", "webhook", "test", "fails"])],
                &["cargo test -p payments", "src/a.rs"],
            ),
            session(
                "s2",
                2,
                &[("Dark mode toggle", &["dark", "mode", "toggle", "settings"])],
                &["cargo test -p payments"],
            ),
            session(
                "s3",
                3,
                &[("Refund webhook flaky", &["refund", "webhook", "flaky", "retry"])],
                &["cargo test -p payments", "src/a.rs"],
            ),
        ]
    }

    #[test]
    fn a_failure_in_several_sessions_is_a_pattern_and_one_in_a_single_session_is_not() {
        let mut s = sessions();
        s[1].failed.push("npm run lint".into());
        let patterns = failure_patterns(&s, 2);
        let found: Vec<(&str, usize)> =
            patterns.iter().map(|p| (p.what.as_str(), p.sessions)).collect();
        assert_eq!(found, [("cargo test -p payments", 3), ("src/a.rs", 2)]);
        assert_eq!(patterns[0].last, s[2].end);
    }

    #[test]
    fn work_asked_for_again_in_another_session_recurs() {
        let patterns = recurring_intents(&sessions(), 0.3, 2);
        assert_eq!(patterns.len(), 1, "{patterns:?}");
        assert_eq!(patterns[0].sessions, 2);
        assert_eq!(patterns[0].keywords, ["refund", "webhook"]);
        assert_eq!(patterns[0].titles, ["Refund webhook test", "Refund webhook flaky"]);
        // Twice in one session is not a pattern across sessions.
        let one = vec![session(
            "s1",
            1,
            &[("a", &["refund", "webhook"]), ("b", &["refund", "webhook"])],
            &[],
        )];
        assert!(recurring_intents(&one, 0.3, 2).is_empty());
    }
}
