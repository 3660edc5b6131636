//! The 8-bit components of the message vectors: in a file of their own beside the state, mapped
//! when the index is opened. Rows added since are held in memory after the mapped ones until a
//! save has written them, and are read from the file after it; only removing rows or storing
//! them in another order copies them all into memory, until the next save. A process that only
//! recalls never reads more of them than its searches touch, one that adds rows never copies
//! the file (512 MB at a million episodes), and a state saved every few seconds does not write
//! them again while they are unchanged.
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

/// The components: those a save or a rewrite left (mapped from the saved file, or in memory
/// once stored anew), then the rows added since, in memory. A clone shares both (with a
/// grouping that runs outside the index's lock, or a save being written); a row added
/// meanwhile copies only the added part.
#[derive(Default, Clone)]
pub(crate) struct VectorData {
    base: Base,
    added: Arc<Vec<i8>>,
}

#[derive(Default, Clone)]
enum Base {
    #[default]
    Empty,
    Mapped(OwnedBytes),
    Owned(Arc<Vec<i8>>),
}

impl Base {
    fn as_slice(&self) -> &[i8] {
        match self {
            Self::Mapped(bytes) => bytemuck::cast_slice(bytes.as_slice()),
            Self::Empty => &[],
            Self::Owned(data) => data,
        }
    }
}

impl std::fmt::Debug for VectorData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match self.base {
            Base::Mapped(_) => "mapped",
            Base::Empty => "empty",
            Base::Owned(_) => "owned",
        };
        let (base, added) = (self.base.as_slice().len(), self.added.len());
        write!(f, "VectorData({how} {base} bytes, {added} added)")
    }
}

impl VectorData {
    /// Components stored anew in memory.
    pub(crate) fn owned(data: Vec<i8>) -> Self {
        Self { base: Base::Owned(Arc::new(data)), added: Arc::default() }
    }

    pub(crate) fn components(&self) -> Components<'_> {
        Components { base: self.base.as_slice(), added: &self.added }
    }

    pub(crate) fn len(&self) -> usize {
        self.base.as_slice().len() + self.added.len()
    }

    /// Bytes held in this process's memory rather than mapped from a file.
    #[cfg(test)]
    pub(crate) fn in_memory(&self) -> usize {
        let base = if let Base::Owned(data) = &self.base { data.len() } else { 0 };
        base + self.added.len()
    }

    /// Where rows are added: after the others, in memory (copied first only if a clone
    /// still shares them, and only the rows added since the base).
    pub(crate) fn added_mut(&mut self) -> &mut Vec<i8> {
        Arc::make_mut(&mut self.added)
    }

    /// All the components in memory of their own, to change in place: a mapped base is
    /// copied out of its file (512 MB at a million episodes), so this is for rewrites only.
    pub(crate) fn to_mut(&mut self) -> &mut Vec<i8> {
        if !matches!(self.base, Base::Owned(_)) || !self.added.is_empty() {
            *self = Self::owned(self.components().parts_from(0).concat());
        }
        match &mut self.base {
            Base::Owned(data) => Arc::make_mut(data),
            _ => unreachable!("made owned above"),
        }
    }

    /// These components with their first `mapped.len()` read from `mapped` instead, the same
    /// bytes as written to a file: only the rows added since stay in memory.
    pub(crate) fn rebased(&self, mapped: VectorData) -> Self {
        let from = mapped.len();
        let added = self.components().parts_from(from).concat();
        Self { base: mapped.base, added: Arc::new(added) }
    }
}

/// The components as one run, over a base and the rows added after it.
#[derive(Clone, Copy)]
pub(crate) struct Components<'a> {
    base: &'a [i8],
    added: &'a [i8],
}

impl<'a> From<&'a [i8]> for Components<'a> {
    fn from(base: &'a [i8]) -> Self {
        Self { base, added: &[] }
    }
}

impl<'a> Components<'a> {
    pub(crate) fn len(self) -> usize {
        self.base.len() + self.added.len()
    }

    /// The `dim` components stored at `position` (no row lies across the two parts: the base
    /// holds whole rows).
    #[inline(always)]
    pub(crate) fn row(self, position: usize, dim: usize) -> &'a [i8] {
        let start = position * dim;
        match start.checked_sub(self.base.len()) {
            None => &self.base[start..start + dim],
            Some(start) => &self.added[start..start + dim],
        }
    }

    /// The components from `from` on, in (at most) two parts.
    pub(crate) fn parts_from(self, from: usize) -> [&'a [i8]; 2] {
        let split = self.base.len();
        [&self.base[from.min(split)..], &self.added[from.saturating_sub(split)..]]
    }

    /// The rows stored in `order` (new position `i` holds what position `order[i]` held).
    pub(crate) fn permuted(self, dim: usize, order: &[u32]) -> Vec<i8> {
        let mut out = Vec::with_capacity(order.len() * dim);
        for &p in order {
            out.extend_from_slice(self.row(p as usize, dim));
        }
        out
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
    /// How many times the index had stored its rows anew when this was taken.
    pub(crate) rewrites: u64,
}

/// Vectors a save wrote, mapped from the file: what the index reads its first
/// `data.len()` components from after ([`crate::vectors::VectorIndex::written`]), unless it
/// stored its rows anew since `rewrites`.
#[derive(Debug)]
pub(crate) struct Written {
    pub(crate) data: VectorData,
    pub(crate) rewrites: u64,
}

