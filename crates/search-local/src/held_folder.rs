//! A BM25 index saved in a folder that another process holds for writing, read by this one:
//! its files are read (mapped) from the folder, and whatever this process writes or deletes
//! stays in its own memory. The folder is never written to, so the holder's index stays what
//! it made it.
//!
//! Tantivy's segment files are written once and never changed, and a mapped file stays
//! readable after its holder deletes it, so the files read when the index is opened stay
//! whole for as long as this process uses them.

use std::{
    collections::HashSet,
    io,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, PoisonError},
};

use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, RamDirectory, WatchCallback,
    WatchHandle, WritePtr,
    error::{DeleteError, LockError, OpenDirectoryError, OpenReadError, OpenWriteError},
};

/// The folder's files under this process's own changes.
#[derive(Clone, Debug)]
pub(crate) struct HeldFolder {
    folder: MmapDirectory,
    /// What this process wrote: read before the folder's file of the same name.
    written: RamDirectory,
    /// The folder's files this process deleted: gone for it, left on disk for the holder.
    deleted: Arc<Mutex<HashSet<PathBuf>>>,
}

impl HeldFolder {
    pub(crate) fn open(folder: &Path) -> Result<Self, OpenDirectoryError> {
        Ok(Self {
            folder: MmapDirectory::open(folder)?,
            written: RamDirectory::create(),
            deleted: Arc::default(),
        })
    }

    /// Makes `data` what this process reads at `path` from now on, whatever the folder holds.
    pub(crate) fn pin(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        self.written.atomic_write(path, data)
    }

    fn deleted(&self) -> std::sync::MutexGuard<'_, HashSet<PathBuf>> {
        self.deleted.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the folder's file is what this process reads for `path`.
    fn in_folder(&self, path: &Path) -> Result<bool, OpenReadError> {
        Ok(!self.written.exists(path)? && !self.deleted().contains(path))
    }
}

impl Directory for HeldFolder {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        if self.written.exists(path)? {
            return self.written.get_file_handle(path);
        }
        if self.deleted().contains(path) {
            return Err(OpenReadError::FileDoesNotExist(path.to_path_buf()));
        }
        self.folder.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        if self.written.exists(path).unwrap_or(false) {
            self.written.delete(path)?;
            // A file of the holder's that it hid stays hidden.
            if self.folder.exists(path).unwrap_or(false) {
                self.deleted().insert(path.to_path_buf());
            }
            return Ok(());
        }
        let in_folder = self.folder.exists(path).unwrap_or(false);
        if in_folder && self.deleted().insert(path.to_path_buf()) {
            return Ok(());
        }
        Err(DeleteError::FileDoesNotExist(path.to_path_buf()))
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        Ok(self.written.exists(path)? || (self.in_folder(path)? && self.folder.exists(path)?))
    }

    /// A file this process writes hides one of the same name in the folder: the holder may
    /// have written it since this process read its commit (a deletes file is named by the
    /// operation number of its commit, and both processes count on from the same commit), and
    /// this process reads only its own commit's files and its own.
    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        self.written.open_write(path)
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        if self.in_folder(path)? {
            self.folder.atomic_read(path)
        } else {
            self.written.atomic_read(path)
        }
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        self.written.atomic_write(path, data)
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    /// Locks are this process's own: the holder's writer lock is held by the holder, and this
    /// process's writer writes to memory only. (While the index is opened, the holder's
    /// deleting of files is held off by [`hold_files`].)
    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        self.written.acquire_lock(lock)
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.written.watch(watch_callback)
    }
}

/// Holds off the deleting of files no longer used by the process that holds the index in
/// `folder` (tantivy's meta lock, which its garbage collection takes), while this process
/// opens the files of the commit it read.
pub(crate) fn hold_files(folder: &Path) -> tantivy::Result<DirectoryLock> {
    let directory = MmapDirectory::open(folder).map_err(io::Error::other)?;
    Ok(directory.acquire_lock(&tantivy::directory::META_LOCK)?)
}

/// Whether no process holds the index in `folder` for writing (tantivy's writer lock is
/// free): taken and let go at once, so that the caller can open it as its own.
pub(crate) fn free(folder: &Path) -> bool {
    let Ok(directory) = MmapDirectory::open(folder) else { return !folder.exists() };
    directory.acquire_lock(&tantivy::directory::INDEX_WRITER_LOCK).is_ok()
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use tantivy::directory::TerminatingWrite;

    use super::*;

    fn write(directory: &dyn Directory, name: &str, data: &[u8]) {
        let mut file = directory.open_write(Path::new(name)).unwrap();
        file.write_all(data).unwrap();
        file.terminate().unwrap();
    }

    fn read(directory: &dyn Directory, name: &str) -> Option<Vec<u8>> {
        let slice = directory.open_read(Path::new(name)).ok()?;
        Some(slice.read_bytes().unwrap().as_slice().to_vec())
    }

    #[test]
    fn what_this_process_writes_or_deletes_stays_in_its_memory() {
        let dir = tempfile::tempdir().unwrap();
        let holder = MmapDirectory::open(dir.path()).unwrap();
        write(&holder, "kept", b"the holder's");
        write(&holder, "dropped", b"the holder's too");
        holder.atomic_write(Path::new("meta.json"), b"holder meta").unwrap();

        let held = HeldFolder::open(dir.path()).unwrap();
        assert_eq!(read(&held, "kept").as_deref(), Some(&b"the holder's"[..]));
        write(&held, "new", b"mine");
        assert!(held.open_write(Path::new("new")).is_err(), "files are written once");
        // A name the holder wrote after this process read its commit (both number their
        // commits on from the one read): what this process writes under it is its own.
        write(&holder, "later.5.del", b"the holder's deletes");
        write(&held, "later.5.del", b"my deletes");
        assert_eq!(read(&held, "later.5.del").as_deref(), Some(&b"my deletes"[..]));
        held.delete(Path::new("later.5.del")).unwrap();
        assert_eq!(read(&held, "later.5.del"), None, "nor is the holder's seen once mine goes");
        held.delete(Path::new("dropped")).unwrap();
        held.atomic_write(Path::new("meta.json"), b"my meta").unwrap();

        assert_eq!(read(&held, "new").as_deref(), Some(&b"mine"[..]));
        assert_eq!(read(&held, "dropped"), None);
        assert!(!held.exists(Path::new("dropped")).unwrap());
        assert!(matches!(held.delete(Path::new("dropped")), Err(DeleteError::FileDoesNotExist(_))));
        assert_eq!(held.atomic_read(Path::new("meta.json")).unwrap(), b"my meta");
        // The folder is as the holder left it.
        assert_eq!(read(&holder, "dropped").as_deref(), Some(&b"the holder's too"[..]));
        assert_eq!(holder.atomic_read(Path::new("meta.json")).unwrap(), b"holder meta");
        assert!(!dir.path().join("new").exists());
        assert_eq!(read(&holder, "later.5.del").as_deref(), Some(&b"the holder's deletes"[..]));
    }

    #[test]
    fn its_writer_lock_is_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let holder = MmapDirectory::open(dir.path()).unwrap();
        let _held_by_holder = holder.acquire_lock(&tantivy::directory::INDEX_WRITER_LOCK).unwrap();
        let held = HeldFolder::open(dir.path()).unwrap();
        let _mine = held.acquire_lock(&tantivy::directory::INDEX_WRITER_LOCK).unwrap();
        assert!(
            held.acquire_lock(&tantivy::directory::INDEX_WRITER_LOCK).is_err(),
            "one writer in this process"
        );
    }
}
