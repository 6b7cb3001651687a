//! File access for the collectors that read /proc, /etc and /sys, behind a trait so tests can
//! make any path unreadable or give it any content.

use std::collections::BTreeMap;
use std::io;

/// Read-only view of the host's files.
pub trait HostFs: Send + Sync {
    /// The whole file, bytes that are not UTF-8 replaced. NUL bytes are kept.
    fn read(&self, path: &str) -> io::Result<String>;
    /// Entry names of a directory.
    fn list(&self, dir: &str) -> io::Result<Vec<String>>;
}

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl HostFs for RealFs {
    fn read(&self, path: &str) -> io::Result<String> {
        std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned())
    }
    fn list(&self, dir: &str) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir)? {
            out.push(e?.file_name().to_string_lossy().into_owned());
        }
        Ok(out)
    }
}

/// An in-memory file system for tests and benchmarks: files by path, and path prefixes that
/// answer "permission denied".
#[derive(Debug, Clone, Default)]
pub struct MapFs {
    files: BTreeMap<String, String>,
    denied: Vec<String>,
}

impl MapFs {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn file(mut self, path: &str, content: &str) -> Self {
        self.files.insert(path.to_string(), content.to_string());
        self
    }
    /// Every path starting with `prefix` is unreadable (and so is listing it).
    pub fn deny(mut self, prefix: &str) -> Self {
        self.denied.push(prefix.to_string());
        self
    }
    fn check(&self, path: &str) -> io::Result<()> {
        if self.denied.iter().any(|p| path.starts_with(p.as_str())) {
            Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "Permission denied (os error 13)",
            ))
        } else {
            Ok(())
        }
    }
}

impl HostFs for MapFs {
    fn read(&self, path: &str) -> io::Result<String> {
        self.check(path)?;
        self.files.get(path).cloned().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "No such file or directory (os error 2)",
            )
        })
    }
    fn list(&self, dir: &str) -> io::Result<Vec<String>> {
        self.check(dir)?;
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        let mut names: Vec<String> = self
            .files
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix))
            .filter_map(|rest| rest.split('/').next())
            .map(str::to_string)
            .collect();
        names.dedup();
        if names.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "No such file or directory (os error 2)",
            ));
        }
        Ok(names)
    }
}

/// A short reason for an I/O error on `path`.
/// [`io_reason`] with its code (no permission, not found, else other).
pub(crate) fn io_failure(path: &str, e: &io::Error) -> crate::snapshot::Reason {
    use crate::snapshot::{Reason, ReasonCode};
    let code = match e.kind() {
        io::ErrorKind::PermissionDenied => ReasonCode::NoPermission,
        io::ErrorKind::NotFound => ReasonCode::NotFound,
        _ => ReasonCode::Other,
    };
    Reason::new(code, io_reason(path, e))
}

pub(crate) fn io_reason(path: &str, e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::PermissionDenied => format!("{path}: permission denied"),
        io::ErrorKind::NotFound => format!("{path}: not found"),
        _ => format!("{path}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_fs_lists_reads_and_denies() {
        let fs = MapFs::new()
            .file("/proc/1/cmdline", "init")
            .file("/proc/22/cmdline", "x")
            .file("/proc/22/environ", "A=1")
            .deny("/proc/22/environ");
        let mut l = fs.list("/proc").expect("list");
        l.sort();
        assert_eq!(l, vec!["1", "22"]);
        assert_eq!(fs.read("/proc/1/cmdline").expect("read"), "init");
        let e = fs.read("/proc/22/environ").expect_err("denied");
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(
            io_reason("/proc/22/environ", &e),
            "/proc/22/environ: permission denied"
        );
        assert!(fs.read("/nope").is_err());
    }
}
