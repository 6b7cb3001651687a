//! The one way this program writes a user's file (`report -o`, `fix -o`, `patch-script -o`,
//! `snapshot -o`, and the TUI's export and `w`).
//!
//! The bytes go to a temporary file in the target's directory (`tempfile::Builder`, created
//! exclusively), are synced, and the temporary file is then renamed over the target: a reader
//! never sees half a file and a failure leaves an existing file byte for byte as it was.
//!
//! The rules, in order:
//! - **No clobbering without `force`.** Without it the rename is `persist_noclobber` (Linux:
//!   `renameat2(RENAME_NOREPLACE)`, else a hard link), so a file that appears between the check
//!   and the rename is still never replaced: [`WriteError::Exists`].
//! - **Only regular files are replaced.** A directory, FIFO, socket or device node at the path is
//!   refused, with or without `force`, naming the path: [`WriteError::NotRegular`].
//! - **A symbolic link** counts as an existing file: without `force` it is [`WriteError::Exists`]
//!   (one that leads nowhere, round in a loop or to a non-file is [`WriteError::NotRegular`]
//!   either way).
//!   With `force` the link is followed to the end and the file it names is replaced (the link
//!   stays a link, pointing at the new contents); that file must exist and be a regular file, or
//!   nothing is written.
//! - **Modes.** A replaced file keeps its permission bits (`lstat` of the file replaced), except
//!   setuid, setgid and sticky, which are never carried over. A new file gets the usual
//!   `0666 & !umask`; a new script `0777 & !umask`. Owner and group are the writer's (a rename
//!   makes a new inode).
//! - **Scripts** ([`Kind::Script`]) start with a shebang (`#!/usr/bin/env bash` is added when the
//!   text has none) and end with a newline.

use std::fs::{File, Permissions};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The shebang added to a script that has none.
pub const SHEBANG: &str = "#!/usr/bin/env bash";

/// What is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bytes as given (a report, a snapshot, a compose file, a rewritten launch file).
    Data,
    /// A shell script: shebang, final newline, executable when new.
    Script,
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The file written: the path given, or the file a symbolic link led to (with `force`).
    pub path: PathBuf,
    pub bytes: usize,
    /// Its permission bits.
    pub mode: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The target exists and `force` was not given.
    #[error("{}: already exists; pass --force to overwrite it", .0.display())]
    Exists(PathBuf),
    /// Something other than a regular file is in the way (or a link leads to one, or nowhere).
    #[error("{}: {what}; only a regular file is replaced, so nothing was written", .path.display())]
    NotRegular { path: PathBuf, what: String },
    #[error("{}: cannot write: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What kind of file system object a file type is, for an error message (a copy of
/// `read::describe`: the writer is a leaf and imports nothing, tests/layering.rs).
fn describe(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Where the bytes go and the mode of the file they replace (`None`: a new file).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    path: PathBuf,
    replaces: Option<u32>,
}

/// Decide where a write to `path` goes, or why it must not happen (`lstat` only: nothing is
/// created, opened or followed unless `force` and a symbolic link).
fn target(path: &Path, force: bool) -> Result<Target, WriteError> {
    let io = |source| WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    // `-o out/`: a directory's name, never a file's (the kernel would say only "Not a
    // directory" or "Is a directory").
    if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(WriteError::NotRegular {
            path: path.to_path_buf(),
            what: "ends in / (a directory's name); give the name of the file to write".into(),
        });
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Target {
                path: path.to_path_buf(),
                replaces: None,
            });
        }
        Err(e) => return Err(io(e)),
    };
    let t = meta.file_type();
    if t.is_file() {
        if !force {
            return Err(WriteError::Exists(path.to_path_buf()));
        }
        return Ok(Target {
            path: path.to_path_buf(),
            replaces: Some(meta.permissions().mode()),
        });
    }
    if !t.is_symlink() {
        return Err(WriteError::NotRegular {
            path: path.to_path_buf(),
            what: format!("is {}", describe(t)),
        });
    }
    // A link that leads nowhere, round in a loop or to something not a regular file is refused
    // with or without `force`, so say so now rather than "pass --force", refused next.
    let link = std::fs::read_link(path).map_err(io)?;
    let resolved = std::fs::canonicalize(path).map_err(|e| WriteError::NotRegular {
        path: path.to_path_buf(),
        what: if e.raw_os_error() == Some(libc::ELOOP) {
            format!(
                "is a symbolic link to {} that leads back to itself (a loop)",
                link.display()
            )
        } else {
            format!(
                "is a symbolic link to {}, which does not exist",
                link.display()
            )
        },
    })?;
    let meta = std::fs::symlink_metadata(&resolved).map_err(io)?;
    if !meta.file_type().is_file() {
        return Err(WriteError::NotRegular {
            path: path.to_path_buf(),
            what: format!(
                "is a symbolic link to {}, which is {}",
                resolved.display(),
                describe(meta.file_type())
            ),
        });
    }
    if !force {
        return Err(WriteError::Exists(path.to_path_buf()));
    }
    Ok(Target {
        path: resolved,
        replaces: Some(meta.permissions().mode()),
    })
}

