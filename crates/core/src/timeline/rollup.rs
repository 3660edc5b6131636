//! What a timeline node says: its children summed up. The extractive rollup needs no model:
//! the names and subjects that run through the period, and its most salient episodes' titles.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::{telling::filler::is_generic, telling::keyword_list};

/// What a node (or an episode, as a day's child) says about its span.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NodeSummary {
    pub title: String,
    pub bullets: Vec<String>,
    pub keywords: Vec<String>,
    /// People, places and named things of the period, those in most of it first.
    #[serde(default)]
    pub names: Vec<String>,
    /// Episodes under it (1 for an episode).
    pub episodes: u64,
    /// Messages under it.
    pub messages: u64,
    /// How much the period holds that is worth telling: its episodes' salience summed.
    #[serde(default)]
    pub salience: f64,
    /// Each bullet's salience, so a parent picks its bullets among its children's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bullet_salience: Vec<f64>,
}

/// Keywords a node keeps.
const KEYWORDS: usize = 8;
/// Names a node keeps, and names its title shows.
const NAMES: usize = 6;
const TITLE_NAMES: usize = 2;
/// Subjects its title shows.
const TITLE_SUBJECTS: usize = 3;

/// The node over `children` (in time order) without a model.
///
/// - Bullets: the titles of the period's `max_bullets` most salient episodes, in time order,
///   chosen among the children's own bullets (a day's children are episodes).
/// - Names and keywords: those used by most children, then by the most salient ones; filler
///   and generic words are no keywords.
/// - Title: the leading names, then the subjects: the phrases of the children's titles that the
///   most children speak of ("Maya, Sintra: Webhook test, Sintra train, Tomato seedlings").
pub fn extractive_rollup(children: &[NodeSummary], max_bullets: usize) -> NodeSummary {
    let bullets = salient_bullets(children, max_bullets);
    let names = ranked(children, |c| &c.names, |_| true, NAMES);
    let keywords = ranked(children, |c| &c.keywords, |k| !is_generic(k), KEYWORDS);
    let title = node_title(children, &names);
    NodeSummary {
        title,
        bullet_salience: bullets.iter().map(|b| b.1).collect(),
        bullets: bullets.into_iter().map(|b| b.0).collect(),
        keywords,
        names,
        episodes: children.iter().map(|c| c.episodes).sum(),
        messages: children.iter().map(|c| c.messages).sum(),
        salience: children.iter().map(salience_of).sum(),
    }
}

/// A child's salience; a node written before salience was kept counts its messages.
fn salience_of(child: &NodeSummary) -> f64 {
    child.salience.max(child.messages as f64)
}

/// What a child offers as bullets: an episode its title, a node its bullets; each with its
/// salience (a node written before bullets had one shares its own among them).
fn highlights(child: &NodeSummary) -> Vec<(&str, f64)> {
    if child.bullets.is_empty() {
        return vec![(child.title.as_str(), salience_of(child))];
    }
    let even = salience_of(child) / child.bullets.len() as f64;
    child
        .bullets
        .iter()
        .enumerate()
        .map(|(i, b)| (b.as_str(), child.bullet_salience.get(i).copied().unwrap_or(even)))
        .collect()
}

/// The `max` most salient highlights of `children`, in time order, each title once.
fn salient_bullets(children: &[NodeSummary], max: usize) -> Vec<(String, f64)> {
    let mut all: Vec<(&str, f64)> = Vec::new();
    for (title, salience) in children.iter().flat_map(highlights) {
        match all.iter_mut().find(|(t, _)| *t == title) {
            Some(seen) => seen.1 += salience,
            None => all.push((title, salience)),
        }
    }
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by(|&a, &b| all[b].1.total_cmp(&all[a].1).then(a.cmp(&b)));
    order.truncate(max);
    order.sort_unstable();
    order.into_iter().map(|i| (all[i].0.to_owned(), all[i].1)).collect()
}

