//! What a coding agent is handed when a session starts (the rules the user set, recent work
//! at episode resolution, older sessions as summaries, known failures) and when a prompt
//! matches earlier work; each within a token budget, most useful first.

use super::{FailurePattern, IntentPattern, Skeleton};
use crate::{
    Episode, Timestamp,
    recall::block::{day, fit_sections, minute},
    telling::keyword_list,
};

/// An episode of recent work and its skeleton.
#[derive(Debug, Clone, Copy)]
pub struct WorkItem<'a> {
    pub episode: &'a Episode,
    pub skeleton: Option<&'a Skeleton>,
}

/// An older session, told by its summary.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionLine {
    pub start: Timestamp,
    pub summary: String,
}

/// A standing rule the user set in an earlier session ("Always run cargo fmt before you
/// commit"), as its own sentence (`rule_sentences`).
#[derive(Debug, Clone, PartialEq)]
pub struct RuleLine {
    pub at: Timestamp,
    pub text: String,
}

/// Everything a session start may be told, newest first in each list.
#[derive(Debug, Clone, Default)]
pub struct StartContext<'a> {
    pub rules: Vec<RuleLine>,
    pub recent: Vec<WorkItem<'a>>,
    pub failures: Vec<FailurePattern>,
    pub recurring: Vec<IntentPattern>,
    pub sessions: Vec<SessionLine>,
}

/// The session-start block within `budget` tokens (as `tokens` counts them, headings
/// included): the rules the user set first (a rule broken costs more than work forgotten, and
/// each is a line), then recent episodes, known failures, recurring requests and older
/// sessions, each list newest first, each item whole or not at all. Empty when there is
/// nothing to tell.
pub fn render_start_context(
    context: &StartContext<'_>,
    budget: usize,
    tokens: &dyn Fn(&str) -> usize,
) -> StartBlock {
    let failures = context.failures.iter().map(|p| {
        format!("- `{}` failed in {} sessions, last on {}", p.what, p.sessions, day(p.last))
    });
    let recurring = context.recurring.iter().map(|p| {
        let last = p.titles.last().map_or("", String::as_str);
        format!(
            "- {} ({} sessions, last on {}): {last}",
            p.keywords.join(", "),
            p.sessions,
            day(p.last)
        )
    });
    let sessions = context.sessions.iter().map(|s| format!("- {}: {}", day(s.start), s.summary));
    let rules = context.rules.iter().map(|r| format!("- {} (said on {})", r.text, day(r.at)));
    let (text, shown) = fit_sections(
        "Memory of earlier sessions in this project (epimem):",
        vec![
            (Some("Rules the user set, newest first:"), rules.collect()),
            (Some("Recent work, newest first:"), context.recent.iter().map(work_line).collect()),
            (Some("Known failures (they failed in several sessions):"), failures.collect()),
            (Some("Asked for in several sessions:"), recurring.collect()),
            (Some("Earlier sessions:"), sessions.collect()),
        ],
        budget,
        tokens,
    );
    // `shown` counts per section, in the order above: recent work is the second.
    StartBlock { text, recent_shown: shown[1] }
}

/// What a session starts with: the block, and how many of the recent work units (the first
/// of [`StartContext::recent`]) it tells of whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartBlock {
    pub text: String,
    pub recent_shown: usize,
}

/// One episode of work: when, its title, its story, its hot files.
fn work_line(item: &WorkItem<'_>) -> String {
    let e = item.episode;
    let minutes = (e.end.0 - e.start.0).max(0) / 60_000;
    let mut line = format!("- {} ({minutes} min) {}", minute(e.start), e.title);
    if !e.summary.is_empty() {
        line.push_str(&format!("\n  {}", e.summary));
    }
    if let Some(files) = item.skeleton.map(Skeleton::files).filter(|f| !f.is_empty()) {
        // The story may name them already; the skeleton's list is the reliable one.
        if !e.summary.contains(files[0]) {
            line.push_str(&format!("\n  Files: {}", files.join(", ")));
        }
    }
    line
}

/// An earlier episode whose words cover enough of a new prompt's.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptMatch {
    /// Its place in the list given to [`prompt_matches`].
    pub index: usize,
    /// The prompt's keywords it shares.
    pub shared: Vec<String>,
    /// `shared` over the smaller of the two word sets.
    pub overlap: f64,
}

/// The episodes (each given by its title and keywords) that share at least `min_shared` of
/// the prompt's keywords and at least `min_overlap` of the smaller word set, best first.
pub fn prompt_matches(
    prompt: &str,
    episodes: &[(&str, &[String])],
    min_shared: usize,
    min_overlap: f64,
) -> Vec<PromptMatch> {
    let words = keyword_list(prompt);
    if words.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<PromptMatch> =
        episodes
            .iter()
            .enumerate()
            .filter_map(|(index, (title, keywords))| {
                let mut theirs = keyword_list(title);
                for k in keywords.iter() {
                    if !theirs.contains(k) {
                        theirs.push(k.clone());
                    }
                }
                let shared: Vec<String> =
                    words.iter().filter(|w| theirs.contains(w)).cloned().collect();
                let overlap = shared.len() as f64 / words.len().min(theirs.len()).max(1) as f64;
                (shared.len() >= min_shared.max(1) && overlap >= min_overlap)
                    .then_some(PromptMatch { index, shared, overlap })
            })
            .collect();
    out.sort_by(|a, b| b.overlap.total_cmp(&a.overlap).then(a.index.cmp(&b.index)));
    out
}

