//! `episodes`, `show`, `recall` and `stats`: reading what epimem remembers.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use epimem_api::{
    MemoryError,
    wire::{EpisodesQuery, RecallIn},
};

use super::{open_memory, open_with_embedder};
use crate::{
    config::AppConfig,
    output::{detail_text, episode_line, hit_text, json_line},
};

#[derive(Debug, Args)]
pub(crate) struct EpisodesArgs {
    /// Only this conversation.
    #[arg(long)]
    conversation: Option<String>,
    /// Only this person's conversations (the `user` their messages carry).
    #[arg(long)]
    user: Option<String>,
    /// Only the newest this many episodes.
    #[arg(long)]
    limit: Option<usize>,
    /// The answer as one JSON object, as `GET /v1/episodes` gives it (newest first).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The episode's id (ep_…).
    id: String,
    /// The episode as one JSON object, as `GET /v1/episodes/ID` gives it.
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
    clap::ArgGroup::new("what").required(true).args(["id", "conversation", "user", "whole_tenant"])
))]
pub(crate) struct ForgetArgs {
    /// The episode to forget (ep_…): it leaves every index, and its messages lose their text
    /// but keep their place in the conversation.
    id: Option<String>,
    /// Forget a whole conversation instead: its messages, episodes, vectors and pending work.
    #[arg(long, value_name = "ID")]
    conversation: Option<String>,
    /// Forget everything this person said instead: every conversation whose messages carry
    /// this `user`, from every file and index; the tenant's timeline is told again without
    /// them.
    #[arg(long)]
    user: Option<String>,
    /// Forget everything the tenant (--tenant) remembers instead: every conversation, its
    /// facts and timeline, from every file and index. Its API keys stay.
    #[arg(long)]
    whole_tenant: bool,
    /// The answer as one JSON object (`episodes`: how many were forgotten).
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
    /// Only what this person said (the `user` their messages carry).
    #[arg(long)]
    user: Option<String>,
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
    #[arg(long, requires = "budget", conflicts_with = "min_relevance")]
    fill: bool,
    /// With --budget: the relevance (0 to 1: the probability that a line bears on the query)
    /// a line must reach for the block to speak (default relevance.speak): lower keeps more,
    /// higher leaves more empty.
    #[arg(long, requires = "budget", value_name = "P")]
    min_relevance: Option<f64>,
    /// The conversation the recall is made for, which the reader holds already (an agent's
    /// session): the block leaves its messages out, and the episodes it quotes are
    /// strengthened when that conversation goes on to use them.
    #[arg(long, value_name = "CONVERSATION")]
    asked_in: Option<String>,
    /// The answer as one JSON object, as `POST /v1/recall` and the MCP `recall` tool give it:
    /// `hits`, best first (with --budget: the `context` block and the `turns` it quotes), and
    /// the `facts` that bear on the query.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    /// One JSON object.
    #[arg(long)]
    json: bool,
}

/// A [`MemoryError`] as the CLI says it: its message alone (the code is for programs).
pub(crate) fn said(e: MemoryError) -> anyhow::Error {
    anyhow::anyhow!("{}", e.message())
}

