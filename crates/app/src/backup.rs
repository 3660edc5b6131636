//! Backups of a SQLite database, taken while a server writes to it, and put back. The search
//! index of the copy is built from the copy itself, so that it matches it exactly: a copy of
//! the live index's files, taken while a server saves them, was found to answer from a state
//! that matched neither save.

use std::{
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::{Context, Result, bail};

use crate::{
    config::{AppConfig, Database},
    open_at, open_memory, open_store, search_folder,
};

/// What a backup or a restore did.
#[derive(Debug)]
pub struct Copied {
    /// The database written.
    pub database: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    pub seconds: f64,
    /// Where the database a restore replaced was kept, if it replaced one.
    pub kept: Option<PathBuf>,
    /// Whether the search index came with it (a backup made before backups held one has
    /// none: it is built on first use).
    pub with_index: bool,
}

fn sqlite(config: &AppConfig, what: &str) -> Result<PathBuf> {
    match config.database()? {
        Database::Sqlite(path) => Ok(path),
        Database::Postgres(_) => bail!(
            "{what} works on a SQLite database; a PostgreSQL database is backed up with pg_dump \
             and restored with pg_restore (docs/operations.md)"
        ),
    }
}

/// Writes a consistent copy of the database to `dest` while other processes go on writing,
/// and beside it (`dest.search`) the search index of that copy; `progress` hears how far the
/// index's build is (a tenant, changes done, changes in all).
pub fn backup(
    config: &AppConfig,
    dest: &Path,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<Copied> {
    let started = Instant::now();
    let db = sqlite(config, "epimem backup")?;
    for path in [dest.to_owned(), search_folder(dest)] {
        if path.exists() {
            bail!("{} exists: a backup never writes over a file; name a new one", path.display());
        }
    }
    let memory = open_memory(config)?;
    let copied = memory
        .backup_to(dest)
        .map_err(anyhow::Error::from)
        .and_then(|()| index_copy(config, dest, progress));
    if let Err(e) = copied {
        // Nothing half-made is left behind.
        remove_database(dest).ok();
        return Err(e)
            .with_context(|| format!("backing up {} to {}", db.display(), dest.display()));
    }
    Ok(Copied {
        bytes: std::fs::metadata(dest).map(|m| m.len()).unwrap_or(0),
        database: dest.to_owned(),
        seconds: started.elapsed().as_secs_f64(),
        kept: None,
        with_index: true,
    })
}

/// Builds the search index of every tenant of the copy at `dest`, from the copy: the vectors
/// are the database's, so no model runs again.
fn index_copy(
    config: &AppConfig,
    dest: &Path,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<()> {
    let copy = open_at(config, dest, true)?;
    for tenant in copy.tenants()? {
        copy.reindex(&tenant, &mut |done, total| progress(&tenant, done, total))
            .with_context(|| format!("building the search index of tenant {tenant}"))?;
    }
    Ok(())
}

/// Puts the backup `from` in place of the database (which no process may be using). A
/// database already there is refused, or with `replace` kept beside it, renamed.
pub fn restore(config: &AppConfig, from: &Path, replace: bool) -> Result<Copied> {
    let started = Instant::now();
    let db = sqlite(config, "epimem restore")?;
    if !from.is_file() {
        bail!("{} is not a backup file", from.display());
    }
    if db.exists() && !replace {
        bail!(
            "{} exists: --replace puts the backup in its place and keeps it beside, renamed",
            db.display()
        );
    }
    // The copy is checked (opened, its schema brought up to date) before anything is replaced.
    let restoring = with_suffix(&db, ".restoring");
    remove_database(&restoring)?;
    std::fs::copy(from, &restoring)
        .with_context(|| format!("copying {} to {}", from.display(), restoring.display()))?;
    // The backup's index comes along; without one (an older backup) it is built on first use.
    let index = search_folder(from);
    let with_index = index.is_dir();
    if with_index {
        copy_folder(&index, &search_folder(&restoring))?;
    }
    if let Err(e) = open_store(&Database::Sqlite(restoring.clone())) {
        remove_database(&restoring)?;
        return Err(e)
            .with_context(|| format!("{} is not a database epimem opens", from.display()));
    }
    let kept = match db.exists() {
        true => {
            let kept = with_suffix(&db, &format!(".replaced-{}", stamp_now()));
            move_database(&db, &kept)?;
            Some(kept)
        }
        false => None,
    };
    move_database(&restoring, &db)?;
    Ok(Copied {
        bytes: std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0),
        database: db,
        seconds: started.elapsed().as_secs_f64(),
        kept,
        with_index,
    })
}

/// `path` with `suffix` added to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// A SQLite database's files: the database, its write-ahead log and its shared memory.
fn files_of(db: &Path) -> [PathBuf; 3] {
    [db.to_owned(), with_suffix(db, "-wal"), with_suffix(db, "-shm")]
}

/// Renames a database with its log and shared memory (and its search index), so that no log
/// is left to be read into another database.
fn move_database(from: &Path, to: &Path) -> Result<()> {
    for (a, b) in files_of(from).iter().zip(files_of(to).iter()) {
        if a.exists() {
            std::fs::rename(a, b)
                .with_context(|| format!("renaming {} to {}", a.display(), b.display()))?;
        }
    }
    let (index_from, index_to) = (search_folder(from), search_folder(to));
    if index_from.exists() {
        std::fs::rename(&index_from, &index_to).with_context(|| {
            format!("renaming {} to {}", index_from.display(), index_to.display())
        })?;
    }
    Ok(())
}

/// Copies the folder `from` and everything in it to `to`, which must not exist.
fn copy_folder(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_folder(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

fn remove_database(db: &Path) -> Result<()> {
    for file in files_of(db).iter().filter(|f| f.exists()) {
        std::fs::remove_file(file).with_context(|| format!("removing {}", file.display()))?;
    }
    let index = search_folder(db);
    if index.exists() {
        std::fs::remove_dir_all(&index).with_context(|| format!("removing {}", index.display()))?;
    }
    Ok(())
}

/// The time now, for a file name (UTC, to the second).
fn stamp_now() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    epimem_core::Timestamp(seconds as i64 * 1000).to_rfc3339().replace(':', "")
}
