//! What a tenant's index keeps beside its two tantivy indexes (the episode table, line facts,
//! authors, word lists, message vectors and the generation), saved as one file written whole
//! and renamed into place, so a crash leaves the old file or the new one, never half of one.

use std::{
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
const FORMAT: u32 = 11;

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

/// The state as its file holds it, in a buffer made for `expected` bytes: one grown as it fills
/// copies what it holds at every doubling (at a million episodes, 600 MB took 0.55 s that way
/// and 0.42 s in a buffer of the right size).
pub(crate) fn encode(state: SavedRef<'_>, expected: usize) -> std::io::Result<Vec<u8>> {
    postcard::to_extend(&(FORMAT, state), Vec::with_capacity(expected))
        .map_err(std::io::Error::other)
}

/// Writes an [`encode`]d state into `folder`: a temporary file, then renamed over the old one.
pub(crate) fn write(folder: &Path, encoded: &[u8]) -> std::io::Result<()> {
    let temporary = folder.join(format!("{STATE}.tmp"));
    let mut out = BufWriter::new(fs::File::create(&temporary)?);
    out.write_all(encoded)?;
    out.flush()?;
    drop(out);
    fs::rename(&temporary, folder.join(STATE))
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
