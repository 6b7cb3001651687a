//! `check -o FILE`: write the output for node_exporter's textfile collector (or any reader that
//! polls the file) so a reader never sees half of it: a temporary file in the same directory,
//! then a rename over the target (the shared writer). node_exporter reads only `*.prom`, so the
//! temporary file is never scraped.

use std::path::Path;

/// Seconds since the Unix epoch (0 when the clock is before 1970).
pub(crate) fn now_unix_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Write `bytes` to `path` atomically through the project's one file writer ([`crate::write`]):
/// without `force` an existing `path` is an error and nothing is written. The error names the file.
pub(crate) fn write_replace(path: &Path, bytes: &[u8], force: bool) -> Result<(), String> {
    crate::write::write(path, bytes, crate::write::Kind::Data, force)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_new_refuses_existing_and_replaces_with_force() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("sm120.prom");
        write_replace(&p, b"a 1\n", false).expect("new file");
        assert_eq!(std::fs::read(&p).expect("read"), b"a 1\n");
        let e = write_replace(&p, b"a 2\n", false).expect_err("exists");
        assert!(e.contains("sm120.prom") && e.contains("--force"), "{e}");
        assert_eq!(std::fs::read(&p).expect("read"), b"a 1\n");
        write_replace(&p, b"a 3\n", true).expect("forced");
        assert_eq!(std::fs::read(&p).expect("read"), b"a 3\n");
        assert_eq!(names(dir.path()), vec!["sm120.prom".to_string()]);
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_world_readable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("m.prom");
        write_replace(&p, b"x 1\n", false).expect("write");
        let mode = std::fs::metadata(&p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = write_replace(&dir.path().join("no/such/m.prom"), b"x", true).expect_err("fails");
        assert!(e.contains("m.prom"), "{e}");
        let e = write_replace(dir.path(), b"x", true).expect_err("dir");
        assert!(e.contains("is a directory"), "{e}");
    }

    #[test]
    fn clock_is_after_2020() {
        assert!(now_unix_seconds() > 1_577_836_800.0);
    }
}
