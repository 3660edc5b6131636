//! Which project a session works on: the git repository its working directory is in.

use std::path::{Path, PathBuf};

/// The root of the git repository holding `cwd` (the nearest folder with a `.git`), or `cwd`
/// itself outside any repository.
pub fn project_of(cwd: &Path) -> PathBuf {
    cwd.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(cwd).to_path_buf()
}

/// `path` relative to `root` when it lies inside it, as written otherwise.
pub(crate) fn relative_to(path: &str, root: &Path) -> String {
    Path::new(path)
        .strip_prefix(root)
        .ok()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| path.to_owned(), |p| p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_is_the_repository_above_the_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        assert_eq!(project_of(&repo.join("src/deep")), repo);
        let plain = dir.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        assert_eq!(project_of(&plain), plain);
        assert_eq!(relative_to(&repo.join("src/a.rs").display().to_string(), &repo), "src/a.rs");
        assert_eq!(relative_to("/etc/hosts", &repo), "/etc/hosts");
    }
}
