//! `epimem eval fit-relevance`: the relevance judgement's two channels, fitted on the tuning
//! parts of every kind of query an agent sends at once: LoCoMo's and BEAM's questions asked
//! where their answer is (it bears), and where it is not (another conversation's, the other
//! set's); MADial-Bench's dialogues at the turn that should bring up a past event (it bears),
//! asked with the user's last message and with the last three utterances; the first prompts of
//! new tasks asked in each of those memories (nothing bears). Each of these groups weighs the
//! same. A query bears on the memory when one of its lines does, so each channel is fitted on
//! the line of each query it rates best (first the line with the most of the query's words, or
//! the closest in meaning; then, twice, the line the fitted model rates best).
//!
//! Words are fitted on every query; meaning on the queries words do not speak for, which is
//! what it is for. The thresholds (`speak`, `take`) are chosen on the harness's curve
//! (`epimem eval recall --curve`), where a block's evidence and tokens are measured; this
//! prints how often each group's blocks would speak at each `speak`.

use std::{fmt::Write as _, io::Write as _, path::PathBuf, process::ExitCode};

use anyhow::{Context, Result};
use clap::Args;
use epimem_api::{Memory, RecallQuery};
use epimem_app::{
    config::{AppConfig, Database},
    open_on,
};
use epimem_core::{
    Scope, Timestamp,
    recall::{
        LineEvidence, Logistic, MEANING_FEATURES, MEANING_SIGNS, MeaningWeights, QueryEvidence,
        RelevanceConfig, WORDS_FEATURES, WORDS_SIGNS, WordsWeights, meaning_features,
        words_features,
    },
};

use super::{
    agent, implied,
    locomo::{self, Sample, Split},
    logistic::{self, Example, Fitted},
    madial::{self, Form},
    negatives, prompts, recall,
};

#[derive(Debug, Args)]
pub struct FitRelevanceArgs {
    /// LoCoMo (`locomo10.json`): its tuning conversations are fitted on, its test ones reported.
    #[arg(long, value_name = "PATH")]
    locomo: PathBuf,
    /// BEAM in LoCoMo's layout (`beam500k_locomo.json.gz`), likewise.
    #[arg(long, value_name = "PATH")]
    beam: PathBuf,
    /// MADial-Bench's folder (its archive and the tuning half of its dialogues).
    #[arg(long, value_name = "DIR")]
    madial: PathBuf,
    /// First prompts of new tasks (`new-tasks.dev.jsonl`), asked in every memory.
    #[arg(long, value_name = "FILE")]
    new_tasks: PathBuf,
    /// Our coding-agent sessions (`crates/eval/data/agent-sessions.jsonl`), with
    /// `--agent-questions`: what a later session asks of a project's memory.
    #[arg(long, value_name = "PATH", requires = "agent_questions")]
    agent_sessions: Option<PathBuf>,
    /// The questions about them (`crates/eval/data/agent-questions.jsonl`).
    #[arg(long, value_name = "FILE", requires = "agent_sessions")]
    agent_questions: Option<PathBuf>,
    /// Lines of each ranking a query is judged by.
    #[arg(long, default_value_t = 30)]
    lines: usize,
    /// Ridge penalty on the weights (not the bias). Small: a line's standing is a few
    /// hundredths of cosine, so its weight is large, and a penalty of 1 held it to half.
    #[arg(long, default_value_t = 0.01)]
    ridge: f64,
    /// Write one JSON line per query asked: its group, part, and each line's inputs to both
    /// channels.
    #[arg(long, value_name = "FILE")]
    dump: Option<PathBuf>,
}

/// The kinds of query fitted on, each weighing the same: a name, and whether it bears.
/// "Another user's memory" is reported, not fitted on: MADial's two users are children with
/// alike days (parties, drawing contests, the zoo), so the other's memory holds events close
/// to what the user says, and only whose they are tells them apart; a memory is one person's.
const GROUPS: [(&str, bool); 14] = [
    ("LoCoMo: its questions", true),
    ("LoCoMo: another conversation's questions", false),
    ("LoCoMo: another conversation's lines", false),
    ("LoCoMo: BEAM's questions", false),
    ("LoCoMo: new tasks", false),
    ("BEAM: its questions", true),
    ("BEAM: LoCoMo's questions", false),
    ("BEAM: new tasks", false),
    ("MADial: the last message", true),
    ("MADial: the last three", true),
    ("MADial: another user's memory", false),
    ("MADial: new tasks", false),
    ("Agent sessions: its questions", true),
    ("Agent sessions: new tasks", false),
];

