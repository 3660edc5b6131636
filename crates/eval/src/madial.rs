//! Reading MADial-Bench (He et al., NAACL 2025): an archive of dated events of two users, and
//! dialogues in which one assistant turn should bring up some of them. Nobody asks about the
//! past there: the user talks about today, and the memory that bears on it is implied.

use std::{collections::HashMap, path::Path};

use anyhow::{Context, Result, bail};
use chrono::NaiveDate;
use epimem_core::Timestamp;
use serde::Deserialize;

use super::locomo::Split;

/// One event of the archive: whose it is (the user it names), when, and what happened.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) id: u32,
    pub(crate) user: String,
    pub(crate) time: Timestamp,
    pub(crate) text: String,
}

/// One line of a dialogue: who said it (`None` where the data names nobody) and what.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub(crate) speaker: Option<String>,
    pub(crate) text: String,
}

/// A dialogue: its user, its lines (without `<BOD>` and `<EOD>`), the first assistant turn
/// that should draw on the archive (an index into `lines`) and the events it should draw on.
#[derive(Debug, Clone)]
pub(crate) struct Dialogue {
    pub(crate) split: Split,
    pub(crate) user: String,
    pub(crate) lines: Vec<Line>,
    pub(crate) test_turn: usize,
    pub(crate) relevant: Vec<u32>,
}

/// How a recall at the test turn is asked: what an agent sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub(crate) enum Form {
    /// The user's last message (what the hooks send).
    #[serde(rename = "last_message")]
    UserMessage,
    /// The last three utterances, oldest first.
    #[serde(rename = "last_three")]
    ThreeUtterances,
    /// What `next-turn` sends (`epimem_core::recall::conversation_query`): the user's last message,
    /// and for a statement the words the conversation before it used most.
    #[serde(rename = "last_with_salient")]
    NextTurn,
}

impl Form {
    pub(crate) const ALL: [Form; 3] = [Form::UserMessage, Form::ThreeUtterances, Form::NextTurn];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Form::UserMessage => "last message",
            Form::ThreeUtterances => "last three utterances",
            Form::NextTurn => "last message and, for a statement, the salient words",
        }
    }
}

impl Dialogue {
    /// The query an agent would send at the test turn, asked in `form`.
    pub(crate) fn query(&self, form: Form) -> String {
        let before = &self.lines[..self.test_turn];
        match form {
            Form::UserMessage => before
                .iter()
                .rev()
                .find(|l| l.speaker.as_deref() == Some(self.user.as_str()))
                .or(before.last())
                .map(|l| l.text.clone())
                .unwrap_or_default(),
            Form::ThreeUtterances => {
                let from = before.len().saturating_sub(3);
                before[from..].iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n")
            }
            Form::NextTurn => {
                let last = self.query(Form::UserMessage);
                let at = before.iter().rposition(|l| l.text == last).unwrap_or(before.len());
                let earlier: Vec<&str> = before[..at].iter().map(|l| l.text.as_str()).collect();
                epimem_core::recall::conversation_query(&last, &earlier)
            }
        }
    }
}

/// The archive and the dialogues of a MADial-Bench folder.
#[derive(Debug)]
pub(crate) struct Madial {
    pub(crate) events: Vec<Event>,
    pub(crate) dialogues: Vec<Dialogue>,
}

impl Madial {
    /// The users, each once, in order of their first dialogue.
    pub(crate) fn users(&self) -> Vec<&str> {
        let mut users: Vec<&str> = Vec::new();
        for d in &self.dialogues {
            if !users.contains(&d.user.as_str()) {
                users.push(&d.user);
            }
        }
        users
    }

    /// The moment the dialogues are held: the day after the newest event.
    pub(crate) fn now(&self) -> Timestamp {
        let newest = self.events.iter().map(|e| e.time.0).max().unwrap_or(0);
        Timestamp(newest + 24 * 3_600_000)
    }
}

/// The archive's file, and each part's dialogues: the shared odd-numbered half is the tuning
/// part; the other half, when a folder holds it, the test part.
const ARCHIVE: &str = "memory.en.jsonl";
const PARTS: [(&str, Split); 2] =
    [("dialogues.en.dev.jsonl", Split::Tuning), ("dialogues.en.test.jsonl", Split::Test)];

#[derive(Deserialize)]
struct RawEvent {
    time: String,
    event: String,
}

#[derive(Deserialize)]
struct RawDialogue {
    dialogue: Vec<String>,
    #[serde(rename = "test-turn")]
    test_turn: Vec<usize>,
    #[serde(rename = "relevant-id")]
    relevant: Vec<u32>,
}

