//! The remedy preview: what choosing a remedy changes, computed once when the remedy or the
//! launch text changes (never while drawing). A launch remedy is applied with `remedy::fix` to
//! the launch editor's text and shown as the patched command and its unified diff; a remedy whose
//! edit is `patch_script` shows the script `sm120-doctor patch-script --pr N` would write.

use super::state::FileWhat;
use crate::kb::KnowledgeBase;
use crate::kb::schema::Edit;
use crate::remedy::{self, patch_script};

/// Name the diff uses for the launch (`a/launch.sh` → `b/launch.sh`).
pub const DIFF_NAME: &str = "launch.sh";

/// Lines of the script shown before "… N more lines".
pub const SCRIPT_HEAD: usize = 14;

#[derive(Debug, Clone, PartialEq)]
pub enum PreviewBody {
    /// The launch rewritten by the remedy.
    Launch {
        patched: String,
        /// Unified diff; empty when nothing changed.
        diff: String,
    },
    /// The PR apply script.
    Script {
        pr: u32,
        /// The equivalent command line.
        command: String,
        /// Default file name for `w`.
        path: String,
        script: String,
    },
    /// The remedy cannot be applied to this launch (the reason, for the user).
    Error(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub remedy: String,
    pub body: PreviewBody,
    /// What the user should know (from `FixOutcome.notes`, or the script's limits).
    pub notes: Vec<String>,
}

/// The text `w` writes, its default file name and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writable<'a> {
    pub text: &'a str,
    pub path: &'a str,
    pub what: FileWhat,
}

impl Preview {
    /// What `w` writes from this preview (nothing when it changed nothing or failed).
    pub fn writable(&self) -> Option<Writable<'_>> {
        match &self.body {
            PreviewBody::Launch { patched, diff } if !diff.is_empty() => Some(Writable {
                text: patched,
                path: "sm120-doctor-launch.sh",
                what: FileWhat::launch(patched),
            }),
            PreviewBody::Script { script, path, .. } => Some(Writable {
                text: script,
                path,
                what: FileWhat::PatchScript,
            }),
            _ => None,
        }
    }
}

fn script_pr(kb: &KnowledgeBase, id: &str) -> Option<u32> {
    kb.remedy(id)?.edits.iter().find_map(|e| match e {
        Edit::PatchScript { pr } => Some(*pr),
        _ => None,
    })
}

/// The preview of remedy `id` for `launch_text`.
pub fn compute(kb: &KnowledgeBase, id: &str, launch_text: &str) -> Preview {
    if let Some(pr) = script_pr(kb, id) {
        let opts = patch_script::ScriptOptions {
            pr,
            ..Default::default()
        };
        let path = format!("apply-pr-{pr}.sh");
        let (body, notes) = match patch_script::generate(kb, &opts) {
            Ok(script) => (
                PreviewBody::Script {
                    pr,
                    command: format!("sm120-doctor patch-script --pr {pr} -o {path}"),
                    path,
                    script,
                },
                kb.remedy(id)
                    .map(|r| {
                        r.limits
                            .iter()
                            .map(|l| format!("{id} (limit): {l}"))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            Err(e) => (PreviewBody::Error(e.to_string()), Vec::new()),
        };
        return Preview {
            remedy: id.to_string(),
            body,
            notes,
        };
    }
    if launch_text.trim().is_empty() {
        return Preview {
            remedy: id.to_string(),
            body: PreviewBody::Error(
                "no launch command: type or paste yours in the editor below (i), then Esc".into(),
            ),
            notes: Vec::new(),
        };
    }
    match remedy::fix(launch_text, kb, &[id.to_string()]) {
        Ok(out) => {
            let diff = if out.changed() {
                remedy::unified_diff(&out.original, &out.text, DIFF_NAME)
            } else {
                String::new()
            };
            Preview {
                remedy: id.to_string(),
                body: PreviewBody::Launch {
                    patched: out.text,
                    diff,
                },
                notes: out.notes,
            }
        }
        Err(e) => Preview {
            remedy: id.to_string(),
            body: PreviewBody::Error(e.to_string()),
            notes: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write;

    fn kb() -> KnowledgeBase {
        crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb")
    }

    const LAUNCH: &str = "export PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True'\nvllm serve m --tensor-parallel-size 2\n";

    #[test]
    fn drop_expandable_segments_rewrites_and_diffs() {
        let p = compute(&kb(), "drop_expandable_segments", LAUNCH);
        let PreviewBody::Launch { patched, diff } = &p.body else {
            panic!("{p:?}");
        };
        assert!(patched.contains("PYTORCH_CUDA_ALLOC_CONF=''"), "{patched}");
        assert!(
            diff.starts_with("--- a/launch.sh\n+++ b/launch.sh\n"),
            "{diff}"
        );
        assert!(
            diff.contains("-export PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True'"),
            "{diff}"
        );
        assert!(!p.notes.is_empty());
        let w = p.writable().expect("writable");
        assert_eq!(
            (w.text, w.path, w.what),
            (
                patched.as_str(),
                "sm120-doctor-launch.sh",
                FileWhat::Launch(write::Kind::Script)
            )
        );
    }

    #[test]
    fn pr_remedy_previews_the_patch_script() {
        let p = compute(&kb(), "apply_pr_43923", LAUNCH);
        let PreviewBody::Script {
            pr,
            command,
            script,
            ..
        } = &p.body
        else {
            panic!("{p:?}");
        };
        assert_eq!(*pr, 43923);
        assert_eq!(
            command,
            "sm120-doctor patch-script --pr 43923 -o apply-pr-43923.sh"
        );
        assert!(script.starts_with("#!"), "{script}");
        assert_eq!(p.writable().map(|w| w.what), Some(FileWhat::PatchScript));
    }

    #[test]
    fn empty_launch_and_unknown_remedy_are_explained() {
        let p = compute(&kb(), "drop_expandable_segments", "  \n");
        assert!(matches!(&p.body, PreviewBody::Error(e) if e.contains("no launch command")));
        assert_eq!(p.writable(), None);
        let p = compute(&kb(), "no_such_remedy", LAUNCH);
        assert!(matches!(&p.body, PreviewBody::Error(e) if e.contains("unknown remedy")));
    }
}
