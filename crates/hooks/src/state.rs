//! What the hooks keep between two events, in a folder of their own (beside the database by
//! default): how far each session's transcript was read, the events that could not be stored
//! yet (the spool), and a log of what went wrong (a hook never speaks on stderr unasked).

use std::{
    fs::{self, OpenOptions},
    io::Write,
    path::{Path, PathBuf},
};

use epimem_core::Timestamp;
use serde::{Deserialize, Serialize};

use crate::agent::Agent;

/// The hooks' folder.
#[derive(Debug, Clone)]
pub struct HookDir {
    root: PathBuf,
}

/// An event the store could not take, kept to be stored by a later hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spooled {
    /// When the event arrived (milliseconds since the epoch): its messages keep that time.
    pub received: i64,
    pub event: String,
    /// The agent that sent it (what its event names mean).
    #[serde(default)]
    pub agent: Agent,
    /// How often storing it failed for a reason other than a database out of reach.
    #[serde(default)]
    pub failures: u32,
}

const SPOOL: &str = "spool.jsonl";
/// A database broken for good must not fill the disk: past this the spool takes no more.
const SPOOL_LIMIT: u64 = 16 << 20;
const LOG: &str = "hooks.log";

impl HookDir {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The folder beside a SQLite database: `<db>.hooks`.
    pub fn beside(db: &Path) -> Self {
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(".hooks");
        Self::new(db.with_file_name(name))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn log_path(&self) -> PathBuf {
        self.root.join(LOG)
    }

    fn cursor_path(&self, session: &str) -> PathBuf {
        self.root
            .join("cursors")
            .join(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(session.as_bytes())))
    }

    /// How far the session's transcript was read (0 when never).
    pub fn cursor(&self, session: &str) -> u64 {
        fs::read_to_string(self.cursor_path(session))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Records how far the session's transcript was read (written whole, then renamed).
    pub fn set_cursor(&self, session: &str, offset: u64) -> std::io::Result<()> {
        let path = self.cursor_path(session);
        fs::create_dir_all(path.parent().expect("a cursor is in a folder"))?;
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        fs::write(&tmp, offset.to_string())?;
        fs::rename(tmp, path)
    }

    /// Whether this is the first prompt of `session` the hooks see: true once, when its
    /// marker is made (a folder that cannot be written counts every prompt as the first).
    pub fn first_prompt(&self, session: &str) -> bool {
        let marker = self.cursor_path(session).with_extension("prompted");
        let made = std::fs::create_dir_all(self.root.join("cursors"))
            .and_then(|()| std::fs::OpenOptions::new().write(true).create_new(true).open(&marker));
        !matches!(made, Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists)
    }

    /// Keeps an event for a later hook to store (refused once the spool holds 16 MiB).
    pub fn spool(&self, event: &Spooled) -> std::io::Result<()> {
        let held = fs::metadata(self.root.join(SPOOL)).map_or(0, |m| m.len());
        if held >= SPOOL_LIMIT {
            return Err(std::io::Error::other(format!(
                "the spool {} is full ({held} bytes)",
                self.root.join(SPOOL).display()
            )));
        }
        let line = serde_json::to_string(event).map_err(std::io::Error::other)?;
        self.append(SPOOL, &line)
    }

    /// Takes the spooled events, oldest first, so that no other hook replays them too (the
    /// spool is renamed away before it is read).
    pub fn take_spool(&self) -> Vec<Spooled> {
        let spool = self.root.join(SPOOL);
        if !spool.exists() {
            return Vec::new();
        }
        let taken = self.root.join(format!("spool.{}.taking", std::process::id()));
        if fs::rename(&spool, &taken).is_err() {
            return Vec::new();
        }
        let text = fs::read_to_string(&taken).unwrap_or_default();
        let _ = fs::remove_file(&taken);
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// Appends a line to the log, with the time; a log that cannot be written is let go.
    pub fn log(&self, now: Timestamp, message: &str) {
        let _ = self.append(LOG, &format!("{} {message}", now.to_rfc3339()));
    }

    fn append(&self, name: &str, line: &str) -> std::io::Result<()> {
        fs::create_dir_all(&self.root)?;
        let mut file = OpenOptions::new().create(true).append(true).open(self.root.join(name))?;
        file.write_all(format!("{line}\n").as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_and_the_spool_survive_between_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let hooks = HookDir::beside(&dir.path().join("epimem.db"));
        assert_eq!(hooks.root(), dir.path().join("epimem.db.hooks"));
        assert_eq!(hooks.cursor("s1"), 0);
        hooks.set_cursor("s1", 1234).unwrap();
        assert_eq!((hooks.cursor("s1"), hooks.cursor("s2")), (1234, 0));

        assert!(hooks.take_spool().is_empty());
        let spooled = |at: i64, event: &str| Spooled {
            received: at,
            event: event.into(),
            agent: Agent::Claude,
            failures: 0,
        };
        hooks.spool(&spooled(5, "{\"a\":1}")).unwrap();
        hooks.spool(&spooled(6, "{\"b\":2}")).unwrap();
        let taken = hooks.take_spool();
        assert_eq!(taken.iter().map(|s| s.received).collect::<Vec<_>>(), [5, 6]);
        assert!(hooks.take_spool().is_empty(), "taken once");
        let big = "x".repeat(1 << 20);
        while hooks.spool(&spooled(7, &big)).is_ok() {}
        let kept = hooks.take_spool();
        assert!((16..=17).contains(&kept.len()), "{}", kept.len());
        hooks.log(Timestamp(0), "the store is locked");
        assert!(std::fs::read_to_string(hooks.log_path()).unwrap().contains("locked"));
    }
}
