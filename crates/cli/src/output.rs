//! How results are shown to people, and JSON lines (episodes in the server's wire types, whose
//! field names are a contract).

use epimem_core::Episode;
use epimem_engine::RecallHit;
use epimem_store::EpisodeDetail;
use serde::Serialize;

pub(crate) fn json_line(value: &impl Serialize) -> String {
    serde_json::to_string(value).expect("output types serialize")
}

/// `2026-01-30 09:15 → 10:02` (the end's date only when it differs).
fn span(e: &Episode) -> String {
    let (s, t) = (e.start.to_datetime(), e.end.to_datetime());
    if s.date_naive() == t.date_naive() {
        format!("{} → {}", s.format("%Y-%m-%d %H:%M"), t.format("%H:%M"))
    } else {
        format!("{} → {}", s.format("%Y-%m-%d %H:%M"), t.format("%Y-%m-%d %H:%M"))
    }
}

pub(crate) fn episode_line(e: &Episode) -> String {
    format!(
        "{}  {}  #{}-{}  {}  [{}]\n    {}",
        e.id,
        e.conversation.conversation,
        e.first_seq,
        e.last_seq,
        span(e),
        e.boundary_reason.as_str(),
        e.title
    )
}

pub(crate) fn hit_text(rank: usize, h: &RecallHit) -> String {
    let e = &h.episode;
    format!(
        "{rank}. {}  (score {:.4}: bm25 #{}, vector #{}, retrievability {:.2}{})\n   {}  {}  #{}-{}  {}\n   {}",
        e.title,
        h.score,
        h.lexical_rank.map_or("-".to_owned(), |r| r.to_string()),
        h.vector_rank.map_or("-".to_owned(), |r| r.to_string()),
        h.retrievability,
        if h.date_match { ", on the date asked about" } else { "" },
        e.id,
        e.conversation.conversation,
        e.first_seq,
        e.last_seq,
        span(e),
        e.summary
    )
}

pub(crate) fn detail_text(d: &EpisodeDetail) -> String {
    let e = &d.episode;
    let mut out = format!(
        "{}\n{}\nconversation {}  messages #{}-{}  {}  ended by {}  surprise {:.2}\nkeywords: {}\n\n{}\n",
        e.title,
        e.id,
        e.conversation.conversation,
        e.first_seq,
        e.last_seq,
        span(e),
        e.boundary_reason.as_str(),
        e.surprise,
        e.keywords.join(", "),
        e.summary
    );
    // Who cut and told it matters only once a model is in play.
    if e.told_by == epimem_core::ToldBy::Llm || e.told_note.is_some() {
        out.push_str(&format!("\ncut and told by: {}", e.told_by.as_str()));
        if let Some(note) = &e.told_note {
            out.push_str(&format!(" ({note})"));
        }
        out.push('\n');
    }
    if let Some(s) = epimem_core::work::skeleton(&d.messages) {
        out.push_str(&format!(
            "\nwork: {} prompt(s) (#{}-#{}), {}, {} min\n",
            s.prompts,
            s.first_prompt.map_or("-".into(), |p| p.to_string()),
            s.last_prompt.map_or("-".into(), |p| p.to_string()),
            s.counts(),
            s.duration_ms / 60_000
        ));
        if !s.hot_files.is_empty() {
            out.push_str(&format!("hot files: {}\n", s.files().join(", ")));
        }
        if !s.failed.is_empty() {
            out.push_str(&format!("failed: {}\n", s.failed.join("; ")));
        }
        if !s.commits.is_empty() {
            out.push_str(&format!("commits: {}\n", s.commits.join("; ")));
        }
    }
    if !d.context.is_empty() {
        out.push_str("\ncontext carried from the previous episode:\n");
        for m in &d.context {
            out.push_str(&format!("  [{}] {}: {}\n", m.seq, m.author(), m.content));
        }
    }
    out.push_str("\nmessages:\n");
    for m in &d.messages {
        let time = m.timestamp.to_datetime().format("%H:%M");
        out.push_str(&format!("  [{}] {time} {}: {}\n", m.seq, m.author(), m.content));
    }
    out
}
