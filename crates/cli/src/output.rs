//! How results are shown: JSON lines with stable field names, or text for people.

use epimem_core::{Episode, Message};
use epimem_engine::RecallHit;
use epimem_store::EpisodeDetail;
use serde::Serialize;

/// An episode as JSON. Field names are a public contract: add, never rename.
#[derive(Debug, Serialize)]
pub(crate) struct EpisodeJson<'a> {
    id: &'a str,
    tenant: &'a str,
    conversation: &'a str,
    first_seq: u64,
    last_seq: u64,
    message_count: u64,
    context_first_seq: Option<u64>,
    start: String,
    end: String,
    title: &'a str,
    summary: &'a str,
    keywords: &'a [String],
    surprise: f64,
    boundary_reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lexical_rank: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vector_rank: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    similarity: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retrievability: Option<f64>,
    /// The episode is from a date the query names.
    #[serde(skip_serializing_if = "Option::is_none")]
    date_match: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<Vec<MessageJson<'a>>>,
}

#[derive(Debug, Serialize)]
pub(crate) struct MessageJson<'a> {
    seq: u64,
    role: &'static str,
    speaker: Option<&'a str>,
    timestamp: String,
    content: &'a str,
    context: bool,
}

impl<'a> EpisodeJson<'a> {
    pub(crate) fn new(e: &'a Episode) -> Self {
        Self {
            id: &e.id.0,
            tenant: &e.conversation.tenant,
            conversation: &e.conversation.conversation,
            first_seq: e.first_seq,
            last_seq: e.last_seq,
            message_count: e.message_count(),
            context_first_seq: e.context_first_seq,
            start: e.start.to_rfc3339(),
            end: e.end.to_rfc3339(),
            title: &e.title,
            summary: &e.summary,
            keywords: &e.keywords,
            surprise: e.surprise,
            boundary_reason: e.boundary_reason.as_str(),
            score: None,
            lexical_rank: None,
            vector_rank: None,
            similarity: None,
            retrievability: None,
            date_match: None,
            messages: None,
        }
    }

    pub(crate) fn hit(h: &'a RecallHit) -> Self {
        Self {
            score: Some(h.score),
            lexical_rank: h.lexical_rank,
            vector_rank: h.vector_rank,
            similarity: h.similarity,
            retrievability: Some(h.retrievability),
            date_match: Some(h.date_match),
            ..Self::new(&h.episode)
        }
    }

    pub(crate) fn detail(d: &'a EpisodeDetail) -> Self {
        let context = d.context.iter().map(|m| MessageJson::new(m, true));
        let messages = d.messages.iter().map(|m| MessageJson::new(m, false));
        Self { messages: Some(context.chain(messages).collect()), ..Self::new(&d.episode) }
    }
}

impl<'a> MessageJson<'a> {
    fn new(m: &'a Message, context: bool) -> Self {
        Self {
            seq: m.seq,
            role: m.role.as_str(),
            speaker: m.speaker.as_deref(),
            timestamp: m.timestamp.to_rfc3339(),
            content: &m.content,
            context,
        }
    }
}

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
