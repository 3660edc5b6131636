//! `epimem eval recall --dataset madial`: memory a conversation implies. Each event of
//! MADial-Bench's archive is stored as its own one-message conversation, dated at its time,
//! in its user's memory (a tenant each); at each dialogue's test turn recall is asked with
//! what an agent sends (the user's last message, or the last three utterances), and a block
//! should hold an event the assistant brings up. Beside it, how the ranking orders the
//! events (the share of the relevant ones in its first five) against a plain cosine over the
//! same vectors, and new tasks asked of the same memories, which should get nothing.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    fmt::Write as _,
    io::Write as _,
    path::Path,
    process::ExitCode,
};

use anyhow::{Context, Result};
use epimem_api::{Memory, MessageInput, RecallQuery};
use epimem_app::{config::AppConfig, open_on};
use epimem_core::{ConversationKey, EpisodeId, Role, Scope};
use serde::Serialize;

use super::{
    locomo::Split,
    madial::{self, Form, Madial},
    negatives::{self, Setting},
    prompts::Prompt,
};
use crate::json_line;

/// The budget MADial's blocks are judged at: a few events, not a conversation's worth.
pub(crate) const BUDGET: usize = 500;
/// The first events of a ranking that its share is read in (as the authors report theirs).
const TOP: usize = 5;

/// What the run is asked to do.
#[derive(Debug)]
pub(crate) struct Options<'a> {
    pub(crate) folder: &'a Path,
    pub(crate) settings: Vec<Setting>,
    pub(crate) new_tasks: Vec<Prompt>,
    pub(crate) json: bool,
    pub(crate) dump_lines: Option<&'a Path>,
}

/// Blocks of one part, form and setting.
#[derive(Debug, Default, Clone, Serialize)]
pub(crate) struct Sums {
    dialogues: usize,
    /// Blocks that are not empty.
    answered: usize,
    /// Blocks holding at least one relevant event.
    hit: usize,
    /// The share of a dialogue's relevant events in its block, summed.
    held: f64,
    /// Events in a block, summed.
    events: usize,
    tokens: usize,
}

impl Sums {
    fn add(&mut self, relevant: &[u32], block: &[u32], tokens: usize) {
        let found = relevant.iter().filter(|r| block.contains(r)).count();
        self.dialogues += 1;
        self.answered += usize::from(!block.is_empty());
        self.hit += usize::from(found > 0);
        self.held += found as f64 / relevant.len().max(1) as f64;
        self.events += block.len();
        self.tokens += tokens;
    }

    fn json(&self) -> serde_json::Value {
        let n = self.dialogues.max(1) as f64;
        serde_json::json!({
            "dialogues": self.dialogues,
            "relevant_in_block": self.hit as f64 / n,
            "held": self.held / n,
            "events": self.events as f64 / n,
            "tokens": self.tokens as f64 / n,
            "empty": 1.0 - self.answered as f64 / n,
        })
    }
}

/// How a ranking orders the events: a relevant one among the first five, and the share of
/// the relevant ones there, summed over dialogues.
#[derive(Debug, Default, Clone, Copy)]
struct Ranked {
    dialogues: usize,
    hit: usize,
    share: f64,
}

impl Ranked {
    fn add(&mut self, relevant: &[u32], first: &[u32]) {
        let found = relevant.iter().filter(|r| first.contains(r)).count();
        self.dialogues += 1;
        self.hit += usize::from(found > 0);
        self.share += found as f64 / relevant.len().max(1) as f64;
    }

    fn json(&self) -> serde_json::Value {
        let n = self.dialogues.max(1) as f64;
        serde_json::json!({"hit": self.hit as f64 / n, "share": self.share / n})
    }
}

/// The rankings compared.
const RANKINGS: [&str; 3] = ["episodes", "turns", "cosine"];

