//! `epimem eval recall`: evidence recall on LoCoMo, at fixed k and at fixed context budgets.

use std::{
    collections::{BTreeMap, HashSet},
    fmt::Write as _,
    io::Write,
    path::PathBuf,
    process::ExitCode,
    time::Instant,
};

use anyhow::{Context, Result, bail};
use clap::Args;
use epimem_api::{MessageInput, RecallQuery};
use epimem_app::{
    config::{AppConfig, Database},
    open_on,
};
use epimem_core::{ConversationKey, Role, Scope};
use serde::Serialize;

mod sums;

use sums::{BUDGETS, KS, PartSums, Sums, TURN_KS, category_names, standard_error, write_table};

use super::{
    agent, implied,
    locomo::{self, Sample, Split},
    misspell, negatives,
    prompt_context::PromptContextSums,
    prompts,
};
use crate::json_line;

#[derive(Debug, Args)]
pub struct RecallArgs {
    /// The data set, in LoCoMo's layout: `locomo`, or `beam` (BEAM's user/assistant chats:
    /// speakers named `User` and `Assistant` take those roles, and categories are BEAM's); or
    /// `agent`: coding-agent sessions in `epimem ingest`'s format (`--path`, each session's
    /// first line naming its part in `metadata.set`) with `--questions` about them, each part
    /// replayed as one project's history; or `madial`: MADial-Bench's folder (`--path`: its
    /// event archive and dialogues), each event its own conversation, recall asked at each
    /// dialogue's test turn with the user's last message and with the last three utterances.
    #[arg(long, default_value = "locomo")]
    dataset: String,
    /// Which conversations to run: `tuning`, `test` or `all` (reported per part). LoCoMo's
    /// first five conversations and BEAM's beam-1 … beam-17 are for tuning.
    #[arg(long, default_value = "all")]
    split: String,
    /// The data set file.
    #[arg(long)]
    path: PathBuf,
    /// With `--dataset agent`: the questions, one JSON line each (`conversation`, `question`,
    /// `category`, `evidence`: the answering messages' positions in that session, from 0).
    #[arg(long, value_name = "FILE")]
    questions: Option<PathBuf>,
    /// Only the first N conversations.
    #[arg(long)]
    limit: Option<usize>,
    /// One JSON object with every number instead of tables.
    #[arg(long)]
    json: bool,
    /// Write one JSON line per question with what was returned, in rank order.
    #[arg(long, value_name = "FILE")]
    dump: Option<PathBuf>,
    /// Another data set in LoCoMo's layout whose questions are asked in this one's
    /// conversations, where their answers are not (LoCoMo's for BEAM, BEAM's for LoCoMo):
    /// beside each question asked in its own conversation, it is asked in another
    /// conversation of its part (as written, and with the speakers' names replaced), and one of
    /// these in its conversation; a table says how many blocks were not empty.
    #[arg(long, value_name = "FILE")]
    negatives: Option<PathBuf>,
    /// Ask every question under a range of relevance settings too (the block as before, and
    /// the defaults with one setting moved at a time), and print the curve of what each keeps
    /// and leaves empty.
    #[arg(long)]
    curve: bool,
    /// First prompts of new tasks, one `{id, category, prompt}` a line, asked in every
    /// conversation (in MADial, every user's memory): a block should stay empty for them.
    #[arg(long, value_name = "FILE")]
    new_tasks: Option<PathBuf>,
    /// Ask each question that names someone or something the conversation holds again with
    /// the names misspelled (a letter changed, swapped or dropped; two in long names; the
    /// same way every run), beside the same questions spelled right.
    #[arg(long)]
    misspelled: bool,
    /// Write one JSON line per question asked (its own, and with --negatives the others) with
    /// the lines recalled, best first, and what each retriever scored them.
    #[arg(long, value_name = "FILE")]
    dump_lines: Option<PathBuf>,
    /// Run on this PostgreSQL database (postgres://…) instead of a temporary SQLite file. The
    /// data set's tenants (`locomo-tuning`, …) are forgotten there first, then left filled.
    #[arg(long, value_name = "URL")]
    postgres: Option<String>,
}