/// Reads `folder`: the archive, and the dialogues of each part it holds (the tuning part is
/// required).
pub(crate) fn load(folder: &Path) -> Result<Madial> {
    let mut dialogues = Vec::new();
    for (file, split) in PARTS {
        let path = folder.join(file);
        if split == Split::Test && !path.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let at = || format!("{} line {}", path.display(), i + 1);
            let raw: RawDialogue = serde_json::from_str(line).with_context(at)?;
            dialogues.push(dialogue(raw, split).with_context(at)?);
        }
    }
    let users: Vec<String> = {
        let mut users: Vec<String> = dialogues.iter().map(|d| d.user.clone()).collect();
        users.sort();
        users.dedup();
        users
    };
    let path = folder.join(ARCHIVE);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = || format!("{} line {}", path.display(), i + 1);
        let raw: HashMap<String, RawEvent> = serde_json::from_str(line).with_context(at)?;
        for (id, raw) in raw {
            let id: u32 = id.parse().with_context(|| format!("{}: event id {id:?}", at()))?;
            events.push(event(id, raw, &users).with_context(at)?);
        }
    }
    events.sort_by_key(|e| e.id);
    let known: std::collections::HashSet<u32> = events.iter().map(|e| e.id).collect();
    if let Some(d) = dialogues.iter().find(|d| d.relevant.iter().any(|r| !known.contains(r))) {
        bail!("a dialogue of {} names an event the archive does not hold", d.user);
    }
    Ok(Madial { events, dialogues })
}

/// An event, given to the user its text names.
fn event(id: u32, raw: RawEvent, users: &[String]) -> Result<Event> {
    let day = NaiveDate::parse_from_str(&raw.time, "%Y-%m-%d")
        .with_context(|| format!("event {id}: unreadable time {:?}", raw.time))?;
    let noon = day.and_hms_opt(12, 0, 0).expect("noon exists").and_utc();
    let named: Vec<&String> = users.iter().filter(|u| raw.event.contains(u.as_str())).collect();
    let [user] = named[..] else {
        bail!("event {id} names {} of the users {users:?}, not one", named.len());
    };
    Ok(Event { id, user: user.clone(), time: Timestamp(noon.timestamp_millis()), text: raw.event })
}

fn dialogue(raw: RawDialogue, split: Split) -> Result<Dialogue> {
    // `<BOD>` is line 0 of the data's indices; it is left out here.
    let lines: Vec<Line> = raw.dialogue.iter().skip(1).filter_map(|l| parse_line(l)).collect();
    let Some(&test) = raw.test_turn.iter().min() else { bail!("no test turn") };
    if test == 0 || test > lines.len() {
        bail!("test turn {test} is outside the dialogue");
    }
    let user = lines
        .iter()
        .filter_map(|l| l.speaker.as_deref())
        .find(|s| *s != "Assistant")
        .context("no user speaks")?
        .to_owned();
    Ok(Dialogue { split, user, lines, test_turn: test - 1, relevant: raw.relevant })
}

/// `<Name>: "text"` as (name, text); a line that names nobody keeps its text. `<EOD>` is none.
fn parse_line(raw: &str) -> Option<Line> {
    let raw = raw.trim();
    if raw.is_empty() || raw == "<EOD>" || raw == "<BOD>" {
        return None;
    }
    let unquote = |t: &str| t.trim().trim_matches('"').trim().to_owned();
    if let Some(rest) = raw.strip_prefix('<')
        && let Some((name, text)) = rest.split_once(">:")
        && !name.contains(' ')
    {
        return Some(Line { speaker: Some(name.to_owned()), text: unquote(text) });
    }
    let text = raw.trim_start_matches('<').trim_end_matches('>');
    Some(Line { speaker: None, text: unquote(text) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(lines: &[&str], test: usize) -> RawDialogue {
        RawDialogue {
            dialogue: lines.iter().map(|l| format!("{l}\n")).collect(),
            test_turn: vec![test],
            relevant: vec![1],
        }
    }

    #[test]
    fn a_dialogue_is_asked_with_what_came_before_its_test_turn() {
        let d = dialogue(
            raw(
                &[
                    "<BOD>",
                    "<Bart>: \"I'm performing at the party!\"",
                    "<Assistant>: \"Great!\"",
                    "\"What will you wear?\"",
                    "<Bart>: \"Something special.\"",
                    "<Assistant>: \"Remember your dance at Christmas?\"",
                    "<EOD>",
                ],
                5,
            ),
            Split::Tuning,
        )
        .unwrap();
        assert_eq!(d.user, "Bart");
        assert_eq!(d.test_turn, 4);
        assert_eq!(d.lines[2].speaker, None, "a line naming nobody is kept");
        assert_eq!(d.query(Form::UserMessage), "Something special.");
        assert_eq!(
            d.query(Form::ThreeUtterances),
            "Great!\nWhat will you wear?\nSomething special."
        );
    }

    #[test]
    fn an_event_belongs_to_the_user_it_names() {
        let users = ["Bart".to_owned(), "Lisa".to_owned()];
        let e = event(3, RawEvent { time: "2023-03-07".into(), event: "Lisa won.".into() }, &users)
            .unwrap();
        assert_eq!(
            (e.user.as_str(), e.time.to_rfc3339().as_str()),
            ("Lisa", "2023-03-07T12:00:00Z")
        );
        let both = RawEvent { time: "2023-03-07".into(), event: "Lisa and Bart".into() };
        assert!(event(4, both, &users).is_err());
        let bad_date = RawEvent { time: "March".into(), event: "Lisa".into() };
        assert!(event(5, bad_date, &users).is_err());
    }
}
