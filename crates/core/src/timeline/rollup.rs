//! What a timeline node says: its children summed up. The extractive rollup needs no model: the
//! words its children use most, and the titles of its largest children as bullets.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// What a node (or an episode, as a day's child) says about its span.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NodeSummary {
    pub title: String,
    pub bullets: Vec<String>,
    pub keywords: Vec<String>,
    /// Episodes under it (1 for an episode).
    pub episodes: u64,
    /// Messages under it.
    pub messages: u64,
}

/// Keywords a node keeps.
const KEYWORDS: usize = 8;

/// The node over `children` (in time order) without a model: keywords are the children's,
/// ranked by how many children use them (what the period was about, not one long episode),
/// then by the messages of those children, then by first use; the title names the top three; the bullets are the titles of the `max_bullets`
/// largest children, in time order.
pub fn extractive_rollup(children: &[NodeSummary], max_bullets: usize) -> NodeSummary {
    // Per keyword: children using it, their messages, order of first use.
    let mut weight: HashMap<&str, (u64, u64, usize)> = HashMap::new();
    for child in children {
        for keyword in &child.keywords {
            let next = weight.len();
            let entry = weight.entry(keyword.as_str()).or_insert((0, 0, next));
            entry.0 += 1;
            entry.1 += child.messages;
        }
    }
    let mut ranked: Vec<(&str, (u64, u64, usize))> = weight.into_iter().collect();
    ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(b.1.1.cmp(&a.1.1)).then(a.1.2.cmp(&b.1.2)));
    let keywords: Vec<String> =
        ranked.iter().take(KEYWORDS).map(|(k, _)| (*k).to_owned()).collect();
    let title = match keywords.len() {
        0 => "Nothing remembered".to_owned(),
        1 => keywords[0].clone(),
        n => {
            let top = &keywords[..n.min(3)];
            format!("{} and {}", top[..top.len() - 1].join(", "), top[top.len() - 1])
        }
    };
    let mut largest: Vec<usize> = (0..children.len()).collect();
    largest.sort_by(|&a, &b| children[b].messages.cmp(&children[a].messages).then(a.cmp(&b)));
    largest.truncate(max_bullets);
    largest.sort_unstable();
    NodeSummary {
        title,
        bullets: largest.iter().map(|&i| children[i].title.clone()).collect(),
        keywords,
        episodes: children.iter().map(|c| c.episodes).sum(),
        messages: children.iter().map(|c| c.messages).sum(),
    }
}

impl NodeSummary {
    /// An episode as a child of a node.
    pub fn of_episode(e: &crate::Episode) -> Self {
        Self {
            title: e.title.clone(),
            bullets: Vec::new(),
            keywords: e.keywords.clone(),
            episodes: 1,
            messages: e.message_count(),
        }
    }
}

/// A session (a conversation) told from its episodes, as a node is from its children: what it
/// was about, and its largest episodes' titles in time order.
pub fn session_summary(episodes: &[crate::Episode], max_bullets: usize) -> NodeSummary {
    let mut ordered: Vec<&crate::Episode> = episodes.iter().collect();
    ordered.sort_by_key(|e| (e.start, e.first_seq));
    let children: Vec<NodeSummary> = ordered.into_iter().map(NodeSummary::of_episode).collect();
    extractive_rollup(&children, max_bullets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child(title: &str, keywords: &[&str], messages: u64) -> NodeSummary {
        NodeSummary {
            title: title.into(),
            bullets: Vec::new(),
            keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
            episodes: 1,
            messages,
        }
    }

    #[test]
    fn a_rollup_names_what_its_children_talk_about_most() {
        let children = [
            child("Lisbon trip: Sintra day trip", &["lisbon", "sintra", "trip"], 6),
            child("Webhook test fails after the merge", &["webhook", "test", "merge"], 12),
            child("Lisbon trip: travel card", &["lisbon", "card"], 4),
            child("Webhook test fixed", &["webhook", "test", "port"], 8),
        ];
        let node = extractive_rollup(&children, 3);
        assert_eq!(node.keywords[..3], ["webhook", "test", "lisbon"]);
        assert_eq!(node.title, "webhook, test and lisbon");
        assert_eq!(
            node.bullets,
            [
                "Lisbon trip: Sintra day trip",
                "Webhook test fails after the merge",
                "Webhook test fixed"
            ],
            "the three largest, in time order"
        );
        assert_eq!((node.episodes, node.messages), (4, 30));
    }

    #[test]
    fn a_session_is_told_from_its_episodes_in_time_order() {
        let episode = |n: i64, title: &str, keywords: &[&str]| crate::Episode {
            id: crate::EpisodeId(format!("ep_{n}")),
            conversation: crate::ConversationKey::new("t", "c"),
            user: None,
            agent: None,
            first_seq: n as u64 * 10 + 1,
            last_seq: n as u64 * 10 + 2,
            context_first_seq: None,
            start: crate::Timestamp(n * 1000),
            end: crate::Timestamp(n * 1000 + 500),
            title: title.into(),
            summary: String::new(),
            keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
            surprise: 0.0,
            boundary_reason: crate::BoundaryReason::Flush,
            fsrs: crate::FsrsState::default(),
            told_by: crate::ToldBy::Fallback,
            told_note: None,
        };
        // Listed newest first, as the store lists them.
        let episodes = [
            episode(2, "Deploy fixed", &["deploy", "port"]),
            episode(1, "Deploy fails", &["deploy", "merge"]),
        ];
        let session = session_summary(&episodes, 5);
        assert_eq!(session.bullets, ["Deploy fails", "Deploy fixed"]);
        assert_eq!(session.keywords[0], "deploy");
        assert_eq!((session.episodes, session.messages), (2, 4));
    }

    #[test]
    fn an_empty_or_wordless_node_still_reads() {
        assert_eq!(extractive_rollup(&[], 5).title, "Nothing remembered");
        let node = extractive_rollup(&[child("Hello", &["hello"], 1)], 5);
        assert_eq!((node.title.as_str(), node.bullets.len()), ("hello", 1));
    }
}
