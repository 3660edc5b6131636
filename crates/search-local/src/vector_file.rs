//! The 8-bit components of the message vectors: in a file of their own beside the state, mapped
//! when the index is opened and copied into memory only when a process changes them. A process
//! that only recalls never reads more of them than its searches touch, and a state saved every
//! few seconds does not write them again while they are unchanged.
//!
//! Each write goes to a new file named by the generation it holds (`vectors-<generation>.bin`),
//! and the state names the file it goes with: a crash between the two writes leaves the state
//! naming the old file, which is still there. Files no state names are deleted after each save.

use std::{
    fs,
    io::Write,
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

/// The file name for the vectors of `generation`.
pub(crate) fn file_name(generation: u64) -> String {
    format!("vectors-{generation}.bin")
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

/// Maps `name` in `folder`; an error if it is missing or not `len` bytes long.
pub(crate) fn map(folder: &Path, name: &str, len: u64) -> std::io::Result<VectorData> {
    let directory = MmapDirectory::open(folder).map_err(std::io::Error::other)?;
    let bytes =
        directory.open_read(Path::new(name)).map_err(std::io::Error::other)?.read_bytes()?;
    if bytes.len() as u64 != len {
        return Err(std::io::Error::other(format!(
            "{name} holds {} bytes, the state says {len}",
            bytes.len()
        )));
    }
    Ok(if len == 0 { VectorData::Empty } else { VectorData::Mapped(bytes) })
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