/// Check, before doing slow work, that [`write`] to `path` would not be refused (the write
/// itself checks again: this is for an early, clear error).
pub fn check(path: &Path, force: bool) -> Result<(), WriteError> {
    target(path, force).map(|_| ())
}

/// `content` as a script: a shebang first (unless it has one) and a final newline.
pub(crate) fn script_bytes(content: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + SHEBANG.len() + 2);
    if !content.starts_with(b"#!") {
        out.extend_from_slice(SHEBANG.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(content);
    if !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out
}

/// Most bytes of the target's name kept in the temporary file's name.
const MAX_TMP_STEM: usize = 64;

/// Write `content` to `path` by the rules in the module comment.
pub fn write(path: &Path, content: &[u8], kind: Kind, force: bool) -> Result<Written, WriteError> {
    write_with(path, content, kind, force, |f, bytes| f.write_all(bytes))
}

/// [`write`] with the step that puts the bytes into the temporary file given (tests make it fail).
fn write_with(
    path: &Path,
    content: &[u8],
    kind: Kind,
    force: bool,
    fill: impl FnOnce(&mut File, &[u8]) -> std::io::Result<()>,
) -> Result<Written, WriteError> {
    let target = target(path, force)?;
    let dest = target.path.as_path();
    let io = |source| WriteError::Io {
        path: dest.to_path_buf(),
        source,
    };
    let bytes = match kind {
        Kind::Data => content.to_vec(),
        Kind::Script => script_bytes(content),
    };
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    // A replaced file's bits are set exactly after writing; until then only the owner can read.
    // A new file is created as any new file is (the kernel applies the umask).
    let create_mode = match (target.replaces, kind) {
        (Some(_), _) => 0o600,
        (None, Kind::Data) => 0o666,
        (None, Kind::Script) => 0o777,
    };
    // The temporary name is `.NAME.XXXXXX.tmp`: NAME cut so that a file name near the 255-byte
    // limit still leaves room (a 250-byte name failed with ENAMETOOLONG).
    let mut cut = name.len().min(MAX_TMP_STEM);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", &name[..cut]))
        .suffix(".tmp")
        .permissions(Permissions::from_mode(create_mode))
        .tempfile_in(&dir)
        .map_err(io)?;
    fill(tmp.as_file_mut(), &bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    if let Some(old) = target.replaces {
        // Never carry setuid, setgid or sticky over to new contents.
        tmp.as_file()
            .set_permissions(Permissions::from_mode(old & 0o777))
            .map_err(io)?;
    }
    let mode = tmp.as_file().metadata().map_err(io)?.permissions().mode() & 0o7777;
    // Look again just before the rename: a device node, FIFO or directory put at the path since
    // `target` looked is still never replaced (the temporary file is dropped, nothing written).
    if let Ok(now) = std::fs::symlink_metadata(dest)
        && !now.file_type().is_file()
        && !now.file_type().is_symlink()
    {
        return Err(WriteError::NotRegular {
            path: dest.to_path_buf(),
            what: format!("is {}", describe(now.file_type())),
        });
    }
    let persisted = if force {
        tmp.persist(dest)
    } else {
        tmp.persist_noclobber(dest)
    };
    // On error the temporary file comes back inside the error and is removed when dropped.
    persisted.map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            WriteError::Exists(path.to_path_buf())
        } else {
            io(e.error)
        }
    })?;
    Ok(Written {
        path: dest.to_path_buf(),
        bytes: bytes.len(),
        mode,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p)
            .expect("lstat")
            .permissions()
            .mode()
            & 0o7777
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn new_file_then_no_clobber_then_force() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("r.md");
        let w = write(&p, b"one", Kind::Data, false).expect("first write");
        assert_eq!(w.path, p);
        assert_eq!(std::fs::read(&p).expect("read"), b"one");
        let e = write(&p, b"two", Kind::Data, false).expect_err("refuses");
        assert!(matches!(e, WriteError::Exists(_)), "{e}");
        assert!(e.to_string().contains("r.md") && e.to_string().contains("--force"));
        assert_eq!(std::fs::read(&p).expect("read"), b"one");
        write(&p, b"three", Kind::Data, true).expect("forced");
        assert_eq!(std::fs::read(&p).expect("read"), b"three");
        assert_eq!(names(dir.path()), vec!["r.md"], "no temporary file left");
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_but_never_setuid_or_setgid() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("serve.sh");
        std::fs::write(&p, "old\n").expect("seed");
        std::fs::set_permissions(&p, Permissions::from_mode(0o640)).expect("chmod");
        let w = write(&p, b"new\n", Kind::Data, true).expect("forced");
        assert_eq!(mode(&p), 0o640);
        assert_eq!(w.mode, 0o640);
        // A script replacing it keeps the same bits: the user chose them.
        write(&p, b"vllm serve m\n", Kind::Script, true).expect("forced");
        assert_eq!(mode(&p), 0o640);

        std::fs::set_permissions(&p, Permissions::from_mode(0o4755)).expect("chmod setuid");
        assert_eq!(mode(&p), 0o4755, "the test file really is setuid");
        write(&p, b"x\n", Kind::Data, true).expect("forced");
        assert_eq!(mode(&p), 0o755, "setuid dropped, the rest kept");
        std::fs::set_permissions(&p, Permissions::from_mode(0o2750)).expect("chmod setgid");
        write(&p, b"x\n", Kind::Data, true).expect("forced");
        assert_eq!(mode(&p), 0o750, "setgid dropped, the rest kept");
    }

    #[test]
    fn new_files_follow_the_umask_and_new_scripts_are_executable() {
        let umask = {
            // Read the process umask without changing it (Linux ≥ 4.7).
            let status = std::fs::read_to_string("/proc/self/status").expect("status");
            let line = status
                .lines()
                .find(|l| l.starts_with("Umask:"))
                .expect("Umask line");
            u32::from_str_radix(line.trim_start_matches("Umask:").trim(), 8).expect("octal")
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("r.json");
        write(&data, b"{}\n", Kind::Data, false).expect("write");
        assert_eq!(mode(&data), 0o666 & !umask);
        let script = dir.path().join("launch.sh");
        let w = write(&script, b"vllm serve m", Kind::Script, false).expect("write");
        assert_eq!(mode(&script), 0o777 & !umask);
        assert_eq!(
            std::fs::read_to_string(&script).expect("read"),
            "#!/usr/bin/env bash\nvllm serve m\n"
        );
        assert_eq!(w.bytes, "#!/usr/bin/env bash\nvllm serve m\n".len());
    }

    #[test]
    fn script_bytes_adds_a_shebang_and_a_final_newline_only_when_missing() {
        assert_eq!(script_bytes(b"a"), b"#!/usr/bin/env bash\na\n");
        assert_eq!(script_bytes(b"#!/bin/sh\na\n"), b"#!/bin/sh\na\n");
        assert_eq!(script_bytes(b"#!/bin/sh\na"), b"#!/bin/sh\na\n");
        assert_eq!(script_bytes(b""), b"#!/usr/bin/env bash\n");
    }

    #[test]
    fn a_symlink_is_an_existing_file_and_force_replaces_what_it_points_at() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real.sh");
        std::fs::write(&real, "old\n").expect("seed");
        std::fs::set_permissions(&real, Permissions::from_mode(0o750)).expect("chmod");
        let link = dir.path().join("link.sh");
        std::os::unix::fs::symlink("real.sh", &link).expect("symlink");

        let e = write(&link, b"new\n", Kind::Data, false).expect_err("no force");
        assert!(matches!(e, WriteError::Exists(_)), "{e}");
        assert_eq!(std::fs::read(&real).expect("read"), b"old\n");

        let w = write(&link, b"new\n", Kind::Data, true).expect("forced");
        let real_canon = std::fs::canonicalize(&real).expect("canon");
        assert_eq!(w.path, real_canon, "the link's target was written");
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("lstat")
                .file_type()
                .is_symlink(),
            "the link stays a link"
        );
        assert_eq!(std::fs::read(&link).expect("read via link"), b"new\n");
        assert_eq!(mode(&real), 0o750, "the target's mode kept");
        assert_eq!(names(dir.path()), vec!["link.sh", "real.sh"]);

        // A dangling link: refused with force, naming the link and where it points.
        let dangling = dir.path().join("dangling.sh");
        std::os::unix::fs::symlink("nowhere.sh", &dangling).expect("symlink");
        let e = write(&dangling, b"x", Kind::Data, true).expect_err("dangling");
        let msg = e.to_string();
        assert!(
            matches!(e, WriteError::NotRegular { .. })
                && msg.contains("dangling.sh")
                && msg.contains("nowhere.sh"),
            "{msg}"
        );
        assert!(!dir.path().join("nowhere.sh").exists(), "nothing created");

        // A link to a directory: refused.
        let to_dir = dir.path().join("to_dir");
        std::os::unix::fs::symlink(dir.path(), &to_dir).expect("symlink");
        let e = write(&to_dir, b"x", Kind::Data, true).expect_err("dir");
        assert!(e.to_string().contains("a directory"), "{e}");
    }

    #[test]
    fn fifos_directories_and_device_nodes_are_refused_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("cstring");
        // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
        let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
        assert_eq!(rc, 0, "mkfifo: {}", std::io::Error::last_os_error());
        for force in [false, true] {
            let e = write(&fifo, b"x", Kind::Data, force).expect_err("fifo");
            let msg = e.to_string();
            assert!(msg.contains("pipe") && msg.contains("FIFO"), "{msg}");
        }
        assert!(
            std::fs::symlink_metadata(&fifo)
                .expect("lstat")
                .file_type()
                .is_fifo(),
            "the FIFO is still there"
        );
        let e = write(dir.path(), b"x", Kind::Data, true).expect_err("dir");
        assert!(e.to_string().contains("a directory"), "{e}");
        // A device node, checked without writing anything (`target` only reads with lstat).
        let e = target(Path::new("/dev/null"), true).expect_err("char device");
        let msg = e.to_string();
        assert!(msg.starts_with("/dev/null: is a character device"), "{msg}");
        assert_eq!(names(dir.path()), vec!["pipe"], "no temporary file left");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_byte_identical() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("r.md");
        let old: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        std::fs::write(&p, &old).expect("seed");
        std::fs::set_permissions(&p, Permissions::from_mode(0o640)).expect("chmod");
        let e = write_with(&p, b"new contents", Kind::Data, true, |f, bytes| {
            f.write_all(&bytes[..4])?;
            Err(std::io::Error::other("disk full (simulated)"))
        })
        .expect_err("fails");
        assert!(e.to_string().contains("r.md") && e.to_string().contains("disk full"));
        assert_eq!(std::fs::read(&p).expect("read"), old);
        assert_eq!(mode(&p), 0o640);
        assert_eq!(names(dir.path()), vec!["r.md"], "no temporary file left");
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("no/such/dir/r.json");
        let e = write(&p, b"x", Kind::Data, false).expect_err("fails");
        assert!(e.to_string().contains("r.json"), "{e}");
    }

    #[test]
    fn a_file_that_appears_before_the_rename_is_never_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("r.md");
        // The check saw no file; another process creates one while the bytes are written.
        let e = write_with(&p, b"ours", Kind::Data, false, |f, bytes| {
            std::fs::write(dir.path().join("r.md"), "theirs")?;
            f.write_all(bytes)
        })
        .expect_err("no clobber");
        assert!(matches!(e, WriteError::Exists(_)), "{e}");
        assert_eq!(std::fs::read(&p).expect("read"), b"theirs");
        assert_eq!(names(dir.path()), vec!["r.md"], "no temporary file left");
    }

    #[test]
    fn a_name_near_the_limit_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let name = format!("{}.md", "é".repeat(60) + &"a".repeat(126));
        assert_eq!(name.len(), 249);
        let p = dir.path().join(&name);
        write(&p, b"x", Kind::Data, false).expect("a 249-byte name");
        assert_eq!(names(dir.path()), vec![name]);
    }

    #[test]
    fn a_link_loop_a_dangling_link_and_a_trailing_slash_say_what_they_are() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).expect("symlink");
        std::os::unix::fs::symlink("a", dir.path().join("b")).expect("symlink");
        for force in [false, true] {
            let e = write(&a, b"x", Kind::Data, force).expect_err("loop");
            assert!(e.to_string().contains("loop"), "{e}");
        }
        let d = dir.path().join("d");
        std::os::unix::fs::symlink("nowhere", &d).expect("symlink");
        let e = write(&d, b"x", Kind::Data, false).expect_err("dangling");
        assert!(
            e.to_string().contains("which does not exist") && !e.to_string().contains("--force"),
            "{e}"
        );
        let slash = PathBuf::from(format!("{}/new/", dir.path().display()));
        let e = write(&slash, b"x", Kind::Data, false).expect_err("slash");
        assert!(e.to_string().contains("ends in /"), "{e}");
        assert!(!dir.path().join("new").exists(), "nothing created");
    }
}
