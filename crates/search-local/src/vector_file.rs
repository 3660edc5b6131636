//! The 8-bit components of the message vectors: in a file of their own beside the state, mapped
//! when the index is opened and copied into memory only when a process changes them. A process
//! that only recalls never reads more of them than its searches touch, and a state saved every
//! few seconds does not write them again while they are unchanged.
//!
//! The state names the file it goes with and how many bytes of it are its own. Rows added
//! since the last save are appended to that file: the bytes the state names stay as they are,
//! so a crash between the two writes leaves the state naming a file whose first bytes are still
//! right (a million episodes' vectors are 512 MB; written whole at every save, they were most of
//! a segmentation job's time). Rows removed or stored in another order go to a new file, named
//! by the generation it holds (`vectors-<generation>.bin`) and never the one the state names.
//! Files no state names are deleted after each save.

use std::{
    fs,
    io::{Seek, SeekFrom, Write},
    path::{Path, PathBuf},
    sync::Arc,
};

use tantivy::directory::{Directory, MmapDirectory, OwnedBytes};

/// The components, mapped from a saved file or held in memory; a clone shares them (with a
/// grouping that runs outside the index's lock), and they are copied only if they change
/// meanwhile.
#[derive(Default, Clone)]
pub(crate) enum VectorData {
    Mapped(OwnedBytes),
    #[default]
    Empty,
    Owned(Arc<Vec<i8>>),
}

impl std::fmt::Debug for VectorData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match self {
            Self::Mapped(_) => "mapped",
            Self::Empty => "empty",
            Self::Owned(_) => "owned",
        };
        write!(f, "VectorData({how}, {} bytes)", self.as_slice().len())
    }
}

impl VectorData {
    pub(crate) fn as_slice(&self) -> &[i8] {
        match self {
            Self::Mapped(bytes) => bytemuck::cast_slice(bytes.as_slice()),
            Self::Empty => &[],
            Self::Owned(data) => data,
        }
    }

    /// The components in memory of their own, to change without copying them then.
    pub(crate) fn copied(&self) -> Self {
        Self::Owned(Arc::new(self.as_slice().to_vec()))
    }

    /// The components to change, copied out of the mapped file first if they are mapped (or
    /// if a grouping still shares them).
    pub(crate) fn to_mut(&mut self) -> &mut Vec<i8> {
        if !matches!(self, Self::Owned(_)) {
            *self = self.copied();
        }
        match self {
            Self::Owned(data) => Arc::make_mut(data),
            _ => unreachable!("made owned above"),
        }
    }
}

/// A new file's name for the vectors of `generation`, other than `current` (the file the state
/// names, which a crash may still need).
pub(crate) fn file_name(generation: u64, current: Option<&str>) -> String {
    let name = format!("vectors-{generation}.bin");
    if current == Some(name.as_str()) { format!("vectors-{generation}-1.bin") } else { name }
}

/// The vectors a save writes: into a new file, or the rows past `from` appended to the file
/// that holds the rest.
#[derive(Debug)]
pub(crate) struct VectorSave {
    pub(crate) name: String,
    /// Components already in the file (`0`: a new file).
    pub(crate) from: usize,
    /// All the components, shared with the index.
    pub(crate) data: VectorData,
}

impl VectorSave {
    pub(crate) fn write(&self, folder: &Path) -> std::io::Result<()> {
        let data = self.data.as_slice();
        match self.from {
            0 => write(folder, &self.name, data),
            from => append(folder, &self.name, from as u64, &data[from..]),
        }
    }
}

/// Writes `data` into `folder` as `name` (a temporary file, then renamed).
pub(crate) fn write(folder: &Path, name: &str, data: &[i8]) -> std::io::Result<()> {
    let temporary = folder.join(format!("{name}.tmp"));
    let mut out = fs::File::create(&temporary)?;
    out.write_all(bytemuck::cast_slice(data))?;
    out.sync_data()?;
    drop(out);
    fs::rename(&temporary, folder.join(name))
}

/// Appends `tail` to `name` in `folder` at byte `from`; whatever lies past `from` was left by
/// a save that did not finish (no state names it) and is overwritten.
pub(crate) fn append(folder: &Path, name: &str, from: u64, tail: &[i8]) -> std::io::Result<()> {
    let mut out = fs::OpenOptions::new().write(true).open(folder.join(name))?;
    let len = out.metadata()?.len();
    if len < from {
        return Err(std::io::Error::other(format!(
            "{name} holds {len} bytes, fewer than the {from} saved"
        )));
    }
    out.set_len(from)?;
    out.seek(SeekFrom::Start(from))?;
    out.write_all(bytemuck::cast_slice(tail))?;
    out.sync_data()
}

/// Maps the first `len` bytes of `name` in `folder` (bytes past them were appended by a save
/// whose state was not written); an error if it is missing or shorter.
pub(crate) fn map(folder: &Path, name: &str, len: u64) -> std::io::Result<VectorData> {
    let directory = MmapDirectory::open(folder).map_err(std::io::Error::other)?;
    let bytes =
        directory.open_read(Path::new(name)).map_err(std::io::Error::other)?.read_bytes()?;
    if (bytes.len() as u64) < len {
        return Err(std::io::Error::other(format!(
            "{name} holds {} bytes, the state says {len}",
            bytes.len()
        )));
    }
    Ok(if len == 0 { VectorData::Empty } else { VectorData::Mapped(bytes.slice(0..len as usize)) })
}

/// Deletes the vector files in `folder` other than `keep` (left by earlier saves or a crash).
pub(crate) fn remove_others(folder: &Path, keep: Option<&str>) -> std::io::Result<()> {
    for entry in fs::read_dir(folder)? {
        let path: PathBuf = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        if name.starts_with("vectors-") && Some(name) != keep {
            fs::remove_file(&path)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(data: &VectorData) -> Vec<i8> {
        data.as_slice().to_vec()
    }

    #[test]
    fn an_append_keeps_the_saved_bytes_and_overwrites_what_an_unfinished_one_left() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path();
        write(folder, "v.bin", &[1, 2, 3]).unwrap();
        // A save that appended and died before its state was written: the state still says 3.
        append(folder, "v.bin", 3, &[9, 9, 9, 9]).unwrap();
        assert_eq!(
            bytes(&map(folder, "v.bin", 3).unwrap()),
            [1, 2, 3],
            "only what the state names"
        );
        append(folder, "v.bin", 3, &[4, 5]).unwrap();
        assert_eq!(fs::metadata(folder.join("v.bin")).unwrap().len(), 5, "the leftover is gone");
        assert_eq!(bytes(&map(folder, "v.bin", 5).unwrap()), [1, 2, 3, 4, 5]);
        let short = map(folder, "v.bin", 6).unwrap_err().to_string();
        assert!(short.contains("holds 5 bytes, the state says 6"), "{short}");
        let short = append(folder, "v.bin", 8, &[1]).unwrap_err().to_string();
        assert!(short.contains("fewer than the 8 saved"), "{short}");
    }

    #[test]
    fn a_new_file_never_takes_the_name_of_the_one_the_state_names() {
        assert_eq!(file_name(4, None), "vectors-4.bin");
        assert_eq!(file_name(4, Some("vectors-3.bin")), "vectors-4.bin");
        assert_eq!(file_name(4, Some("vectors-4.bin")), "vectors-4-1.bin");
        assert_eq!(file_name(4, Some("vectors-4-1.bin")), "vectors-4.bin");
    }
}
