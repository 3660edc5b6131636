//! `episodes`, `show`, `recall` and `stats`: reading what epimem remembers.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use epimem_core::{ConversationKey, EpisodeId, RelevanceConfig, Scope, Timestamp};
use epimem_engine::RecallQuery;
use epimem_server::{
    EpisodeVersionOut, FactOut, NOTHING_RELEVANT,
    wire::{EpisodeOut, MemoryOut},
};

use super::{open_engine, open_with_embedder};
use crate::{
    config::AppConfig,
    output::{detail_text, episode_line, hit_text, json_line},
};

#[derive(Debug, Args)]
pub(crate) struct EpisodesArgs {
    /// Only this conversation.
    #[arg(long)]
    conversation: Option<String>,
    /// Only the newest this many episodes.
    #[arg(long)]
    limit: Option<usize>,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The episode's id (ep_…).
    id: String,
    /// One JSON object, messages included.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "When forget returns, the text is gone from the database file and its \
write-ahead log (freed pages are zeroed, then checkpointed) and from the search index saved \
beside the database (FILE.search: its segments are merged and its tables written again). \
Another process reading the database at that moment can keep the log from being emptied; \
its copy goes at the next forget or checkpoint. On PostgreSQL (--db postgres://...) the rows go \
at once and every process's search index drops them; their bytes leave PostgreSQL's table files \
at the next `epimem compact`, and its write-ahead log, backups and replicas as those turn over.")]
#[command(group(
    clap::ArgGroup::new("what").required(true).args(["id", "conversation", "whole_tenant"])
))]
pub(crate) struct ForgetArgs {
    /// The episode to forget (ep_…): it leaves every index, and its messages lose their text
    /// but keep their place in the conversation.
    id: Option<String>,
    /// Forget a whole conversation instead: its messages, episodes, vectors and pending work.
    #[arg(long, value_name = "ID")]
    conversation: Option<String>,
    /// Forget everything the tenant (--tenant) remembers instead: every conversation, its
    /// facts and timeline, from every file and index. Its API keys stay.
    #[arg(long)]
    whole_tenant: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RecallArgs {
    /// What to look for, in plain words.
    query: String,
    /// Only this conversation.
    #[arg(long)]
    conversation: Option<String>,
    /// Only the coding sessions of this project (a folder in its repository), as `epimem
    /// hook` recorded them.
    #[arg(long, value_name = "DIR")]
    project: Option<std::path::PathBuf>,
    /// At most this many episodes.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1000))]
    limit: u64,
    /// Only episodes that end at or after this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only episodes that start at or before this time (RFC 3339).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    /// Only episodes of this period: a timeline node (toc:week:2026:W09) or "today",
    /// "yesterday", "this/last week", "this/last month", "this/last year", "in March", "in
    /// 2025", read against the conversation's time.
    #[arg(long, value_name = "PERIOD", conflicts_with_all = ["since", "until"])]
    within: Option<String>,
    /// Return a context block of at most this many tokens: the lines that best answer the
    /// query (single turns, best first), grouped by episode under the time it began.
    #[arg(long, value_name = "TOKENS")]
    budget: Option<usize>,
    /// With --budget: whole episodes instead of single lines, each as its title, when,
    /// summary and the lines that matched, best first.
    #[arg(long, requires = "budget")]
    episodes: bool,
    /// With --budget: fill it with the best lines whether or not they bear on the query. By
    /// default a block holds only lines that do, stops where they score well below the best,
    /// and says "Nothing remembered bears on this." when nothing does.
    #[arg(long, requires = "budget", conflicts_with = "min_share")]
    fill: bool,
    /// With --budget: the share of the query's weighed words a line must match to bear on it
    /// (0 to 1; default relevance.min_share, 0.16): lower keeps more, higher leaves more empty.
    #[arg(long, requires = "budget", value_name = "SHARE")]
    min_share: Option<f64>,
    /// One JSON object per line, best first (with --budget: one object with the context and
    /// the facts that bear on the query; `epimem facts` lists facts too).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    /// One JSON object.
    #[arg(long)]
    json: bool,
}

pub(crate) fn episodes(config: &AppConfig, args: &EpisodesArgs) -> Result<ExitCode> {
    let engine = open_engine(config)?;
    let scope = Scope::tenant(&config.tenant).with_conversation(args.conversation.clone());
    let mut episodes = engine.episodes(&scope, args.limit)?;
    // The store lists newest first; read in time order, oldest first.
    episodes.reverse();
    for e in &episodes {
        if args.json {
            outln!("{}", json_line(&EpisodeOut::from(e)));
        } else {
            outln!("{}", episode_line(e));
        }
    }
    if episodes.is_empty() && !args.json {
        eprintln!(
            "no episodes yet (messages become episodes when a trigger fires or on `epimem flush`)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn show(config: &AppConfig, args: &ShowArgs) -> Result<ExitCode> {
    let engine = open_engine(config)?;
    let scope = Scope::tenant(&config.tenant);
    let detail = engine.episode(&scope, &EpisodeId(args.id.clone()))?;
    let id = &detail.episode.id;
    let (now, curve) = engine.memory_curve(&detail.episode.fsrs, CURVE_POINTS);
    let memory =
        MemoryOut::new(&detail.episode.fsrs, now, &curve, &engine.episode_reviews(&scope, id)?);
    let versions: Vec<EpisodeVersionOut> =
        engine.episode_versions(&scope, id)?.iter().map(EpisodeVersionOut::from).collect();
    if args.json {
        let mut out =
            serde_json::to_value(EpisodeOut { memory: Some(memory), ..EpisodeOut::from(&detail) })?;
        out["versions"] = serde_json::to_value(&versions)?;
        outln!("{}", json_line(&out));
    } else {
        out!("{}", detail_text(&detail));
        out!("{}", memory_text(&memory, &versions));
    }
    Ok(ExitCode::SUCCESS)
}

/// Points of the forgetting curve `show --json` gives, as the API does.
const CURVE_POINTS: usize = 24;

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

pub(crate) fn recall(config: &AppConfig, args: &RecallArgs) -> Result<ExitCode> {
    let engine = open_with_embedder(config)?;
    super::load_index(&engine, &config.tenant)?;
    let time = |t: &Option<String>, flag: &str| {
        t.as_deref().map(Timestamp::parse_rfc3339).transpose().with_context(|| format!("--{flag}"))
    };
    let mut scope = Scope {
        since: time(&args.since, "since")?,
        until: time(&args.until, "until")?,
        agent: args.project.as_deref().map(super::hook::project_name).transpose()?,
        ..Scope::tenant(&config.tenant).with_conversation(args.conversation.clone())
    };
    if let Some(within) = &args.within {
        scope = engine.scope_within(scope, within)?;
    }
    let relevance = match (args.fill, args.min_share) {
        (true, _) => Some(RelevanceConfig::FILL),
        (false, Some(share)) => {
            anyhow::ensure!((0.0..=1.0).contains(&share), "--min-share {share}: from 0 to 1");
            Some(RelevanceConfig { min_share: share, ..config.engine().relevance })
        }
        (false, None) => None,
    };
    let query = RecallQuery {
        relevance,
        ..RecallQuery::new(scope, args.query.clone(), args.limit as usize)
    };
    let facts: Vec<FactOut> = engine.recall_facts(&query)?.iter().map(FactOut::from).collect();
    if !args.json && !facts.is_empty() {
        outln!("Known facts:");
        for fact in &facts {
            outln!("- {} (since {})", fact.text, fact.valid_at.get(..10).unwrap_or(&fact.valid_at));
        }
        outln!();
    }
    if let (Some(budget), true) = (args.budget, args.episodes) {
        let context = engine.recall_episode_context(&query, budget)?;
        if args.json {
            let hits: Vec<EpisodeOut> = context.hits.iter().map(EpisodeOut::from).collect();
            let out = serde_json::json!({
                "context": context.text, "tokens": context.tokens, "episodes": hits, "facts": facts,
                "nothing_relevant": !context.relevant && facts.is_empty(),
            });
            outln!("{}", json_line(&out));
        } else if !context.relevant && facts.is_empty() {
            outln!("{NOTHING_RELEVANT}");
        } else {
            out!("{}", context.text);
            eprintln!("{} episode(s), {} of {budget} tokens", context.hits.len(), context.tokens);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(budget) = args.budget {
        let context = engine.recall_context(&query, budget)?;
        if args.json {
            let ids: Vec<&str> = context.episodes.iter().map(|id| id.0.as_str()).collect();
            let turns: Vec<serde_json::Value> = context
                .turns
                .iter()
                .map(|(id, seq)| serde_json::json!({"episode": id.0, "seq": seq}))
                .collect();
            let out = serde_json::json!({
                "context": context.text, "tokens": context.tokens, "episodes": ids, "turns": turns,
                "facts": facts, "nothing_relevant": !context.relevant && facts.is_empty(),
            });
            outln!("{}", json_line(&out));
        } else if !context.relevant && facts.is_empty() {
            outln!("{NOTHING_RELEVANT}");
        } else {
            out!("{}", context.text);
            eprintln!(
                "{} line(s) from {} episode(s), {} of {budget} tokens",
                context.turns.len(),
                context.episodes.len(),
                context.tokens
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let hits = engine.recall(&query)?;
    for (i, h) in hits.iter().enumerate() {
        if args.json {
            outln!("{}", json_line(&EpisodeOut::from(h)));
        } else {
            outln!("{}", hit_text(i + 1, h));
        }
    }
    if hits.is_empty() && !args.json {
        eprintln!("no episode matches {:?}", args.query);
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn stats(config: &AppConfig, args: &StatsArgs) -> Result<ExitCode> {
    let engine = open_engine(config)?;
    let s = engine.stats(Some(&config.tenant))?;
    let llm = engine.llm_usage(Some(&config.tenant))?;
    if args.json {
        let mut out = serde_json::to_value(s)?;
        let stages: serde_json::Map<String, serde_json::Value> = llm
            .iter()
            .map(|(stage, usage)| Ok((stage.as_str().to_owned(), serde_json::to_value(usage)?)))
            .collect::<Result<_>>()?;
        out["llm"] = serde_json::Value::Object(stages);
        outln!("{}", json_line(&out));
    } else {
        outln!("tenant          {}", config.tenant);
        outln!("conversations   {}", s.conversations);
        outln!("messages        {}", s.messages);
        outln!("pending         {}", s.pending_messages);
        outln!("episodes        {}", s.episodes);
        outln!("jobs queued     {}", s.queued_jobs);
        outln!("jobs failed     {}", s.failed_jobs);
        for (stage, u) in &llm {
            outln!("llm {:<11} {u}", stage.as_str());
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn forget(config: &AppConfig, args: &ForgetArgs) -> Result<ExitCode> {
    // With the embedder the saved search index was built for, so it is opened, not rebuilt.
    let engine = open_with_embedder(config)?;
    if args.whole_tenant {
        let episodes = engine.delete_tenant(&config.tenant)?;
        if args.json {
            let out = serde_json::json!({"forgotten_tenant": config.tenant, "episodes": episodes});
            outln!("{}", json_line(&out));
        } else {
            outln!("forgot everything of tenant {} ({episodes} episode(s))", config.tenant);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(conversation) = &args.conversation {
        let key = ConversationKey::new(config.tenant.clone(), conversation.clone());
        let episodes = engine.delete_conversation(&key)?;
        if args.json {
            let out =
                serde_json::json!({"forgotten_conversation": conversation, "episodes": episodes});
            outln!("{}", json_line(&out));
        } else {
            outln!("forgot conversation {conversation} ({episodes} episode(s))");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let id = args.id.as_deref().expect("clap requires one of the three");
    engine.delete_episode(&Scope::tenant(&config.tenant), &EpisodeId(id.to_owned()))?;
    if args.json {
        outln!("{}", json_line(&serde_json::json!({"forgotten": id})));
    } else {
        outln!("forgot {id}");
    }
    Ok(ExitCode::SUCCESS)
}
