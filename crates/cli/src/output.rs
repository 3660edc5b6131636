//! How answers are shown to people. `--json` prints the answer itself: the same wire types,
//! with the same fields, as the HTTP API and the MCP tools.

use epimem_api::wire::{EpisodeOut, EpisodeVersionOut, MemoryOut};
use epimem_core::Timestamp;
use serde::Serialize;

pub(crate) fn json_line(value: &impl Serialize) -> String {
    serde_json::to_string(value).expect("output types serialize")
}

/// The minutes of an RFC 3339 time the API wrote (`2026-01-30 09:15`), or the text as it is.
fn minute(rfc3339: &str) -> chrono::DateTime<chrono::Utc> {
    Timestamp::parse_rfc3339(rfc3339).map(Timestamp::to_datetime).unwrap_or_default()
}

/// `2026-01-30 09:15 → 10:02` (the end's date only when it differs).
fn span(e: &EpisodeOut) -> String {
    let (s, t) = (minute(&e.start), minute(&e.end));
    if s.date_naive() == t.date_naive() {
        format!("{} → {}", s.format("%Y-%m-%d %H:%M"), t.format("%H:%M"))
    } else {
        format!("{} → {}", s.format("%Y-%m-%d %H:%M"), t.format("%Y-%m-%d %H:%M"))
    }
}

pub(crate) fn episode_line(e: &EpisodeOut) -> String {
    format!(
        "{}  {}  #{}-{}  {}  [{}]\n    {}",
        e.id,
        e.conversation,
        e.first_seq,
        e.last_seq,
        span(e),
        e.boundary_reason,
        e.title
    )
}

/// A recall's hit, with why it came back.
pub(crate) fn hit_text(rank: usize, e: &EpisodeOut) -> String {
    let rank_of = |r: Option<usize>| r.map_or("-".to_owned(), |r| r.to_string());
    format!(
        "{rank}. {}  (score {:.4}: bm25 #{}, vector #{}, retrievability {:.2}{})\n   {}  {}  #{}-{}  {}\n   {}",
        e.title,
        e.score.unwrap_or_default(),
        rank_of(e.lexical_rank),
        rank_of(e.vector_rank),
        e.retrievability.unwrap_or_default(),
        if e.date_match == Some(true) { ", on the date asked about" } else { "" },
        e.id,
        e.conversation,
        e.first_seq,
        e.last_seq,
        span(e),
        e.summary
    )
}

/// One episode in full: what it is, the work it did, its messages, how strong its memory is
/// and what it said before it was corrected.
pub(crate) fn detail_text(e: &EpisodeOut) -> String {
    let mut out = format!(
        "{}\n{}\nconversation {}  messages #{}-{}  {}  ended by {}  surprise {:.2}\nkeywords: {}\n\n{}\n",
        e.title,
        e.id,
        e.conversation,
        e.first_seq,
        e.last_seq,
        span(e),
        e.boundary_reason,
        e.surprise,
        e.keywords.join(", "),
        e.summary
    );
    // Who cut and told it matters only once a model is in play.
    if e.told_by == epimem_core::ToldBy::Llm.as_str() || e.told_note.is_some() {
        out.push_str(&format!("\ncut and told by: {}", e.told_by));
        if let Some(note) = &e.told_note {
            out.push_str(&format!(" ({note})"));
        }
        out.push('\n');
    }
    if let Some(s) = &e.skeleton {
        out.push_str(&format!(
            "\nwork: {} prompt(s) (#{}-#{}), {}, {} min\n",
            s.prompts,
            s.first_prompt.map_or("-".into(), |p| p.to_string()),
            s.last_prompt.map_or("-".into(), |p| p.to_string()),
            epimem_core::work::action_counts(s.investigate, s.execute, s.failures),
            (s.duration_seconds / 60.0) as u64
        ));
        if !s.hot_files.is_empty() {
            out.push_str(&format!("hot files: {}\n", s.hot_files.join(", ")));
        }
        if !s.failed.is_empty() {
            out.push_str(&format!("failed: {}\n", s.failed.join("; ")));
        }
        if !s.commits.is_empty() {
            out.push_str(&format!("commits: {}\n", s.commits.join("; ")));
        }
    }
    let messages = e.messages.as_deref().unwrap_or_default();
    let author = |m: &epimem_api::wire::MessageOut| m.speaker.clone().unwrap_or(m.role.clone());
    let (context, own): (Vec<_>, Vec<_>) = messages.iter().partition(|m| m.context);
    if !context.is_empty() {
        out.push_str("\ncontext carried from the previous episode:\n");
        for m in context {
            out.push_str(&format!("  [{}] {}: {}\n", m.seq, author(m), m.content));
        }
    }
    out.push_str("\nmessages:\n");
    for m in own {
        let time = minute(&m.timestamp).format("%H:%M");
        out.push_str(&format!("  [{}] {time} {}: {}\n", m.seq, author(m), m.content));
    }
    if let Some(memory) = &e.memory {
        out.push_str(&memory_text(memory, e.versions.as_deref().unwrap_or_default()));
    }
    out
}

/// How strong the memory is and what the episode said before it was corrected.
fn memory_text(memory: &MemoryOut, versions: &[EpisodeVersionOut]) -> String {
    let day =
        |t: &Option<String>| t.as_deref().map_or("-", |t| t.get(..10).unwrap_or(t)).to_owned();
    let mut out = match memory.stability_days {
        Some(stability) => format!(
            "\nmemory: recall {:.2} now, stability {stability:.1} days, due {}, {}\n",
            memory.retrievability,
            day(&memory.due),
            match memory.reviews.len() {
                0 => "no review recorded".to_owned(),
                n => format!("{n} review(s) recorded"),
            }
        ),
        None => "\nmemory: not reviewed yet\n".to_owned(),
    };
    if !versions.is_empty() {
        out.push_str("earlier versions:\n");
        for v in versions {
            let replaced = v.replaced_at.get(..16).unwrap_or(&v.replaced_at).replace('T', " ");
            out.push_str(&format!(
                "  {} (replaced {replaced}): {} | {}\n",
                v.version, v.title, v.summary
            ));
        }
    }
    out
}
