//! Writing a report file: atomically (a temporary file in the target directory, then a rename),
//! and never over an existing file without `force`.

use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub enum WriteError {
    /// The target exists and `force` was not given.
    Exists(PathBuf),
    Io(PathBuf, std::io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Exists(p) => write!(
                f,
                "{}: already exists; pass --force to overwrite it",
                p.display()
            ),
            WriteError::Io(p, e) => write!(f, "{}: cannot write: {e}", p.display()),
        }
    }
}

impl std::error::Error for WriteError {}

/// Write `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// reader never sees half a report and a failure leaves any existing file as it was.
/// Without `force`, an existing `path` is an error and nothing is written.
pub fn write_atomically(path: &Path, bytes: &[u8], force: bool) -> Result<(), WriteError> {
    let io = |e| WriteError::Io(path.to_path_buf(), e);
    if !force && path.symlink_metadata().is_ok() {
        return Err(WriteError::Exists(path.to_path_buf()));
    }
    if path.is_dir() {
        return Err(WriteError::Io(
            path.to_path_buf(),
            std::io::Error::other("is a directory"),
        ));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    // A name no other writer uses: the process id plus a counter, created exclusively.
    let mut attempt = 0u32;
    let (tmp, mut file) = loop {
        let tmp = dir.join(format!(".{name}.{}.{attempt}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(e) => return Err(io(e)),
        }
    };
    let result = file
        .write_all(bytes)
        .and_then(|_| file.sync_all())
        .and_then(|_| {
            drop(file);
            if force {
                std::fs::rename(&tmp, path)
            } else {
                // No overwrite even if the file appeared meanwhile: hard-link, then drop the temp.
                std::fs::hard_link(&tmp, path).or_else(|e| {
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        Err(e)
                    } else {
                        // Filesystems without hard links: check and rename.
                        if path.symlink_metadata().is_ok() {
                            Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists))
                        } else {
                            std::fs::rename(&tmp, path)
                        }
                    }
                })
            }
        });
    let _ = std::fs::remove_file(&tmp);
    match result {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(WriteError::Exists(path.to_path_buf()))
        }
        Err(e) => Err(io(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_refuses_to_overwrite_and_overwrites_with_force() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("r.md");
        write_atomically(&p, b"one", false).expect("first write");
        assert_eq!(std::fs::read(&p).expect("read"), b"one");
        let e = write_atomically(&p, b"two", false).expect_err("refuses");
        assert!(matches!(e, WriteError::Exists(_)), "{e}");
        assert!(e.to_string().contains("--force"), "{e}");
        assert_eq!(std::fs::read(&p).expect("read"), b"one");
        write_atomically(&p, b"three", true).expect("forced");
        assert_eq!(std::fs::read(&p).expect("read"), b"three");
        // No temporary files left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("r.md")]);
    }

    #[test]
    fn missing_directory_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("no/such/dir/r.json");
        let e = write_atomically(&p, b"x", false).expect_err("fails");
        assert!(e.to_string().contains("r.json"), "{e}");
    }
}