/// The block a matching prompt is given: the matched episodes, best first, within `budget`.
pub fn render_prompt_context(
    items: &[WorkItem<'_>],
    budget: usize,
    tokens: &dyn Fn(&str) -> usize,
) -> String {
    fit_sections(
        "Earlier work in this project that bears on this prompt (epimem):",
        vec![(None, items.iter().map(work_line).collect())],
        budget,
        tokens,
    )
    .0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BoundaryReason, ConversationKey, EpisodeId, FsrsState, ToldBy};

    fn episode(title: &str, summary: &str, start_min: i64, minutes: i64) -> Episode {
        let start = Timestamp::parse_rfc3339("2026-11-20T09:00:00Z")
            .unwrap()
            .plus_millis(start_min * 60_000);
        Episode {
            id: EpisodeId(format!("ep_{start_min}")),
            conversation: ConversationKey::new("t", "s1"),
            user: None,
            agent: Some("/repo".into()),
            first_seq: 1,
            last_seq: 2,
            context_first_seq: None,
            start,
            end: start.plus_millis(minutes * 60_000),
            title: title.into(),
            summary: summary.into(),
            keywords: keyword_list(title),
            surprise: 0.2,
            boundary_reason: BoundaryReason::IntentShift,
            fsrs: FsrsState::default(),
            told_by: ToldBy::Fallback,
            told_note: None,
        }
    }

    fn words(text: &str) -> usize {
        text.split_whitespace().count()
    }

    #[test]
    fn the_start_block_puts_recent_work_first_and_stops_at_the_budget() {
        let newer = episode(
            "Refund webhook test: mock port",
            "Intent: Fix the refund webhook test.",
            60,
            12,
        );
        let older = episode("Dark mode toggle", "Intent: Add a dark mode toggle.", 0, 30);
        let skeleton = Skeleton {
            prompts: 1,
            first_prompt: Some(1),
            last_prompt: Some(1),
            investigate: 2,
            execute: 3,
            failures: 1,
            hot_files: vec![super::super::HotFile { path: "src/webhook.rs".into(), touches: 3 }],
            failed: vec!["cargo test".into()],
            commits: vec![],
            duration_ms: 0,
        };
        let context = StartContext {
            rules: vec![RuleLine {
                at: newer.start,
                text: "Always run cargo fmt before you commit".into(),
            }],
            recent: vec![
                WorkItem { episode: &newer, skeleton: Some(&skeleton) },
                WorkItem { episode: &older, skeleton: None },
            ],
            failures: vec![FailurePattern {
                what: "cargo test -p payments".into(),
                sessions: 3,
                last: newer.end,
            }],
            recurring: vec![IntentPattern {
                keywords: vec!["refund".into(), "webhook".into()],
                titles: vec![
                    "Refund webhook retries".into(),
                    "Refund webhook test: mock port".into(),
                ],
                sessions: 2,
                last: newer.end,
            }],
            sessions: vec![SessionLine {
                start: older.start,
                summary: "Settings page work.".into(),
            }],
        };
        let all = render_start_context(&context, 1_000, &words);
        assert_eq!(all.recent_shown, 2);
        insta::assert_snapshot!(all.text);
        // A tight budget keeps whole items, newest work first, and drops the rest.
        let tight = render_start_context(&context, 51, &words);
        assert_eq!(tight.recent_shown, 1, "{}", tight.text);
        let tight = tight.text;
        assert!(tight.contains("cargo fmt"), "the rules come first: {tight}");
        assert!(tight.contains("Refund webhook test") && !tight.contains("Dark mode"), "{tight}");
        assert!(!tight.contains("Earlier sessions"));
        assert!(words(&tight) <= 51);
        let empty = render_start_context(&StartContext::default(), 1_000, &words);
        assert_eq!((empty.text.as_str(), empty.recent_shown), ("", 0));
    }

    #[test]
    fn a_prompt_matches_episodes_that_share_enough_of_its_words() {
        let a = keyword_list("refund webhook test mock server port");
        let b = keyword_list("dark mode toggle settings page");
        let c = keyword_list("refund totals report");
        let episodes =
            [("Refund webhook test", &a[..]), ("Dark mode", &b[..]), ("Refund report", &c[..])];
        let found =
            prompt_matches("the refund webhook test is failing again on CI", &episodes, 2, 0.4);
        assert_eq!(found.iter().map(|m| m.index).collect::<Vec<_>>(), [0]);
        assert_eq!(found[0].shared, ["refund", "webhook", "test"]);
        assert!(prompt_matches("ok push", &episodes, 2, 0.4).is_empty());
        assert!(prompt_matches("make the checkout page faster", &episodes, 2, 0.4).is_empty());
        let settings = prompt_matches("make the settings page faster", &episodes, 2, 0.4);
        assert_eq!(settings.iter().map(|m| m.index).collect::<Vec<_>>(), [1]);
    }
}
