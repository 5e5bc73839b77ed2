//! Paths as the searches upward from a config see them (settings, version pins), and the
//! directories they look into, each listed once: one `getdents` per directory instead of
//! a `stat` per file name asked about.

use crate::settings::lexically_normal;
use std::path::{Path, PathBuf};

/// `path` from the root, with `.` and `..` taken away lexically: the directories above a
/// config are those its path names, found without a system call per component (symbolic
/// links are not resolved).
pub fn absolute(path: &Path) -> PathBuf {
    lexically_normal(&std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()))
}

/// The entries of one directory (none when it cannot be read).
#[derive(Debug, Default)]
pub struct Listing {
    /// Names (valid UTF-8 only) with the entry's own type, symbolic links not followed.
    entries: Vec<(String, Kind)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Link,
    Other,
}

impl Listing {
    pub fn read(dir: &Path) -> Listing {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Listing::default();
        };
        let entries = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let kind = match entry.file_type() {
                    Ok(t) if t.is_file() => Kind::File,
                    Ok(t) if t.is_dir() => Kind::Dir,
                    Ok(t) if t.is_symlink() => Kind::Link,
                    _ => Kind::Other,
                };
                Some((entry.file_name().into_string().ok()?, kind))
            })
            .collect();
        Listing { entries }
    }

    /// Whether `dir/name` exists (of any type; a link counts as its target).
    pub fn exists(&self, dir: &Path, name: &str) -> bool {
        self.entries.iter().any(|(n, kind)| n == name && (*kind != Kind::Link || dir.join(name).exists()))
    }

    /// Whether `dir/name` is a regular file (a link counts as its target, as `Path::is_file`).
    pub fn is_file(&self, dir: &Path, name: &str) -> bool {
        self.entries
            .iter()
            .any(|(n, kind)| n == name && (*kind == Kind::File || *kind == Kind::Link && dir.join(name).is_file()))
    }

    /// The names of the regular files themselves (links not followed).
    pub fn regular_files(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().filter(|(_, kind)| *kind == Kind::File).map(|(name, _)| name.as_str())
    }

    /// The names of the subdirectories themselves (links not followed).
    pub fn directories(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().filter(|(_, kind)| *kind == Kind::Dir).map(|(name, _)| name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_answers_as_the_file_system_did_when_read() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        std::fs::write(dir.join("oomlint.toml"), "").unwrap();
        std::fs::create_dir(dir.join(".git")).unwrap();
        std::fs::create_dir(dir.join("pyproject.toml")).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.join("oomlint.toml"), dir.join("linked.toml")).unwrap();
            std::os::unix::fs::symlink(dir.join("missing"), dir.join("dangling")).unwrap();
        }
        let listed = Listing::read(dir);
        for name in ["oomlint.toml", ".git", "pyproject.toml", "linked.toml", "dangling", "absent"] {
            assert_eq!(listed.is_file(dir, name), dir.join(name).is_file(), "is_file {name}");
            assert_eq!(listed.exists(dir, name), dir.join(name).exists(), "exists {name}");
        }
        assert_eq!(listed.regular_files().collect::<Vec<_>>(), ["oomlint.toml"]);
    }

    #[test]
    fn parent_components_are_taken_away() {
        assert_eq!(absolute(Path::new("/a/b/../c/./d.yaml")), Path::new("/a/c/d.yaml"));
        assert_eq!(absolute(Path::new("/../a")), Path::new("/a"));
        let cwd = std::env::current_dir().unwrap_or_default();
        assert_eq!(absolute(Path::new("x/../y")), cwd.join("y"));
        assert_eq!(absolute(Path::new(".")), cwd);
    }
}
