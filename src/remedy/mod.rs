//! Remedies a user can run: a rewritten launch (`fix`) and the PR apply script (`patch-script`).
//!
//! The edits come from the knowledge base (`edits:` of each remedy in `knowledge/remedies.yaml`);
//! this module applies them generically through [`rewrite::apply_edit`].

pub mod patch_script;
pub mod rewrite;

use crate::kb::KnowledgeBase;
use std::io::Write;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RemedyError {
    #[error("unknown remedy {id:?}; valid remedy ids: {}", valid.join(", "))]
    Unknown { id: String, valid: Vec<String> },
    #[error("remedy {remedy}: {error}")]
    Fix {
        remedy: String,
        error: rewrite::FixError,
    },
    #[error("{0}")]
    Launch(#[from] crate::launch::LaunchError),
}

/// The launch before and after the remedies, with what the user should know.
#[derive(Debug, Clone, PartialEq)]
pub struct FixOutcome {
    pub original: String,
    pub text: String,
    pub notes: Vec<String>,
}

impl FixOutcome {
    pub fn changed(&self) -> bool {
        self.original != self.text
    }
}

/// Apply the remedies `ids`, in order, to a launch text.
pub fn fix(text: &str, kb: &KnowledgeBase, ids: &[String]) -> Result<FixOutcome, RemedyError> {
    let mut remedies = Vec::new();
    for id in ids {
        let r = kb.remedy(id).ok_or_else(|| RemedyError::Unknown {
            id: id.clone(),
            valid: kb.remedies.keys().cloned().collect(),
        })?;
        remedies.push(r);
    }
    // Parse first so a bad launch is reported as such, with its line.
    let located = crate::launch::locate(text)?;
    let mut notes: Vec<String> = located.notes.clone();
    let mut current = text.to_string();
    for r in remedies {
        let id = r.id.value.as_str();
        for edit in &r.edits {
            let step =
                rewrite::apply_edit(&current, id, edit, kb).map_err(|error| RemedyError::Fix {
                    remedy: id.to_string(),
                    error,
                })?;
            notes.extend(step.notes);
            current = step.text;
        }
        if r.edits.is_empty() {
            notes.push(format!("{id}: this remedy has no edits"));
        }
        for l in &r.limits {
            notes.push(format!("{id} (limit): {l}"));
        }
    }
    Ok(FixOutcome {
        original: text.to_string(),
        text: current,
        notes,
    })
}

/// A unified diff of the launch (`a/NAME` → `b/NAME`).
pub fn unified_diff(old: &str, new: &str, name: &str) -> String {
    let mut opts = diffy::DiffOptions::new();
    opts.set_original_filename(format!("a/{name}"));
    opts.set_modified_filename(format!("b/{name}"));
    let patch = opts.create_patch(old, new);
    diffy::PatchFormatter::new().fmt_patch(&patch).to_string()
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{0}: already exists; pass --force to overwrite it")]
    Exists(String),
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
}

/// Write `content` to `path` atomically: a temporary file in the same directory, then a rename.
/// An existing file is kept unless `force`. `mode` sets Unix permissions on the new file.
pub fn write_atomic(
    path: &Path,
    content: &[u8],
    force: bool,
    mode: Option<u32>,
) -> Result<(), WriteError> {
    let shown = path.display().to_string();
    let io = |error: std::io::Error| WriteError::Io {
        path: shown.clone(),
        error,
    };
    if !force && path.symlink_metadata().is_ok() {
        return Err(WriteError::Exists(shown.clone()));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let mut tmp = None;
    for attempt in 0..100u32 {
        let candidate = dir.join(format!(
            ".{name}.sm120-doctor.{}.{attempt}.tmp",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => {
                tmp = Some((candidate, f));
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(e)),
        }
    }
    let Some((tmp_path, mut file)) = tmp else {
        return Err(io(std::io::Error::other("no free temporary file name")));
    };
    let result = (|| -> std::io::Result<()> {
        file.write_all(content)?;
        file.sync_all()?;
        #[cfg(unix)]
        if let Some(m) = mode {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp_path, std::fs::Permissions::from_mode(m))?;
        }
        #[cfg(not(unix))]
        let _ = mode;
        if !force && path.symlink_metadata().is_ok() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "appeared while writing",
            ));
        }
        std::fs::rename(&tmp_path, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp_path);
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            return Err(WriteError::Exists(shown));
        }
        return Err(io(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_refuses_to_overwrite_without_force() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("out.sh");
        write_atomic(&p, b"one\n", false, Some(0o755)).expect("first write");
        let e = write_atomic(&p, b"two\n", false, None).expect_err("exists");
        assert!(e.to_string().contains("--force"), "{e}");
        assert_eq!(std::fs::read(&p).expect("read"), b"one\n");
        write_atomic(&p, b"two\n", true, None).expect("forced");
        assert_eq!(std::fs::read(&p).expect("read"), b"two\n");
        let leftovers = std::fs::read_dir(dir.path()).expect("ls").count();
        assert_eq!(leftovers, 1, "no temporary files left behind");
    }

    #[test]
    fn diff_has_headers_and_hunks() {
        let d = unified_diff("a\nb\n", "a\nc\n", "launch.sh");
        assert!(
            d.starts_with("--- a/launch.sh\n+++ b/launch.sh\n@@ -1,2 +1,2 @@\n"),
            "{d}"
        );
        assert!(d.contains("-b\n+c\n"), "{d}");
    }

    #[test]
    fn unknown_remedy_lists_valid_ids() {
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        let e = fix("vllm serve m", &kb, &["nope".into()]).expect_err("unknown");
        let s = e.to_string();
        assert!(s.contains("\"nope\"") && s.contains("enforce_eager"), "{s}");
    }
}
