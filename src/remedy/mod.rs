//! Remedies a user can run: a rewritten launch (`fix`) and the PR apply script (`patch-script`).
//!
//! The edits come from the knowledge base (`edits:` of each remedy in `knowledge/remedies.yaml`);
//! this module applies them generically through [`rewrite::apply_edit`].

pub mod patch_script;
pub mod rewrite;

use crate::kb::KnowledgeBase;
use crate::launch::{Select, SourceFile};

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
    /// What in the launch does not do what it seems to (left as it is by the fix).
    pub warnings: Vec<String>,
}

impl FixOutcome {
    pub fn changed(&self) -> bool {
        self.original != self.text
    }
}

/// A launch read from several files, before and after the remedies.
#[derive(Debug, Clone, PartialEq)]
pub struct FilesOutcome {
    pub originals: Vec<SourceFile>,
    /// The new text of each file, in the same order.
    pub texts: Vec<String>,
    pub notes: Vec<String>,
    pub warnings: Vec<String>,
}

impl FilesOutcome {
    /// Indices of the files that change.
    pub fn changed(&self) -> Vec<usize> {
        (0..self.texts.len())
            .filter(|&i| self.originals[i].text != self.texts[i])
            .collect()
    }
}

/// Apply the remedies `ids`, in order, to a launch text.
pub fn fix(text: &str, kb: &KnowledgeBase, ids: &[String]) -> Result<FixOutcome, RemedyError> {
    let files = [SourceFile::new("launch", text)];
    let o = fix_files(&files, &Select::default(), kb, ids)?;
    Ok(FixOutcome {
        original: text.to_string(),
        text: o.texts.into_iter().next().unwrap_or_default(),
        notes: o.notes,
        warnings: o.warnings,
    })
}

/// Apply the remedies `ids`, in order, to a launch read from `files` (`files[0]` the main one),
/// editing each file where the setting lives.
pub fn fix_files(
    files: &[SourceFile],
    select: &Select,
    kb: &KnowledgeBase,
    ids: &[String],
) -> Result<FilesOutcome, RemedyError> {
    let mut remedies = Vec::new();
    for id in ids {
        let r = kb.remedy(id).ok_or_else(|| RemedyError::Unknown {
            id: id.clone(),
            valid: kb.remedies.keys().cloned().collect(),
        })?;
        remedies.push(r);
    }
    // Parse first so a bad launch is reported as such, with its line.
    let located = crate::launch::locate_files(files, select)?;
    let mut notes: Vec<String> = located.notes.clone();
    let warnings: Vec<String> = located
        .problems
        .iter()
        .map(|p| {
            let name = files.get(p.file).map_or("", |f| f.name.as_str());
            format!("{name}:{}: {}", p.line, p.message)
        })
        .collect();
    let mut current: Vec<SourceFile> = files.to_vec();
    for r in remedies {
        let id = r.id.value.as_str();
        for edit in &r.edits {
            let step =
                rewrite::apply_edit_files(&current, select, id, edit, kb).map_err(|error| {
                    RemedyError::Fix {
                        remedy: id.to_string(),
                        error,
                    }
                })?;
            notes.extend(step.notes);
            for (f, t) in current.iter_mut().zip(step.texts) {
                f.text = t;
            }
        }
        if r.edits.is_empty() {
            notes.push(format!("{id}: this remedy has no edits"));
        }
        for l in &r.limits {
            notes.push(format!("{id} (limit): {l}"));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    notes.retain(|n| seen.insert(n.clone()));
    Ok(FilesOutcome {
        originals: files.to_vec(),
        texts: current.into_iter().map(|f| f.text).collect(),
        notes,
        warnings,
    })
}

/// A unified diff of the launch (`a/NAME` → `b/NAME`).
pub(crate) fn unified_diff(old: &str, new: &str, name: &str) -> String {
    let mut opts = diffy::DiffOptions::new();
    opts.set_original_filename(format!("a/{name}"));
    opts.set_modified_filename(format!("b/{name}"));
    let patch = opts.create_patch(old, new);
    diffy::PatchFormatter::new().fmt_patch(&patch).to_string()
}

/// How a launch text is written to a file: a shell command line or `docker run` is a script
/// (shebang, final newline, executable when new); a compose file, or text that is no launch, is
/// data, written as given.
pub(crate) fn launch_file_kind(text: &str) -> crate::write::Kind {
    match crate::launch::locate(text).map(|l| (l.form, l.entrypoint.is_some())) {
        Ok((crate::launch::Form::Shell | crate::launch::Form::Docker, true)) => {
            crate::write::Kind::Script
        }
        _ => crate::write::Kind::Data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_commands_are_scripts_and_compose_files_are_data() {
        use crate::write::Kind;
        assert_eq!(launch_file_kind("vllm serve m -tp 2"), Kind::Script);
        assert_eq!(
            launch_file_kind("docker run --gpus all vllm/vllm-openai --model m"),
            Kind::Script
        );
        assert_eq!(
            launch_file_kind(
                "services:\n  vllm:\n    image: vllm/vllm-openai\n    command: [\"--model\", \"m\"]\n"
            ),
            Kind::Data
        );
        assert_eq!(launch_file_kind("not a launch at all"), Kind::Data);
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