/// The words of `children` (by `of`) that `keep` keeps, ranked by how many children use them
/// (what the period was about, not one long episode), then by those children's salience, then
/// by first use.
fn ranked<'a>(
    children: &'a [NodeSummary],
    of: impl Fn(&'a NodeSummary) -> &'a Vec<String>,
    keep: impl Fn(&str) -> bool,
    max: usize,
) -> Vec<String> {
    let mut weight: HashMap<&str, (u64, f64, usize)> = HashMap::new();
    for child in children {
        for word in of(child).iter().filter(|w| keep(w)) {
            let next = weight.len();
            let entry = weight.entry(word.as_str()).or_insert((0, 0.0, next));
            entry.0 += 1;
            entry.1 += salience_of(child);
        }
    }
    let mut ranked: Vec<(&str, (u64, f64, usize))> = weight.into_iter().collect();
    ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(b.1.1.total_cmp(&a.1.1)).then(a.1.2.cmp(&b.1.2)));
    ranked.into_iter().take(max).map(|(w, _)| w.to_owned()).collect()
}

/// "Names: subject, subject". The subjects are phrases of the children's titles (their bullets
/// for a node), those that the most children speak of first (in their keywords or titles), a
/// title's head phrase before its others, the more salient title first; no two from one
/// title or sharing a word.
fn node_title(children: &[NodeSummary], names: &[String]) -> String {
    let mut titles: Vec<(&str, f64)> = children.iter().flat_map(highlights).collect();
    titles.sort_by(|a, b| b.1.total_cmp(&a.1));
    // What each child speaks of: its keywords and its titles' words, normalized alike.
    let spoken: Vec<HashSet<String>> = children
        .iter()
        .map(|c| {
            let titles = std::iter::once(&c.title).chain(&c.bullets);
            c.keywords.iter().cloned().chain(titles.flat_map(|t| keyword_list(t))).collect()
        })
        .collect();
    // Each phrase: how many children speak of it (a title's head counting half a child more),
    // the title it comes from, the phrase, its words.
    let mut phrases: Vec<(f64, usize, &str, Vec<String>)> = Vec::new();
    for (from, (title, _)) in titles.iter().enumerate() {
        for (n, phrase) in title.split([':', ',', ';']).map(str::trim).enumerate() {
            let words = keyword_list(phrase);
            if words.iter().all(|w| is_generic(w)) {
                continue;
            }
            let speaking = spoken.iter().filter(|s| words.iter().any(|w| s.contains(w))).count();
            let head = if n == 0 { 0.5 } else { 0.0 };
            phrases.push((speaking as f64 + head, from, phrase, words));
        }
    }
    // Best first; a stable sort keeps the more salient title, then the phrase's place. A
    // phrase keeps its capitals: a title's head was capitalized as its start, but it may as
    // well be a name ("Sintra train").
    phrases.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut subjects: Vec<&(f64, usize, &str, Vec<String>)> = Vec::new();
    for phrase in &phrases {
        if subjects.len() == TITLE_SUBJECTS {
            break;
        }
        let (_, from, text, words) = phrase;
        let is_a_name = names.iter().any(|n| n.eq_ignore_ascii_case(text));
        let taken = subjects.iter().any(|s| s.1 == *from || s.3.iter().any(|w| words.contains(w)));
        if !is_a_name && !taken {
            subjects.push(phrase);
        }
    }
    let subjects: Vec<&str> = subjects.iter().map(|s| s.2).collect();
    let shown: Vec<&str> = names.iter().take(TITLE_NAMES).map(String::as_str).collect();
    match (shown.is_empty(), subjects.is_empty()) {
        (true, true) => titles.first().map_or("Nothing remembered", |t| t.0).to_owned(),
        (false, true) => shown.join(", "),
        (true, false) => subjects.join(", "),
        (false, false) => format!("{}: {}", shown.join(", "), subjects.join(", ")),
    }
}

impl NodeSummary {
    /// An episode as a child of a node.
    pub fn of_episode(e: &crate::Episode) -> Self {
        Self {
            title: e.title.clone(),
            bullets: Vec::new(),
            keywords: e.keywords.clone(),
            names: names_in(&e.title, &e.summary),
            episodes: 1,
            messages: e.message_count(),
            salience: salience(e),
            bullet_salience: Vec::new(),
        }
    }
}