/// The group named `name`.
fn group(name: &str) -> usize {
    GROUPS.iter().position(|(n, _)| *n == name).expect("a known group")
}

/// Whether group `g` is fitted on (see [`GROUPS`]).
fn fitted_on(g: usize) -> bool {
    GROUPS[g].0 != "MADial: another user's memory"
}

/// The groups of questions asked where their answer is.
fn questions_answered(g: usize) -> bool {
    GROUPS[g].0.ends_with(": its questions")
}

/// A line's inputs to the words channel and to the meaning channel.
type LineInputs = ([f64; 2], [f64; 4]);

/// One query asked: its group and part, and each of its first lines' inputs to both channels.
/// A query a hand rule decides (it names people absent from the scope, or something never
/// held) is not fitted on: no weight changes what it gets.
struct Asked {
    group: usize,
    split: Split,
    lines: Vec<LineInputs>,
}

/// Rounds of choosing each query's best line and fitting again.
const ROUNDS: usize = 3;

pub(crate) fn run(config: &AppConfig, args: &FitRelevanceArgs) -> Result<ExitCode> {
    let dir = tempfile::tempdir().context("temporary directory")?;
    let memory = open_on(config, &Database::Sqlite(dir.path().join("fit.db")), true)?;
    let new_tasks = prompts::load(&args.new_tasks)?;
    let locomo = locomo::load(&args.locomo)?;
    let beam = locomo::load(&args.beam)?;
    let madial = madial::load(&args.madial)?;
    let mut asked = Vec::new();
    let sets = [("LoCoMo", &locomo, &beam), ("BEAM", &beam, &locomo)];
    let progress = crate::progress(sets.iter().map(|(_, s, _)| s.len() as u64).sum::<u64>() + 2);
    progress.set_message("asking");
    for (name, samples, other) in sets {
        let tenant_of = |s: &Sample| format!("{}-{}", name.to_lowercase(), s.split.name());
        for s in samples {
            recall::ingest(&memory, &tenant_of(s), s, None)?;
        }
        let hosts = negatives::hosts(samples);
        let foreign = negatives::foreign(other);
        let other_name = if name == "LoCoMo" { "BEAM" } else { "LoCoMo" };
        let mut next_foreign = 0;
        for (at, s) in samples.iter().enumerate() {
            let ask = |host: &Sample, text: &str| {
                let scope = Scope::tenant(tenant_of(host)).with_conversation(Some(host.id.clone()));
                let at = host.turns.last().map(|t| t.timestamp);
                lines_of(&memory, RecallQuery { at, ..RecallQuery::new(scope, text, args.lines) })
            };
            let mut add = |kind: &str, lines: Option<Vec<_>>| {
                if let Some(lines) = lines {
                    let group = group(&format!("{name}: {kind}"));
                    asked.push(Asked { group, split: s.split, lines });
                }
            };
            let host = &samples[hosts[at]];
            for q in s.questions.iter().filter(|q| (1..=4).contains(&q.category)) {
                add("its questions", ask(s, &q.question)?);
                // BEAM's chats are one person's: another chat's question or line is no
                // negative there.
                if name == "LoCoMo" {
                    add("another conversation's questions", ask(host, &q.question)?);
                    let said =
                        q.evidence.first().and_then(|e| s.turns.iter().find(|t| t.dia_id == *e));
                    if let Some(turn) = said {
                        add("another conversation's lines", ask(host, &turn.text)?);
                    }
                }
                let other = &foreign[next_foreign % foreign.len().max(1)];
                next_foreign += 1;
                add(&format!("{other_name}'s questions"), ask(s, other)?);
            }
            for prompt in &new_tasks {
                add("new tasks", ask(s, &prompt.prompt)?);
            }
            progress.inc(1);
        }
    }
    implied::ingest(&memory, &madial)?;
    let now = madial.now();
    let users = madial.users();
    for d in &madial.dialogues {
        let someone_else = users.iter().find(|u| **u != d.user);
        for (kind, form) in
            [("the last message", Form::UserMessage), ("the last three", Form::ThreeUtterances)]
        {
            let query = madial_query(&d.user, d.query(form), now, args.lines);
            if let Some(lines) = lines_of(&memory, query)? {
                asked.push(Asked {
                    group: group(&format!("MADial: {kind}")),
                    split: d.split,
                    lines,
                });
            }
            if let Some(user) = someone_else {
                let query = madial_query(user, d.query(form), now, args.lines);
                if let Some(lines) = lines_of(&memory, query)? {
                    let group = group("MADial: another user's memory");
                    asked.push(Asked { group, split: d.split, lines });
                }
            }
        }
    }
    if let (Some(sessions), Some(questions)) = (&args.agent_sessions, &args.agent_questions) {
        for s in agent::load(sessions, questions)? {
            let tenant = format!("agent-{}", s.split.name());
            recall::ingest(&memory, &tenant, &s, Some(&s.id))?;
            let scope = Scope::tenant(&tenant).with_conversation(Some(s.id.clone()));
            let at = s.turns.last().map(|t| t.timestamp);
            let ask = |text: &str| {
                let query = RecallQuery::new(scope.clone(), text, args.lines);
                lines_of(&memory, RecallQuery { at, ..query })
            };
            let questions = s.questions.iter().map(|q| ("its questions", &q.question));
            let tasks = new_tasks.iter().map(|p| ("new tasks", &p.prompt));
            for (kind, text) in questions.chain(tasks) {
                if let Some(lines) = ask(text)? {
                    let group = group(&format!("Agent sessions: {kind}"));
                    asked.push(Asked { group, split: s.split, lines });
                }
            }
        }
    }
    progress.inc(1);
    for user in &users {
        for prompt in &new_tasks {
            let query = madial_query(user, prompt.prompt.clone(), now, args.lines);
            if let Some(lines) = lines_of(&memory, query)? {
                asked.push(Asked {
                    group: group("MADial: new tasks"),
                    split: Split::Tuning,
                    lines,
                });
            }
        }
    }
    progress.finish_and_clear();
    if let Some(mut out) = crate::create_dump(args.dump.as_deref())? {
        for a in &asked {
            let line = serde_json::json!({
                "group": GROUPS[a.group].0, "split": a.split, "lines": a.lines,
            });
            writeln!(out, "{}", crate::json_line(&line))?;
        }
        std::io::Write::flush(&mut out)?;
    }

    let tuning: Vec<&Asked> =
        asked.iter().filter(|a| a.split == Split::Tuning && fitted_on(a.group)).collect();
    let words = fit_channel(&tuning, args.ridge, &WORDS_SIGNS, |l| l.0.to_vec(), |_| true)?;
    let words = WordsWeights::with(words.bias, words.weights.try_into().expect("two weights"));
    // Meaning for what words leave silent, but for questions asked where their answer is:
    // words answer questions, and a question its words miss is not what meaning is for.
    let silent = |a: &Asked| !questions_answered(a.group) && best(a, |l| words.logit(&l.0)) < 0.0;
    let meaning = fit_channel(&tuning, args.ridge, &MEANING_SIGNS, |l| l.1.to_vec(), silent)?;
    let meaning =
        MeaningWeights::with(meaning.bias, meaning.weights.try_into().expect("four weights"));
    let fitted = RelevanceConfig { words, meaning, ..config.engine().relevance };
    out!("{}", report(&asked, &fitted)?);
    Ok(ExitCode::SUCCESS)
}