/// Everything measured, by part.
#[derive(Debug, Default)]
struct Report {
    /// (part, form, setting index) → label and sums.
    blocks: BTreeMap<(Split, Form, usize), (&'static str, Sums)>,
    /// (part, form, ranking) → how it orders the events.
    ranked: BTreeMap<(Split, Form, &'static str), Ranked>,
    /// Setting index → label, new-task blocks asked and not empty.
    new_tasks: BTreeMap<usize, (&'static str, usize, usize)>,
}

pub(crate) fn run(config: &AppConfig, options: &Options<'_>) -> Result<ExitCode> {
    let data = madial::load(options.folder)?;
    let dir = tempfile::tempdir().context("temporary directory")?;
    let database = epimem_app::config::Database::Sqlite(dir.path().join("madial.db"));
    let memory = open_on(config, &database, true)?;
    let embedder = config.embedder()?;
    let events_of = ingest(&memory, &data)?;
    let vectors: HashMap<u32, Vec<f32>> = match &embedder {
        Some(e) => {
            let texts: Vec<&str> = data.events.iter().map(|e| e.text.as_str()).collect();
            data.events.iter().map(|e| e.id).zip(e.embed(&texts)?).collect()
        }
        None => HashMap::new(),
    };
    let now = data.now();
    let mut dump = crate::create_dump(options.dump_lines)?;
    let mut report = Report::default();
    let progress = crate::progress(
        (data.dialogues.len() * Form::ALL.len() + options.new_tasks.len() * data.users().len())
            as u64,
    );
    for d in &data.dialogues {
        for form in Form::ALL {
            let mut query = RecallQuery {
                at: Some(now),
                ..RecallQuery::new(Scope::tenant(tenant_of(&d.user)), d.query(form), TOP)
            };
            query.vector = memory.measure().embed_query(&query)?;
            let episodes: Vec<u32> = memory
                .measure()
                .recall(&query)?
                .iter()
                .filter_map(|h| events_of.get(&h.episode.id).copied())
                .collect();
            let turns: Vec<u32> = memory
                .measure()
                .recall_messages(&query)?
                .iter()
                .filter_map(|h| events_of.get(&h.episode).copied())
                .take(TOP)
                .collect();
            let cosine = by_cosine(&data, &d.user, &vectors, query.vector.as_deref());
            for (name, first) in RANKINGS.into_iter().zip([episodes, turns, cosine]) {
                report.ranked.entry((d.split, form, name)).or_default().add(&d.relevant, &first);
            }
            for (at, setting) in options.settings.iter().enumerate() {
                let asked = RecallQuery { relevance: Some(setting.rule), ..query.clone() };
                let (block, tokens) = block(&memory, &asked, &events_of)?;
                let (_, sums) = report
                    .blocks
                    .entry((d.split, form, at))
                    .or_insert_with(|| (setting.label, Sums::default()));
                sums.add(&d.relevant, &block, tokens);
            }
            if let Some(out) = dump.as_mut() {
                let asked = ("madial", Some(form), d.user.as_str());
                dump_lines(out, &memory, &query, &events_of, asked, &d.relevant)?;
            }
            progress.inc(1);
        }
    }
    for user in data.users() {
        for prompt in &options.new_tasks {
            let query = RecallQuery {
                at: Some(now),
                ..RecallQuery::new(Scope::tenant(tenant_of(user)), prompt.prompt.clone(), TOP)
            };
            for (at, setting) in options.settings.iter().enumerate() {
                let asked = RecallQuery { relevance: Some(setting.rule), ..query.clone() };
                let (block, _) = block(&memory, &asked, &events_of)?;
                let entry = report.new_tasks.entry(at).or_insert((setting.label, 0, 0));
                entry.1 += 1;
                entry.2 += usize::from(!block.is_empty());
            }
            if let Some(out) = dump.as_mut() {
                dump_lines(out, &memory, &query, &events_of, ("new_task", None, user), &[])?;
            }
            progress.inc(1);
        }
    }
    if let Some(mut out) = dump {
        out.flush()?;
    }
    progress.finish_and_clear();
    if options.json {
        outln!("{}", json_line(&report.json(&data)));
    } else {
        out!("{}", report.text(&data)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// Each user's memory is a tenant of its own.
pub(crate) fn tenant_of(user: &str) -> String {
    format!("madial-{}", user.to_lowercase())
}

/// Stores every event as its own conversation, closes them, and tells which event each
/// episode holds.
pub(crate) fn ingest(memory: &Memory, data: &Madial) -> Result<HashMap<EpisodeId, u32>> {
    let messages: Vec<MessageInput> = data
        .events
        .iter()
        .map(|e| MessageInput {
            conversation: ConversationKey::new(tenant_of(&e.user), format!("event-{}", e.id)),
            user: None,
            agent: None,
            key: "event".to_owned(),
            role: Role::User,
            speaker: Some(e.user.clone()),
            content: e.text.clone(),
            timestamp: Some(e.time),
            metadata: serde_json::Value::Null,
        })
        .collect();
    for chunk in messages.chunks(500) {
        memory.ingest(chunk.to_vec())?;
    }
    let mut events_of = HashMap::new();
    for user in data.users() {
        let tenant = Scope::tenant(tenant_of(user));
        memory.flush_now(&tenant)?;
        for episode in memory.measure().episodes(&tenant, None)? {
            let id = episode.conversation.conversation.strip_prefix("event-");
            if let Some(id) = id.and_then(|id| id.parse().ok()) {
                events_of.insert(episode.id, id);
            }
        }
    }
    Ok(events_of)
}

/// The user's events by the cosine of their vectors to the query's, the first five.
fn by_cosine(
    data: &Madial,
    user: &str,
    vectors: &HashMap<u32, Vec<f32>>,
    query: Option<&[f32]>,
) -> Vec<u32> {
    let Some(query) = query else { return Vec::new() };
    let mut scored: Vec<(f64, u32)> = data
        .events
        .iter()
        .filter(|e| e.user == user)
        .filter_map(|e| {
            let v = vectors.get(&e.id)?;
            Some((v.iter().zip(query).map(|(a, b)| f64::from(a * b)).sum(), e.id))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(TOP).map(|(_, id)| id).collect()
}

/// The events a block of [`BUDGET`] tokens holds, in its order, and its tokens.
fn block(
    memory: &Memory,
    query: &RecallQuery,
    events_of: &HashMap<EpisodeId, u32>,
) -> Result<(Vec<u32>, usize)> {
    let context = memory.measure().recall_context(query, BUDGET)?;
    let mut events: Vec<u32> = Vec::new();
    for (episode, _) in &context.turns {
        if let Some(&id) = events_of.get(episode)
            && !events.contains(&id)
        {
            events.push(id);
        }
    }
    let tokens = if events.is_empty() { 0 } else { context.tokens };
    Ok((events, tokens))
}

#[derive(Serialize)]
struct DumpedLine {
    event: u32,
    #[serde(flatten)]
    scores: negatives::LineScores,
    relevant: bool,
}

/// One JSON line: the query, and the lines it recalls, best first, with their scores.
fn dump_lines(
    out: &mut impl std::io::Write,
    memory: &Memory,
    query: &RecallQuery,
    events_of: &HashMap<EpisodeId, u32>,
    asked: (&str, Option<Form>, &str),
    relevant: &[u32],
) -> Result<()> {
    let (kind, form, user) = asked;
    let asked = RecallQuery { limit: 100, ..query.clone() };
    let (hits, evidence) = memory.measure().recall_messages_judged(&asked)?;
    let relevant: HashSet<u32> = relevant.iter().copied().collect();
    let lines: Vec<DumpedLine> = hits
        .iter()
        .filter_map(|h| {
            let event = *events_of.get(&h.episode)?;
            Some(DumpedLine {
                event,
                scores: negatives::LineScores::from(h),
                relevant: relevant.contains(&event),
            })
        })
        .collect();
    let line = serde_json::json!({
        "asked": kind,
        "form": form,
        "user": user,
        "question": query.text,
        "lexical_ceiling": evidence.lexical_ceiling,
        "unknown_names": evidence.unknown_names,
        "lines": lines,
    });
    writeln!(out, "{}", json_line(&line))?;
    Ok(())
}

impl Report {
    fn json(&self, data: &Madial) -> serde_json::Value {
        let mut parts: BTreeMap<&str, serde_json::Value> = BTreeMap::new();
        for split in self.splits() {
            let mut forms = serde_json::Map::new();
            for form in Form::ALL {
                let blocks: Vec<serde_json::Value> = self
                    .blocks
                    .range((split, form, 0)..=(split, form, usize::MAX))
                    .map(|(_, (label, sums))| {
                        let mut row = sums.json();
                        row["setting"] = (*label).into();
                        row
                    })
                    .collect();
                let ranked: BTreeMap<&str, serde_json::Value> = RANKINGS
                    .iter()
                    .filter_map(|&r| Some((r, self.ranked.get(&(split, form, r))?.json())))
                    .collect();
                let name = serde_json::to_value(form).expect("a form serializes");
                let key = name.as_str().unwrap_or_default().to_owned();
                forms.insert(key, serde_json::json!({"blocks": blocks, "ranked": ranked}));
            }
            parts.insert(split.name(), forms.into());
        }
        let new_tasks: Vec<serde_json::Value> = self
            .new_tasks
            .values()
            .map(|(label, asked, answered)| {
                serde_json::json!({
                    "setting": label,
                    "asked": asked,
                    "non_empty": *answered as f64 / (*asked).max(1) as f64,
                })
            })
            .collect();
        serde_json::json!({
            "dataset": "madial",
            "events": data.events.len(),
            "dialogues": data.dialogues.len(),
            "budget": BUDGET,
            "splits": parts,
            "new_tasks": new_tasks,
        })
    }

    fn splits(&self) -> Vec<Split> {
        let mut splits: Vec<Split> = self.blocks.keys().map(|(s, _, _)| *s).collect();
        splits.dedup();
        splits
    }

    fn text(&self, data: &Madial) -> Result<String> {
        let mut out = String::new();
        writeln!(
            out,
            "MADial-Bench: {} events of {} users, {} dialogues; each event its own conversation, \
             each user's memory a tenant; recall asked at each dialogue's test turn, blocks of \
             {BUDGET} tokens",
            data.events.len(),
            data.users().len(),
            data.dialogues.len()
        )?;
        for split in self.splits() {
            for form in Form::ALL {
                writeln!(out, "\n{} part, asked with the {}", split.name(), form.name())?;
                writeln!(
                    out,
                    "{:<26} {:>9} {:>7} {:>7} {:>7} {:>7}",
                    "setting", "relevant", "held", "events", "tokens", "empty"
                )?;
                for (_, (label, s)) in
                    self.blocks.range((split, form, 0)..=(split, form, usize::MAX))
                {
                    let n = s.dialogues.max(1) as f64;
                    writeln!(
                        out,
                        "{label:<26} {:>9.3} {:>7.3} {:>7.2} {:>7.0} {:>6.1}%",
                        s.hit as f64 / n,
                        s.held / n,
                        s.events as f64 / n,
                        s.tokens as f64 / n,
                        100.0 * (1.0 - s.answered as f64 / n)
                    )?;
                }
                for r in RANKINGS {
                    if let Some(ranked) = self.ranked.get(&(split, form, r)) {
                        let n = ranked.dialogues.max(1) as f64;
                        writeln!(
                            out,
                            "ranked by {r:<9}: a relevant event in the first {TOP} {:.3}, the \
                             share of them there {:.3}",
                            ranked.hit as f64 / n,
                            ranked.share / n
                        )?;
                    }
                }
            }
        }
        if !self.new_tasks.is_empty() {
            writeln!(out, "\nnew tasks asked of each user's memory: blocks not empty")?;
            for (label, asked, answered) in self.new_tasks.values() {
                let share = *answered as f64 / (*asked).max(1) as f64;
                writeln!(out, "{label:<26} {:>6.1}% of {asked}", 100.0 * share)?;
            }
        }
        Ok(out)
    }
}
