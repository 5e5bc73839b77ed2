//! Paths as the searches upward from a config see them (settings, version pins).

use std::path::{Component, Path, PathBuf};

/// `path` from the root, with `.` and `..` taken away lexically: the directories above a
/// config are those its path names, found without a system call per component (symbolic
/// links are not resolved).
pub fn absolute(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_components_are_taken_away() {
        assert_eq!(absolute(Path::new("/a/b/../c/./d.yaml")), Path::new("/a/c/d.yaml"));
        assert_eq!(absolute(Path::new("/../a")), Path::new("/a"));
        let cwd = std::env::current_dir().unwrap_or_default();
        assert_eq!(absolute(Path::new("x/../y")), cwd.join("y"));
        assert_eq!(absolute(Path::new(".")), cwd);
    }
}