fn madial_query(user: &str, text: String, now: Timestamp, lines: usize) -> RecallQuery {
    RecallQuery {
        at: Some(now),
        ..RecallQuery::new(Scope::tenant(implied::tenant_of(user)), text, lines)
    }
}

/// Both channels' inputs for the first lines `query` recalls; `None` when a hand rule decides
/// the query.
fn lines_of(memory: &Memory, query: RecallQuery) -> Result<Option<Vec<LineInputs>>> {
    let (hits, evidence): (_, QueryEvidence) = memory.measure().recall_messages_judged(&query)?;
    if evidence.names_absent || evidence.unknown_names {
        return Ok(None);
    }
    Ok(Some(
        hits.iter()
            .map(|h| {
                let line = LineEvidence {
                    score: h.score,
                    episode: 0,
                    lexical: h.lexical,
                    length: h.length,
                    similarity: h.similarity,
                };
                (words_features(&line, &evidence), meaning_features(&line, &evidence))
            })
            .collect(),
    ))
}

/// The highest of `logit` over a query's lines (−∞ for a query without lines).
fn best(a: &Asked, logit: impl Fn(&LineInputs) -> f64) -> f64 {
    a.lines.iter().map(logit).fold(f64::NEG_INFINITY, f64::max)
}

/// One channel fitted on the queries `keep` keeps, each on its best line: at first the line
/// whose first input is highest, then the line the last fit rates best.
fn fit_channel(
    asked: &[&Asked],
    ridge: f64,
    signs: &[i8],
    inputs: impl Fn(&LineInputs) -> Vec<f64>,
    keep: impl Fn(&Asked) -> bool,
) -> Result<Fitted> {
    let kept: Vec<&Asked> =
        asked.iter().copied().filter(|a| keep(a) && !a.lines.is_empty()).collect();
    let mut counts = [0usize; GROUPS.len()];
    for a in &kept {
        counts[a.group] += 1;
    }
    let groups = counts.iter().filter(|&&n| n > 0).count().max(1);
    let mut fitted: Option<Fitted> = None;
    for _ in 0..ROUNDS {
        // The line the last fit rates best; at first, the one whose first input is highest.
        let rate = |x: &[f64]| fitted.as_ref().map_or(x[0], |model| model.logit(x));
        let examples: Vec<Example> = kept
            .iter()
            .map(|a| {
                let x = a
                    .lines
                    .iter()
                    .map(&inputs)
                    .max_by(|p, q| rate(p).total_cmp(&rate(q)))
                    .expect("a query with lines");
                let weight = 1.0 / (counts[a.group] * groups) as f64;
                Example { weight, x, y: GROUPS[a.group].1 }
            })
            .collect();
        fitted = Some(logistic::fit(&examples, signs, ridge)?);
    }
    Ok(fitted.expect("at least one round"))
}