/// Episodes retrieved per question (enough to fill the largest budget).
const RETRIEVED: usize = 30;

#[derive(Serialize)]
struct Returned<'a> {
    id: &'a str,
    turns: Vec<&'a str>,
    tokens: Option<usize>,
}

#[derive(Serialize)]
struct DumpLine<'a> {
    conversation: &'a str,
    question: &'a str,
    category: u8,
    evidence: &'a [String],
    returned: Vec<Returned<'a>>,
    /// Turn-level retrieval: single turns, best first.
    turns: Vec<&'a str>,
    /// The turns quoted in the context block of each budget (tokens), best first.
    contexts: BTreeMap<usize, Vec<&'a str>>,
}

pub(crate) fn run(config: &AppConfig, args: &RecallArgs) -> Result<ExitCode> {
    if !["locomo", "beam", "agent", "madial"].contains(&args.dataset.as_str()) {
        bail!("unknown dataset {:?}: expected locomo, beam, agent or madial", args.dataset);
    }
    let new_tasks = match &args.new_tasks {
        Some(path) => prompts::load(path)?,
        None => Vec::new(),
    };
    let settings = match args.curve {
        true => negatives::curve(config.engine().relevance),
        false => negatives::default_setting(config.engine().relevance),
    };
    if args.dataset == "madial" {
        let options = implied::Options {
            folder: &args.path,
            settings,
            new_tasks,
            json: args.json,
            dump_lines: args.dump_lines.as_deref(),
        };
        return implied::run(config, &options);
    }
    let wanted: &[Split] = match args.split.as_str() {
        "all" => &[Split::Tuning, Split::Test],
        "tuning" => &[Split::Tuning],
        "test" => &[Split::Test],
        other => bail!("unknown split {other:?}: expected tuning, test or all"),
    };
    let started = Instant::now();
    let mut samples = match (args.dataset.as_str(), &args.questions) {
        ("agent", Some(questions)) => agent::load(&args.path, questions)?,
        ("agent", None) => bail!("--dataset agent needs --questions"),
        (_, Some(_)) => bail!("--questions goes with --dataset agent only"),
        _ => locomo::load(&args.path)?,
    };
    samples.retain(|s| wanted.contains(&s.split));
    if let Some(limit) = args.limit {
        samples.truncate(limit);
    }
    if samples.is_empty() {
        bail!("{} has no conversations in the {} split", args.path.display(), args.split);
    }
    let dir = tempfile::tempdir().context("temporary directory")?;
    let db_path = dir.path().join("locomo.db");
    let database = match &args.postgres {
        Some(url) => Database::Postgres(url.clone()),
        None => Database::Sqlite(db_path.clone()),
    };
    let memory = open_on(config, &database, true)?;
    // Each part is its own tenant: BM25 statistics and names are per tenant, so a part scores
    // the same whether or not the other part was run beside it.
    let tenant_of = |s: &Sample| format!("{}-{}", args.dataset, s.split.name());
    // Agent sessions are recorded under their project, as the hooks record them (the `agent`
    // of their messages).
    let project_of = |s: &Sample| (args.dataset == "agent").then(|| s.id.clone());
    if args.postgres.is_some() {
        let tenants: std::collections::BTreeSet<String> = samples.iter().map(tenant_of).collect();
        for tenant in &tenants {
            memory.forget_tenant(tenant)?;
        }
    }
    let questions: usize = samples
        .iter()
        .map(|s| s.questions.iter().filter(|q| (1..=4).contains(&q.category)).count())
        .sum();
    let turns: usize = samples.iter().map(|s| s.turns.len()).sum();
    let progress = crate::progress((turns + questions) as u64);

    progress.set_message("ingesting");
    let ingest_started = Instant::now();
    for s in &samples {
        ingest(&memory, &tenant_of(s), s, project_of(s).as_deref())?;
        progress.inc(s.turns.len() as u64);
    }
    let ingest_took = ingest_started.elapsed();
    let tenants: Vec<String> = samples
        .iter()
        .map(tenant_of)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let timeline = super::timeline_check::roll_up_and_check(&memory, &tenants)?;

    let foreign = match &args.negatives {
        Some(path) => negatives::foreign(&locomo::load(path)?),
        None => Vec::new(),
    };
    let hosts = negatives::hosts(&samples);
    let mut blocks = negatives::Blocks::default();
    let mut dump_lines = super::create_dump(args.dump_lines.as_deref())?;
    let mut asked_foreign = 0usize;
    progress.set_message("asking");
    let mut all = PartSums::default();
    let mut parts: BTreeMap<Split, PartSums> = BTreeMap::new();
    let mut latencies: Vec<f64> = Vec::new();
    let mut episodes_seen = 0usize;
    // Agent sessions: what a prompt is told of earlier work.
    let mut prompt_context = PromptContextSums::default();
    let mut handed = super::handed::HandedSums::default();
    let place = |s: &Sample| (tenant_of(s), project_of(s).expect("an agent set"));
    let mut dump = super::create_dump(args.dump.as_deref())?;
    for (at_sample, s) in samples.iter().enumerate() {
        let scope = Scope::tenant(tenant_of(s)).with_conversation(Some(s.id.clone()));
        let at = s.turns.last().map(|t| t.timestamp);
        let episodes = memory.measure().episodes(&scope, None)?;
        episodes_seen += episodes.len();
        if project_of(s).is_some() {
            handed.add_later_prompts(&memory, s, &episodes, place)?;
        }
        let names = misspell::names_held(
            s.turns.iter().map(|t| t.speaker.as_str()).filter(|s| s.parse::<Role>().is_err()),
            s.turns.iter().map(|t| t.text.as_str()),
        );
        for q in s.questions.iter().filter(|q| (1..=4).contains(&q.category)) {
            let t0 = Instant::now();
            let mut query = RecallQuery {
                at,
                ..RecallQuery::new(scope.clone(), q.question.clone(), RETRIEVED)
            };
            // Embedded once for the episode, turn and context recalls below.
            query.vector = memory.measure().embed_query(&query)?;
            let hits = memory.measure().recall(&query)?;
            latencies.push(t0.elapsed().as_secs_f64() * 1000.0);
            let mut returned = Vec::with_capacity(hits.len());
            for h in &hits {
                // What each episode would cost in a context block: for the dump only (counting
                // every episode's tokens took most of an evaluation's time).
                let tokens = dump
                    .is_some()
                    .then(|| {
                        let one = std::slice::from_ref(h);
                        memory
                            .measure()
                            .render_context(&scope, &q.question, one, usize::MAX)
                            .map(|c| c.tokens)
                    })
                    .transpose()?;
                returned.push(Returned {
                    id: &h.episode.id.0,
                    turns: s.dia_ids(h.episode.first_seq, h.episode.last_seq).collect(),
                    tokens,
                });
            }
            let mut sums = Sums { questions: 1, ..Sums::default() };
            for (i, &k) in KS.iter().enumerate() {
                let covered: HashSet<&str> =
                    returned.iter().take(k).flat_map(|r| r.turns.iter().copied()).collect();
                sums.at_k[i] = q.share_in(&covered);
            }
            let mut contexts = BTreeMap::new();
            let recalled = memory.measure().recall_contexts(&query, &BUDGETS)?;
            for (i, (&budget, context)) in BUDGETS.iter().zip(&recalled).enumerate() {
                let quoted: Vec<&str> =
                    context.turns.iter().filter_map(|(_, seq)| s.dia_id(*seq)).collect();
                sums.at_budget[i] = q.share_in(&quoted.iter().copied().collect());
                contexts.insert(budget, quoted);
            }
            let host = &samples[hosts[at_sample]];
            let tenant = tenant_of(s);
            let renamed = negatives::renamed(&q.question, s, host);
            let other =
                foreign.get(asked_foreign % foreign.len().max(1)).map_or("", String::as_str);
            asked_foreign += 1;
            let mut asks = vec![(negatives::Asked::Own, s, q.question.as_str())];
            if args.negatives.is_some() {
                asks.extend([
                    (negatives::Asked::OtherConversation, host, q.question.as_str()),
                    (negatives::Asked::Renamed, host, renamed.as_str()),
                    (negatives::Asked::OtherSet, s, other),
                ]);
            }
            let misspelled =
                args.misspelled.then(|| misspell::misspelled(&q.question, &names)).flatten();
            if let Some(misspelled) = &misspelled {
                asks.push((negatives::Asked::Misspelled, s, misspelled.as_str()));
            }
            for (at_setting, setting) in settings.iter().enumerate() {
                let setting_at = (at_setting, setting.label);
                for &(asked, host, text) in &asks {
                    let (tokens, quoted) =
                        negatives::block(&memory, (&tenant, host), text, setting.rule)?;
                    let evidence = match asked.answered_here() {
                        true => {
                            q.share_in(&quoted.iter().filter_map(|&seq| s.dia_id(seq)).collect())
                        }
                        false => 0.0,
                    };
                    blocks.add(s.split, setting_at, asked, tokens, evidence);
                    // The same question spelled right, beside its misspelling: its own block.
                    if asked == negatives::Asked::Own && misspelled.is_some() {
                        let named = negatives::Asked::Named;
                        blocks.add(s.split, setting_at, named, tokens, evidence);
                    }
                }
            }
            if let Some(out) = dump_lines.as_mut() {
                for &(asked, host, text) in asks.iter().skip(1) {
                    negatives::dump_lines(out, &memory, (&tenant, host), asked, text, None)?;
                }
            }
            if let Some(out) = dump_lines.as_mut() {
                let own = negatives::Asked::Own;
                negatives::dump_lines(out, &memory, (&tenant_of(s), s), own, &q.question, Some(q))?;
            }
            let turn_hits =
                memory.measure().recall_messages(&RecallQuery { limit: 25, ..query.clone() })?;
            let turn_ids: Vec<&str> = turn_hits.iter().filter_map(|m| s.dia_id(m.seq)).collect();
            for (i, &k) in TURN_KS.iter().enumerate() {
                let covered: HashSet<&str> = turn_ids.iter().take(k).copied().collect();
                sums.turns_at_k[i] = q.share_in(&covered);
            }
            if project_of(s).is_some() {
                let by_words = prompt_context.add(&memory, &samples, s, q, &episodes, place)?;
                handed.add_question(&memory, s, q, &episodes, &by_words, place)?;
            }
            all.add(q.category, &sums);
            parts.entry(s.split).or_default().add(q.category, &sums);
            if let Some(out) = dump.as_mut() {
                let line = DumpLine {
                    conversation: &s.id,
                    question: &q.question,
                    category: q.category,
                    evidence: &q.evidence,
                    returned,
                    turns: turn_ids,
                    contexts,
                };
                writeln!(out, "{}", json_line(&line))?;
            }
            progress.inc(1);
        }
        for prompt in &new_tasks {
            for (at_setting, setting) in settings.iter().enumerate() {
                let host = (tenant_of(s), s);
                let (tokens, _) =
                    negatives::block(&memory, (&host.0, s), &prompt.prompt, setting.rule)?;
                let asked = negatives::Asked::NewTask;
                blocks.add(s.split, (at_setting, setting.label), asked, tokens, 0.0);
            }
            if let Some(out) = dump_lines.as_mut() {
                let asked = negatives::Asked::NewTask;
                negatives::dump_lines(
                    out,
                    &memory,
                    (&tenant_of(s), s),
                    asked,
                    &prompt.prompt,
                    None,
                )?;
            }
        }
    }
    for out in [dump, dump_lines].into_iter().flatten() {
        let mut out = out;
        out.flush()?;
    }
    progress.finish_and_clear();
    latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        latencies.get(((latencies.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0)
    };
    let fingerprint =
        config.embedder()?.map_or_else(|| "none".to_owned(), |e| e.fingerprint().to_owned());
    // What a configured language model cost, all stages together.
    let mut usage = epimem_core::LlmUsage::default();
    for (_, stage) in memory.llm_usage(None)? {
        usage.add(stage);
    }

    if args.json {
        let out = serde_json::json!({
            "dataset": args.dataset,
            "store": database.kind(),
            "embedder": fingerprint,
            "conversations": samples.len(),
            "turns": turns,
            "episodes": episodes_seen,
            "overall": all.overall.mean(),
            "by_category": all.json()["by_category"],
            "splits": parts.iter().map(|(p, s)| (p.name(), s.json())).collect::<BTreeMap<_, _>>(),
            "latency_ms": {"p50": pct(0.5), "p95": pct(0.95), "p99": pct(0.99)},
            "ingest_seconds": ingest_took.as_secs_f64(),
            "timeline": timeline,
            "llm_usage": usage,
            "prompt_context": prompt_context.json(),
            "handed": handed.json(),
            "blocks": blocks.json(),
        });
        outln!("{}", json_line(&out));
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    writeln!(
        out,
        "{}: {} conversations, {turns} turns, {episodes_seen} episodes, {} questions (categories 1-4); embedder {fingerprint}; {} store",
        args.dataset,
        samples.len(),
        all.overall.questions,
        database.kind()
    )?;
    writeln!(
        out,
        "evidence recall: share of a question's evidence turns inside what was returned, averaged over questions;"
    )?;
    writeln!(
        out,
        "R@k: the first k episodes recalled; ≤N t: the context block of N tokens (`recall --budget`),"
    )?;
    writeln!(
        out,
        "which quotes the best single turns, grouped by episode under the time it began;"
    )?;
    writeln!(
        out,
        "turn@k: the first k single messages (turn-level recall, as in the published table).\n"
    )?;
    let names = category_names(&args.dataset);
    for (split, part) in &parts {
        writeln!(
            out,
            "{} part ({} conversations; a standard error of about {:.3} on these means)",
            split.name(),
            samples.iter().filter(|s| s.split == *split).count(),
            standard_error(part.overall.questions)
        )?;
        write_table(&mut out, part, &names)?;
    }
    if parts.len() > 1 {
        writeln!(out, "both parts")?;
        write_table(&mut out, &all, &names)?;
    }
    prompt_context.write(&mut out)?;
    handed.write(&mut out)?;
    let other_set = args.negatives.as_ref().and_then(|p| p.file_name()).and_then(|n| n.to_str());
    blocks.write(&mut out, other_set)?;
    writeln!(
        out,
        "\nrecall latency (query embedding included): p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms",
        pct(0.5),
        pct(0.95),
        pct(0.99)
    )?;
    writeln!(
        out,
        "ingest and segmentation: {:.1} s; whole run: {:.1} s",
        ingest_took.as_secs_f64(),
        started.elapsed().as_secs_f64()
    )?;
    writeln!(
        out,
        "timeline: rolled up in {:.2} s; {} nodes, each covering exactly the episodes that began in it",
        timeline.seconds, timeline.nodes
    )?;
    if usage.calls > 0 {
        writeln!(out, "llm: {usage}")?;
    }
    out!("{out}");
    Ok(ExitCode::SUCCESS)
}

/// Ingests one conversation: its sessions in order, speakers kept, everything closed at the end.
pub(crate) fn ingest(
    memory: &epimem_api::Memory,
    tenant: &str,
    s: &Sample,
    project: Option<&str>,
) -> Result<()> {
    let conversation = ConversationKey::new(tenant, s.id.clone());
    let messages: Vec<MessageInput> = s
        .turns
        .iter()
        .map(|t| {
            // A speaker called after a role (BEAM's "User" and "Assistant") takes that role;
            // two people talking both speak as users, named.
            let (role, speaker) = match t.speaker.parse::<Role>() {
                Ok(role) => (role, None),
                Err(_) => (Role::User, Some(t.speaker.clone())),
            };
            MessageInput {
                conversation: conversation.clone(),
                user: None,
                agent: project.map(str::to_owned),
                key: format!("dia:{}", t.dia_id),
                role,
                speaker,
                content: t.text.clone(),
                timestamp: Some(t.timestamp),
                metadata: serde_json::Value::Null,
            }
        })
        .collect();
    for chunk in messages.chunks(500) {
        memory.ingest(chunk.to_vec())?;
    }
    memory.flush_now(&Scope::tenant(tenant).with_conversation(Some(s.id.clone())))?;
    Ok(())
}
