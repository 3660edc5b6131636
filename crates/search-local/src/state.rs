//! What a tenant's index keeps beside its two tantivy indexes (the episode table, line facts,
//! authors, word lists, message vectors and the generation), saved as one file written whole,
//! synced to disk and renamed into place, so a crash leaves the old file or the new one, never
//! half of one.

use std::{
    cell::Cell,
    fs,
    io::{BufWriter, Write},
    path::Path,
};

use serde::{Deserialize, Serialize};
use tantivy::directory::{Directory, MmapDirectory, error::OpenReadError};

use crate::index::Parts;

/// The file, in the tenant's folder.
pub(crate) const STATE: &str = "state.bin";
/// Bumped whenever what is saved changes shape: an older file is rebuilt, never misread.
const FORMAT: u32 = 14;

/// What is saved, borrowed from a live index (fields in the order of [`Saved`]).
#[derive(Serialize)]
pub(crate) struct SavedRef<'a> {
    pub(crate) tenant: &'a str,
    /// The embedder the message vectors come from.
    pub(crate) fingerprint: &'a str,
    pub(crate) generation: u64,
    pub(crate) parts: &'a Parts,
}

/// What was saved, read back (postcard lays a struct's fields one after the other, so this is
/// [`SavedRef`]'s layout).
#[derive(Deserialize)]
pub(crate) struct Saved {
    pub(crate) head: Head,
    pub(crate) parts: Parts,
}

/// Bytes of the state written between syncs of its file to disk: the sync before it is
/// renamed into place is then short, and an update the save gives way to waits for one of
/// these at most.
const SYNC_EVERY: u64 = 64 << 20;

/// Writes the state into a temporary file in `folder`, encoding it as it goes, so no copy of
/// it is held in memory (600 MB at a million episodes, which a save used to add to the
/// process's memory while it lasted), and syncs it to disk, so that once [`put_in_place`] has
/// renamed it over the old one, a power cut leaves one or the other whole. Looks at `give_way`
/// before each megabyte it writes, and stops when it says so: false then (the part written is
/// left for [`remove_temporary`]).
pub(crate) fn write_temporary(
    folder: &Path,
    state: SavedRef<'_>,
    give_way: &dyn Fn() -> bool,
) -> std::io::Result<bool> {
    let gave_way = Cell::new(false);
    let file = fs::File::create(temporary(folder))?;
    let file = GivingWay { out: file, give_way, gave_way: &gave_way, unsynced: 0 };
    let encoded = postcard::to_io(&(FORMAT, state), BufWriter::with_capacity(1 << 20, file));
    let written = match encoded {
        Ok(out) => out.into_inner().map_err(std::io::IntoInnerError::into_error),
        Err(e) => Err(std::io::Error::other(e)),
    };
    match written {
        _ if gave_way.get() => Ok(false),
        Ok(file) => file.out.sync_data().map(|()| true),
        Err(e) => Err(e),
    }
}

/// A file that fails every write once `give_way` says so, noting that it did, and is synced
/// to disk every [`SYNC_EVERY`] bytes.
struct GivingWay<'a> {
    out: fs::File,
    give_way: &'a dyn Fn() -> bool,
    gave_way: &'a Cell<bool>,
    unsynced: u64,
}

impl Write for GivingWay<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if (self.give_way)() {
            self.gave_way.set(true);
            return Err(std::io::Error::other("the save gave way"));
        }
        let written = self.out.write(bytes)?;
        self.unsynced += written as u64;
        if self.unsynced >= SYNC_EVERY {
            self.out.sync_data()?;
            self.unsynced = 0;
        }
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Deletes what [`write_temporary`] left of a state not put in place.
pub(crate) fn remove_temporary(folder: &Path) -> std::io::Result<()> {
    match fs::remove_file(temporary(folder)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Puts the state [`write_temporary`] wrote in place of the one saved before.
pub(crate) fn put_in_place(folder: &Path) -> std::io::Result<()> {
    fs::rename(temporary(folder), folder.join(STATE))
}

fn temporary(folder: &Path) -> std::path::PathBuf {
    folder.join(format!("{STATE}.tmp"))
}

/// The head of a saved state (the fields before its parts), read without decoding the rest:
/// enough to tell a state that does not belong with the BM25 indexes beside it (decoding a
/// million episodes' state takes about half a second).
#[derive(Deserialize)]
pub(crate) struct Head {
    pub(crate) tenant: String,
    pub(crate) fingerprint: String,
    pub(crate) generation: u64,
}

/// The state in `folder`, if there is a file; an error if it cannot be read as one. The file is
/// mapped, not read: copying it into a buffer first was most of the time an open took.
pub(crate) fn load(folder: &Path) -> std::io::Result<Option<Saved>> {
    read(folder, |rest| postcard::from_bytes(rest))
}

/// The [`Head`] of the state in `folder`, if there is a file.
pub(crate) fn head(folder: &Path) -> std::io::Result<Option<Head>> {
    read(folder, |rest| postcard::take_from_bytes(rest).map(|(head, _)| head))
}

fn read<T>(
    folder: &Path,
    decode: impl FnOnce(&[u8]) -> postcard::Result<T>,
) -> std::io::Result<Option<T>> {
    let directory = MmapDirectory::open(folder).map_err(std::io::Error::other)?;
    let bytes = match directory.open_read(Path::new(STATE)) {
        Ok(file) => file.read_bytes()?,
        Err(OpenReadError::FileDoesNotExist(_)) => return Ok(None),
        Err(e) => return Err(std::io::Error::other(e)),
    };
    // The format first, so a file of another version is rebuilt, never misread.
    let (format, rest): (u32, &[u8]) =
        postcard::take_from_bytes(bytes.as_slice()).map_err(std::io::Error::other)?;
    if format != FORMAT {
        return Err(std::io::Error::other(format!("saved format {format}, not {FORMAT}")));
    }
    decode(rest).map(Some).map_err(std::io::Error::other)
}
