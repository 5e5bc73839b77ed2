//! The one writer of fixed files (`check --fix`, `explain --fix`): atomic, through
//! symbolic links, synced to disk, and refusing when the file changed since it was read.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a file could not be written back.
#[derive(Debug)]
pub enum WriteError {
    /// The file's bytes differ from those that were analysed.
    ChangedSinceRead(PathBuf),
    Io(PathBuf, std::io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::ChangedSinceRead(p) => {
                write!(f, "{} changed since it was read; not writing fixes", p.display())
            }
            WriteError::Io(p, e) => write!(f, "cannot write fixes to {}: {e}", p.display()),
        }
    }
}

/// Replaces `path`'s content with `text` through a temporary file in the same directory
/// (`.NAME.oomlint-fix.tmp`, which must not exist) and a rename, keeping the file's
/// permissions. Refuses when the file no longer holds `original`; on any error the file
/// is left as it was.
pub fn write_atomically(path: &Path, original: &[u8], text: &str) -> Result<(), WriteError> {
    let io = |e| WriteError::Io(path.to_path_buf(), e);
    let current = std::fs::read(path).map_err(io)?;
    if current != original {
        return Err(WriteError::ChangedSinceRead(path.to_path_buf()));
    }
    // A symlinked config is written through the link, not replaced by a file.
    let path = &std::fs::canonicalize(path).map_err(io)?;
    let permissions = std::fs::metadata(path).map_err(io)?.permissions();
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    // One fixed name: a second `--fix` on the same file at once fails instead of racing.
    let temp = dir.join(format!(".{name}.oomlint-fix.tmp"));
    // A temporary file that exists already belongs to another run: fail, and leave it be.
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&temp).map_err(io)?;
    let result = (|| {
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::set_permissions(&temp, permissions)?;
        std::fs::rename(&temp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temp);
        return Err(io(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_to_overwrite_a_changed_file() {
        let dir = std::env::temp_dir().join(format!("oomlint-fix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.yaml");
        std::fs::write(&path, "a: 2\n").unwrap();
        assert!(matches!(write_atomically(&path, b"a: 1\n", "b: 1\n"), Err(WriteError::ChangedSinceRead(_))));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a: 2\n");
        write_atomically(&path, b"a: 2\n", "b: 1\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "b: 1\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn another_runs_temporary_file_is_left_alone() {
        let dir = std::env::temp_dir().join(format!("oomlint-fix-busy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.yaml");
        std::fs::write(&path, "a: 1\n").unwrap();
        let temp = dir.join(".a.yaml.oomlint-fix.tmp");
        std::fs::write(&temp, "another run's fixes\n").unwrap();
        assert!(matches!(write_atomically(&path, b"a: 1\n", "b: 1\n"), Err(WriteError::Io(..))));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a: 1\n");
        assert_eq!(std::fs::read_to_string(&temp).unwrap(), "another run's fixes\n", "not deleted");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