impl VectorSave {
    /// Writes the components, then maps what it wrote.
    pub(crate) fn write(&self, folder: &Path) -> std::io::Result<Written> {
        let data = self.data.components();
        match self.from {
            0 => write(folder, &self.name, data)?,
            from => append(folder, &self.name, from as u64, data)?,
        }
        let data = map(folder, &self.name, data.len() as u64)?;
        Ok(Written { data, rewrites: self.rewrites })
    }
}

/// Writes `data` into `folder` as `name` (a temporary file, then renamed).
pub(crate) fn write(folder: &Path, name: &str, data: Components<'_>) -> std::io::Result<()> {
    let temporary = folder.join(format!("{name}.tmp"));
    let mut out = fs::File::create(&temporary)?;
    for part in data.parts_from(0) {
        out.write_all(bytemuck::cast_slice(part))?;
    }
    out.sync_data()?;
    drop(out);
    fs::rename(&temporary, folder.join(name))
}

/// Appends the components of `data` from `from` on to `name` in `folder`, whose first `from`
/// bytes hold the rest; whatever lies past `from` was left by a save that did not finish (no
/// state names it) and is overwritten.
pub(crate) fn append(
    folder: &Path,
    name: &str,
    from: u64,
    data: Components<'_>,
) -> std::io::Result<()> {
    let mut out = fs::OpenOptions::new().write(true).open(folder.join(name))?;
    let len = out.metadata()?.len();
    if len < from {
        return Err(std::io::Error::other(format!(
            "{name} holds {len} bytes, fewer than the {from} saved"
        )));
    }
    out.set_len(from)?;
    out.seek(SeekFrom::Start(from))?;
    for part in data.parts_from(from as usize) {
        out.write_all(bytemuck::cast_slice(part))?;
    }
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
    let base = if len == 0 { Base::Empty } else { Base::Mapped(bytes.slice(0..len as usize)) };
    Ok(VectorData { base, added: Arc::default() })
}

/// The CRC-32 of `parts` after what `hasher` has seen.
pub(crate) fn checksum(mut hasher: crc32fast::Hasher, parts: [&[i8]; 2]) -> u32 {
    for part in parts {
        hasher.update(bytemuck::cast_slice(part));
    }
    hasher.finalize()
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
        data.components().parts_from(0).concat()
    }

    fn run(data: &[i8]) -> Components<'_> {
        Components::from(data)
    }

    #[test]
    fn an_append_keeps_the_saved_bytes_and_overwrites_what_an_unfinished_one_left() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path();
        write(folder, "v.bin", run(&[1, 2, 3])).unwrap();
        // A save that appended and died before its state was written: the state still says 3.
        append(folder, "v.bin", 3, run(&[1, 2, 3, 9, 9, 9, 9])).unwrap();
        assert_eq!(
            bytes(&map(folder, "v.bin", 3).unwrap()),
            [1, 2, 3],
            "only what the state names"
        );
        append(folder, "v.bin", 3, run(&[1, 2, 3, 4, 5])).unwrap();
        assert_eq!(fs::metadata(folder.join("v.bin")).unwrap().len(), 5, "the leftover is gone");
        assert_eq!(bytes(&map(folder, "v.bin", 5).unwrap()), [1, 2, 3, 4, 5]);
        let short = map(folder, "v.bin", 6).unwrap_err().to_string();
        assert!(short.contains("holds 5 bytes, the state says 6"), "{short}");
        let short = append(folder, "v.bin", 8, run(&[1; 9])).unwrap_err().to_string();
        assert!(short.contains("fewer than the 8 saved"), "{short}");
    }

    #[test]
    fn rows_added_to_mapped_components_stay_in_memory_until_written_and_mapped_again() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path();
        write(folder, "v.bin", run(&[1, 2, 3, 4])).unwrap();
        let mut data = map(folder, "v.bin", 4).unwrap();
        data.added_mut().extend_from_slice(&[5, 6]);
        assert_eq!(data.in_memory(), 2, "only the added row is in memory");
        let (components, dim) = (data.components(), 2);
        let rows: Vec<&[i8]> = (0..3).map(|p| components.row(p, dim)).collect();
        assert_eq!(rows, [&[1, 2][..], &[3, 4], &[5, 6]]);
        assert_eq!(components.permuted(dim, &[2, 0]), [5, 6, 1, 2]);
        assert_eq!(components.parts_from(3), [&[4][..], &[5, 6]]);
        // Saved by appending the added row; read from the file after, with one more added.
        let save = VectorSave { name: "v.bin".into(), from: 4, data: data.clone(), rewrites: 0 };
        data.added_mut().extend_from_slice(&[7, 8]);
        let mapped = save.write(folder).unwrap().data;
        let rebased = data.rebased(mapped);
        assert_eq!((bytes(&rebased), rebased.in_memory()), (vec![1, 2, 3, 4, 5, 6, 7, 8], 2));
        // A rewrite takes everything into memory.
        let mut rewritten = rebased.clone();
        rewritten.to_mut().truncate(2);
        assert_eq!((bytes(&rewritten), rewritten.in_memory()), (vec![1, 2], 2));
        assert_eq!(bytes(&rebased).len(), 8, "a clone is not changed");
    }

    #[test]
    fn a_new_file_never_takes_the_name_of_the_one_the_state_names() {
        assert_eq!(file_name(4, None), "vectors-4.bin");
        assert_eq!(file_name(4, Some("vectors-3.bin")), "vectors-4.bin");
        assert_eq!(file_name(4, Some("vectors-4.bin")), "vectors-4-1.bin");
        assert_eq!(file_name(4, Some("vectors-4-1.bin")), "vectors-4.bin");
    }
}