/// How often each group's blocks speak at each `speak`, both parts, and the fitted section.
fn report(asked: &[Asked], fitted: &RelevanceConfig) -> Result<String> {
    let mut out = String::new();
    let relevance = |a: &Asked| {
        let z = best(a, |l| fitted.words.logit(&l.0).max(fitted.meaning.logit(&l.1)));
        1.0 / (1.0 + (-z).exp())
    };
    let thresholds = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8];
    for split in [Split::Tuning, Split::Test] {
        writeln!(
            out,
            "{} part: blocks that speak, by `speak` (queries a hand rule decides left out)",
            split.name()
        )?;
        write!(out, "{:<32} {:>6}", "asked", "n")?;
        for t in thresholds {
            write!(out, " {t:>6.1}")?;
        }
        writeln!(out)?;
        for (g, (name, _)) in GROUPS.iter().enumerate() {
            let rs: Vec<f64> =
                asked.iter().filter(|a| a.group == g && a.split == split).map(relevance).collect();
            if rs.is_empty() {
                continue;
            }
            write!(out, "{name:<32} {:>6}", rs.len())?;
            for t in thresholds {
                let share = rs.iter().filter(|&&r| r >= t).count() as f64 / rs.len() as f64;
                write!(out, " {share:>6.3}")?;
            }
            writeln!(out)?;
        }
        writeln!(out)?;
    }
    writeln!(out, "each channel alone at speak 0.5 (tuning part): words, meaning")?;
    for (g, (name, _)) in GROUPS.iter().enumerate() {
        let rs: Vec<&Asked> =
            asked.iter().filter(|a| a.group == g && a.split == Split::Tuning).collect();
        let n = rs.len().max(1) as f64;
        let words = rs.iter().filter(|a| best(a, |l| fitted.words.logit(&l.0)) >= 0.0).count();
        let meaning = rs.iter().filter(|a| best(a, |l| fitted.meaning.logit(&l.1)) >= 0.0).count();
        writeln!(out, "{name:<32} {:>6.3} {:>6.3}", words as f64 / n, meaning as f64 / n)?;
    }
    writeln!(out)?;
    writeln!(out, "[relevance.words]")?;
    writeln!(out, "bias = {:.3}", fitted.words.bias)?;
    for (name, w) in WORDS_FEATURES.iter().zip(fitted.words.weights()) {
        writeln!(out, "{name} = {w:.3}")?;
    }
    writeln!(out, "\n[relevance.meaning]")?;
    writeln!(out, "bias = {:.3}", fitted.meaning.bias)?;
    for (name, w) in MEANING_FEATURES.iter().zip(fitted.meaning.weights()) {
        writeln!(out, "{name} = {w:.3}")?;
    }
    Ok(out)
}