/// How much an episode is worth telling in its period: its size, how surprising it was where
/// it began, and how strong its memory is (FSRS stability, which grows each time it is used).
fn salience(e: &crate::Episode) -> f64 {
    let stability = e.fsrs.stability.unwrap_or(0.0).max(0.0);
    e.message_count() as f64 * (1.0 + e.surprise.clamp(0.0, 1.0)) * (1.0 + stability.ln_1p() / 4.0)
}

/// The names in an episode's title and summary: the authors its summary names ("Maya: …"),
/// and runs of capitalized words that do not open a sentence ("Pena Palace"), first seen
/// first. Only a title's first word opens it: its phrases keep their own capitals.
fn names_in(title: &str, summary: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |run: &mut Vec<&str>| {
        let name = run.join(" ");
        run.clear();
        let known = names.iter().any(|n| n.eq_ignore_ascii_case(&name));
        let names_something = name.split(' ').all(|w| {
            !is_generic(w)
                && !crate::telling::is_stopword(&w.to_lowercase())
                && !crate::recall::is_calendar_word(w)
        });
        if !name.is_empty() && !known && names_something {
            names.push(name);
        }
    };
    for (text, is_title) in [(summary, false), (title, true)] {
        let mut run: Vec<&str> = Vec::new();
        let mut opens = true;
        for token in text.split_whitespace() {
            let word = token.trim_matches(|c: char| !c.is_alphanumeric());
            let word = word.strip_suffix("'s").or(word.strip_suffix("’s")).unwrap_or(word);
            // "Lisbon", "LGBTQ"; not "I".
            let capital = word.chars().next().is_some_and(char::is_uppercase)
                && word.chars().filter(|c| c.is_alphabetic()).count() >= 2;
            let author = !is_title && opens && token.ends_with(':');
            // "I'll" is no name; "LeBron's" was "LeBron".
            if capital && (!opens || author) && !word.contains(['\'', '’']) {
                run.push(word);
            } else {
                add(&mut run);
            }
            if token.ends_with([',', '.', '!', '?', ':', ';', ')', ']']) {
                add(&mut run);
            }
            if !word.is_empty() {
                opens = !is_title && (author || token.ends_with(['.', '!', '?']));
            }
        }
        add(&mut run);
    }
    names
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

    fn child(title: &str, keywords: &[&str], names: &[&str], messages: u64) -> NodeSummary {
        NodeSummary {
            title: title.into(),
            keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
            names: names.iter().map(|k| (*k).to_owned()).collect(),
            episodes: 1,
            messages,
            salience: messages as f64,
            ..NodeSummary::default()
        }
    }

    fn episode(n: i64, title: &str, summary: &str, keywords: &[&str]) -> crate::Episode {
        crate::Episode {
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
            summary: summary.into(),
            keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
            surprise: 0.0,
            boundary_reason: crate::BoundaryReason::Flush,
            fsrs: crate::FsrsState::default(),
            told_by: crate::ToldBy::Fallback,
            told_note: None,
        }
    }

    #[test]
    fn a_rollup_names_who_and_what_ran_through_its_period() {
        let children = [
            child(
                "Lisbon trip: Alfama, tram 28",
                &["lisbon", "trip", "alfama"],
                &["Ana", "Lisbon"],
                6,
            ),
            child("Webhook test: mock server port", &["webhook", "test", "mock"], &["Ana"], 12),
            child(
                "Sintra train: Pena Palace",
                &["sintra", "train", "lisbon"],
                &["Ana", "Lisbon", "Pena Palace"],
                4,
            ),
            child("Wow: great, awesome", &["wow", "great", "awesome"], &["Ana"], 3),
            child(
                "Webhook test fixed: readiness check",
                &["webhook", "test", "readiness"],
                &["Ana"],
                8,
            ),
        ];
        let node = extractive_rollup(&children, 3);
        assert_eq!(node.names[..3], ["Ana", "Lisbon", "Pena Palace"], "most children first");
        assert_eq!(node.title, "Ana, Lisbon: Webhook test, Lisbon trip, Sintra train");
        assert_eq!(node.keywords[..4], ["webhook", "test", "lisbon", "mock"]);
        assert!(node.keywords.iter().all(|k| !["wow", "great", "awesome"].contains(&k.as_str())));
        assert_eq!(
            node.bullets,
            [
                "Lisbon trip: Alfama, tram 28",
                "Webhook test: mock server port",
                "Webhook test fixed: readiness check"
            ],
            "the three most salient, in time order"
        );
        assert_eq!(node.bullet_salience, [6.0, 12.0, 8.0]);
        assert_eq!((node.episodes, node.messages, node.salience), (5, 33, 33.0));
    }

    #[test]
    fn a_parent_picks_its_bullets_among_its_childrens_by_salience() {
        let day = |bullets: &[(&str, f64)]| NodeSummary {
            title: "a day".into(),
            bullets: bullets.iter().map(|b| b.0.to_owned()).collect(),
            bullet_salience: bullets.iter().map(|b| b.1).collect(),
            salience: bullets.iter().map(|b| b.1).sum(),
            episodes: bullets.len() as u64,
            ..NodeSummary::default()
        };
        let week = extractive_rollup(
            &[
                day(&[("Tax return: receipts", 2.0), ("Roof leak: the roofer", 30.0)]),
                day(&[("Piano lesson: scales", 5.0)]),
                day(&[("Roof repaired: new tiles", 20.0), ("Groceries", 1.0)]),
            ],
            2,
        );
        assert_eq!(week.bullets, ["Roof leak: the roofer", "Roof repaired: new tiles"]);
        assert_eq!(week.episodes, 5);
        // A node written before bullets had a salience shares its own evenly.
        let old = NodeSummary {
            bullets: vec!["Old one".into(), "Old two".into()],
            messages: 100,
            ..NodeSummary::default()
        };
        let month = extractive_rollup(&[week, old], 1);
        assert_eq!(month.bullets, ["Old one"], "50 each beats 30");
    }

    #[test]
    fn an_episode_brings_its_names_and_its_salience() {
        let mut e = episode(
            1,
            "Sintra train: Pena Palace, Lisbon travel card",
            "Maya: Is there a Lisbon travel card for the Sintra train? In May, I mean. assistant: \
             The Viva Viagem card covers it. Thanks, Maya!",
            &["sintra", "card"],
        );
        let node = NodeSummary::of_episode(&e);
        assert_eq!(node.names, ["Maya", "Lisbon", "Sintra", "Viva Viagem", "Pena Palace"]);
        assert_eq!(node.salience, 2.0, "two messages, no surprise, no stability yet");
        e.surprise = 1.0;
        e.fsrs.stability = Some(std::f64::consts::E - 1.0);
        assert_eq!(NodeSummary::of_episode(&e).salience, 2.0 * 2.0 * 1.25);
    }

    #[test]
    fn a_session_is_told_from_its_episodes_in_time_order() {
        // Listed newest first, as the store lists them.
        let episodes = [
            episode(2, "Deploy fixed", "", &["deploy", "port"]),
            episode(1, "Deploy fails", "", &["deploy", "merge"]),
        ];
        let session = session_summary(&episodes, 5);
        assert_eq!(session.bullets, ["Deploy fails", "Deploy fixed"]);
        assert_eq!(session.keywords[0], "deploy");
        assert_eq!((session.episodes, session.messages), (2, 4));
    }

    #[test]
    fn an_empty_or_wordless_node_still_reads() {
        assert_eq!(extractive_rollup(&[], 5).title, "Nothing remembered");
        let node = extractive_rollup(&[child("Hello", &["hello"], &[], 1)], 5);
        assert_eq!((node.title.as_str(), node.bullets.len()), ("Hello", 1));
    }
}