pub(crate) fn episodes(config: &AppConfig, args: &EpisodesArgs) -> Result<ExitCode> {
    let memory = open_memory(config)?;
    let mut query = EpisodesQuery {
        conversation: args.conversation.clone(),
        user: args.user.clone(),
        limit: args.limit.or(Some(epimem_api::MAX_LIMIT)),
        ..EpisodesQuery::default()
    };
    let mut page = memory.episodes(&config.tenant, query.clone()).map_err(said)?;
    // Without a limit, every episode: the pages one after another, as one answer.
    while let (None, Some(cursor)) = (args.limit, page.next_cursor.take()) {
        query.cursor = Some(cursor);
        let next = memory.episodes(&config.tenant, query.clone()).map_err(said)?;
        page.episodes.extend(next.episodes);
        page.next_cursor = next.next_cursor;
    }
    if args.json {
        outln!("{}", json_line(&page));
        return Ok(ExitCode::SUCCESS);
    }
    // The API pages newest first; a person reads in time order, oldest first.
    for e in page.episodes.iter().rev() {
        outln!("{}", episode_line(e));
    }
    if page.episodes.is_empty() {
        eprintln!(
            "no episodes yet (messages become episodes when a trigger fires or on `epimem flush`)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn show(config: &AppConfig, args: &ShowArgs) -> Result<ExitCode> {
    let memory = open_memory(config)?;
    let episode = memory.episode(&config.tenant, &args.id).map_err(said)?;
    if args.json {
        outln!("{}", json_line(&episode));
    } else {
        out!("{}", detail_text(&episode));
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn recall(config: &AppConfig, args: &RecallArgs) -> Result<ExitCode> {
    let memory = open_with_embedder(config)?;
    super::load_index(&memory, &config.tenant)?;
    let request = RecallIn {
        query: args.query.clone(),
        conversation: args.conversation.clone(),
        user: args.user.clone(),
        project: args.project.as_deref().map(super::hook::project_name).transpose()?,
        since: args.since.clone(),
        until: args.until.clone(),
        within: args.within.clone(),
        limit: Some(args.limit as usize),
        budget: args.budget,
        episodes: args.episodes,
        fill: args.fill,
        min_relevance: args.min_relevance,
        asked_in: args.asked_in.clone(),
    };
    let out = memory.recall(&config.tenant, request).map_err(said)?;
    if args.json {
        outln!("{}", json_line(&out));
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(budget) = args.budget {
        let text = out.text();
        out!("{text}");
        if !text.ends_with('\n') {
            outln!();
        }
        let lines = out.turns.as_ref().map(Vec::len);
        match lines {
            Some(lines) => {
                eprintln!("{lines} line(s), {} of {budget} tokens", out.tokens.unwrap_or(0))
            }
            None => eprintln!(
                "{} episode(s), {} of {budget} tokens",
                out.hits.len(),
                out.tokens.unwrap_or(0)
            ),
        }
        return Ok(ExitCode::SUCCESS);
    }
    out!("{}", out.facts_text());
    for (i, hit) in out.hits.iter().enumerate() {
        outln!("{}", hit_text(i + 1, hit));
    }
    if out.hits.is_empty() {
        eprintln!("no episode matches {:?}", args.query);
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn stats(config: &AppConfig, args: &StatsArgs) -> Result<ExitCode> {
    let memory = open_memory(config)?;
    let s = memory.stats(&config.tenant).map_err(said)?;
    if args.json {
        outln!("{}", json_line(&s));
        return Ok(ExitCode::SUCCESS);
    }
    let c = &s;
    outln!("tenant          {}", config.tenant);
    outln!("conversations   {}", c.conversations);
    outln!("messages        {}", c.messages);
    outln!("pending         {}", c.pending_messages);
    outln!("episodes        {}", c.episodes);
    outln!("jobs queued     {}", c.queued_jobs);
    outln!("jobs failed     {}", c.failed_jobs);
    for (stage, u) in &s.llm {
        outln!("llm {stage:<11} {u}");
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn forget(config: &AppConfig, args: &ForgetArgs) -> Result<ExitCode> {
    // With the embedder the saved search index was built for, so it is opened, not rebuilt.
    let memory = open_with_embedder(config)?;
    let tenant = &config.tenant;
    let (out, said_text) = if args.whole_tenant {
        let out = memory.forget_tenant(tenant).map_err(said)?;
        let text = format!("forgot everything of tenant {tenant} ({} episode(s))", out.episodes);
        (out, text)
    } else if let Some(user) = &args.user {
        let out = memory.forget_user(tenant, user).map_err(said)?;
        let text = format!("forgot everything {user} said ({} episode(s))", out.episodes);
        (out, text)
    } else if let Some(conversation) = &args.conversation {
        let out = memory.forget_conversation(tenant, conversation).map_err(said)?;
        let text = format!("forgot conversation {conversation} ({} episode(s))", out.episodes);
        (out, text)
    } else {
        let id = args.id.as_deref().expect("clap requires one of the three");
        (memory.forget_episode(tenant, id).map_err(said)?, format!("forgot {id}"))
    };
    if args.json {
        outln!("{}", json_line(&out));
    } else {
        outln!("{said_text}");
    }
    Ok(ExitCode::SUCCESS)
}
