//! `epimem hooks backfill`: the sessions a coding agent ran before the hooks were installed,
//! read where the agent keeps them and recorded as the hooks would have, each closed into its
//! work units. A session the database already holds is left as it is.

use std::{path::PathBuf, process::ExitCode};

use anyhow::{Context, Result, anyhow};
use clap::Args;
use epimem_core::{ConversationKey, Scope};
use epimem_hooks::{Agent, FoundSession, find_sessions, project_of};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::open_with_embedder;
use crate::{config::AppConfig, output::json_line};

#[derive(Debug, Args)]
pub(crate) struct BackfillArgs {
    /// The agent whose sessions to read: claude (Claude Code), codex, gemini or opencode.
    #[arg(long, value_name = "NAME")]
    agent: Agent,
    /// Only the sessions of this project (a folder in its repository) [default: the current
    /// folder's].
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    project: Option<PathBuf>,
    /// Every project's sessions.
    #[arg(long)]
    all: bool,
    /// Say what would be recorded, and record nothing.
    #[arg(long)]
    dry_run: bool,
    /// The report as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Default, Serialize)]
struct Report {
    sessions_found: usize,
    sessions_recorded: usize,
    messages: u64,
    work_units: u64,
    skipped_already_recorded: usize,
    skipped_other_project: usize,
    unreadable: usize,
}

pub(crate) fn backfill(config: &AppConfig, args: &BackfillArgs) -> Result<ExitCode> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| anyhow!("HOME is not set: where are the agent's sessions?"))?;
    let project = match (&args.project, args.all) {
        (_, true) => None,
        (Some(dir), false) => {
            Some(project_of(&dir.canonicalize().with_context(|| dir.display().to_string())?))
        }
        (None, false) => Some(project_of(&std::env::current_dir().context("the current folder")?)),
    };
    let (sessions, unreadable) = find_sessions(args.agent, &home);
    for file in &unreadable {
        eprintln!("epimem: could not read {}: {}", file.source.display(), file.why);
    }
    let memory = open_with_embedder(config)?;
    let hooks = super::hook::hook_dir(config);
    let mut report = Report {
        sessions_found: sessions.len(),
        unreadable: unreadable.len(),
        ..Report::default()
    };
    let bar = ProgressBar::new(sessions.len() as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} backfilling [{bar:30}] {pos}/{len} sessions ({eta})",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    for session in &sessions {
        bar.inc(1);
        if project.as_ref().is_some_and(|p| *p != session.project()) {
            report.skipped_other_project += 1;
            continue;
        }
        let key = ConversationKey::new(config.tenant.clone(), session.id.clone());
        if memory.queue(&key)?.is_some() {
            report.skipped_already_recorded += 1;
            continue;
        }
        let messages = session.messages(&config.tenant, config.hooks.output_chars);
        report.sessions_recorded += 1;
        if args.dry_run {
            report.messages += messages.len() as u64;
            continue;
        }
        report.messages += memory.ingest(messages).with_context(|| what(session))?.inserted;
        let scope = Scope::tenant(&config.tenant).with_conversation(Some(session.id.clone()));
        report.work_units +=
            memory.flush_now(&scope).with_context(|| what(session))?.episodes_closed;
        // A hook of the same session, if it goes on, reads the transcript from here on.
        if args.agent.reads_transcript()
            && let Ok(len) = std::fs::metadata(&session.source).map(|m| m.len())
        {
            hooks.set_cursor(&session.id, len).ok();
        }
    }
    bar.finish_and_clear();
    if args.json {
        outln!("{}", json_line(&report));
    } else {
        let verb = if args.dry_run { "would record" } else { "recorded" };
        outln!(
            "{verb} {} of {} {} session(s): {} message(s), {} work unit(s)",
            report.sessions_recorded,
            report.sessions_found,
            args.agent.title(),
            report.messages,
            report.work_units
        );
        let skipped = [
            (
                report.skipped_already_recorded,
                "already in memory (the hooks, or a backfill, recorded them)",
            ),
            (report.skipped_other_project, "of other projects (--all reads them)"),
            (report.unreadable, "file(s) that could not be read (said above)"),
        ];
        for (count, why) in skipped.iter().filter(|(count, _)| *count > 0) {
            outln!("  skipped {count}: {why}");
        }
    }
    Ok(if unreadable.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(3) })
}

fn what(session: &FoundSession) -> String {
    format!("recording session {} ({})", session.id, session.source.display())
}
