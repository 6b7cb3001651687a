//! The fix plan as the Remedy pane shows it, computed once when the answers, logs, launch or
//! remedy picks change (never while drawing): the plan's combined launch (every finding's
//! chosen remedy applied through `engine::plan`) and its unified diff against the launch as
//! given, and — when the remedy in focus applies a PR — the script `sm120-doctor patch-script
//! --pr N` would write.

use crate::engine::plan::Plan;
use crate::kb::KnowledgeBase;
use crate::kb::schema::Edit;
use crate::remedy::{self, patch_script};
use crate::tui::state::FileWhat;

/// Name the diff uses for the launch (`a/launch.sh` → `b/launch.sh`).
pub const DIFF_NAME: &str = "launch.sh";

/// Lines of the script shown before "… N more lines".
pub const SCRIPT_HEAD: usize = 14;

/// The plan's launch.
#[derive(Debug, Clone, PartialEq)]
pub enum PreviewBody {
    /// The launch with every remedy of the plan applied.
    Launch {
        patched: String,
        /// Unified diff against the launch as given; empty when nothing changed.
        diff: String,
    },
    /// The plan has no launch to rewrite (the reason, for the user).
    Error(String),
}

/// The PR apply script of the remedy in focus.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptPreview {
    pub pr: u32,
    /// The equivalent command line.
    pub command: String,
    /// Default file name for `w`.
    pub path: String,
    pub script: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The remedy last picked (in focus), if any.
    pub remedy: Option<String>,
    pub body: PreviewBody,
    pub script: Option<ScriptPreview>,
    /// The plan: its remedies, steps, scripts and what it left out.
    pub plan: Plan,
    /// What the user should know (the plan's notes; the script's limits).
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
    /// What `w` writes: the script of the remedy in focus, else the plan's launch when it
    /// changed (nothing when it changed nothing or failed).
    pub(crate) fn writable(&self) -> Option<Writable<'_>> {
        if let Some(s) = &self.script {
            return Some(Writable {
                text: &s.script,
                path: &s.path,
                what: FileWhat::PatchScript,
            });
        }
        match &self.body {
            PreviewBody::Launch { patched, diff } if !diff.is_empty() => Some(Writable {
                text: patched,
                path: "sm120-doctor-launch.sh",
                what: FileWhat::launch(patched),
            }),
            _ => None,
        }
    }
}

impl Preview {
    /// The combined fix as shell text to paste (`c` copies it): the tool commands that write
    /// the plan's scripts, the launch with every remedy applied when it changed, the manual
    /// steps as comments. `None` when the plan changes nothing.
    pub fn fix_text(&self) -> Option<String> {
        let mut out = String::new();
        for s in &self.plan.scripts {
            out.push_str(&s.command);
            out.push('\n');
        }
        if let PreviewBody::Launch { patched, diff } = &self.body
            && !diff.is_empty()
        {
            out.push_str(patched);
        }
        for s in &self.plan.steps {
            out.push_str(&format!("# step: {s}\n"));
        }
        (!out.trim().is_empty()).then_some(out)
    }
}

fn script_pr(kb: &KnowledgeBase, id: &str) -> Option<u32> {
    kb.remedy(id)?.edits.iter().find_map(|e| match e {
        Edit::PatchScript { pr } => Some(*pr),
        _ => None,
    })
}

/// The script a PR remedy writes, or why it cannot be made.
fn script(kb: &KnowledgeBase, id: &str, notes: &mut Vec<String>) -> Option<ScriptPreview> {
    let pr = script_pr(kb, id)?;
    let opts = patch_script::ScriptOptions {
        pr,
        ..Default::default()
    };
    let path = format!("apply-pr-{pr}.sh");
    match patch_script::generate(kb, &opts) {
        Ok(script) => {
            if let Some(r) = kb.remedy(id) {
                notes.extend(r.limits.iter().map(|l| format!("{id} (limit): {l}")));
            }
            Some(ScriptPreview {
                pr,
                command: format!("sm120-doctor patch-script --pr {pr} -o {path}"),
                path,
                script,
            })
        }
        Err(e) => {
            notes.push(format!("{id}: {e}"));
            None
        }
    }
}

/// The preview of `plan` over the launch as given; `focus` is the remedy last picked, and
/// `launch_error` why the editor's launch could not be read.
pub fn compute(
    kb: &KnowledgeBase,
    plan: &Plan,
    focus: Option<&str>,
    launch_error: Option<&str>,
) -> Preview {
    let mut notes = plan.notes.clone();
    let script = focus.and_then(|id| script(kb, id, &mut notes));
    let body = match (launch_error, &plan.original, &plan.launch) {
        (Some(e), _, _) => PreviewBody::Error(format!("the launch command cannot be read: {e}")),
        (None, Some(original), Some(patched)) => {
            let nl = |t: &str| {
                if t.ends_with('\n') {
                    t.to_string()
                } else {
                    format!("{t}\n")
                }
            };
            let diff = if original != patched {
                remedy::unified_diff(&nl(original), &nl(patched), DIFF_NAME)
            } else {
                String::new()
            };
            PreviewBody::Launch {
                patched: nl(patched),
                diff,
            }
        }
        _ => PreviewBody::Error(
            "no launch command: paste yours on 4 (or 4, then i to type it; Enter applies)".into(),
        ),
    };
    Preview {
        remedy: focus.map(str::to_string),
        body,
        script,
        plan: plan.clone(),
        notes,
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

    fn plan(ids: &[&str]) -> Plan {
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        crate::engine::plan::for_remedies(&kb(), LAUNCH, &ids).expect("plan")
    }

    #[test]
    fn the_plan_rewrites_and_diffs() {
        let p = compute(&kb(), &plan(&["drop_expandable_segments"]), None, None);
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
    fn the_fix_text_is_what_to_run() {
        let p = compute(&kb(), &plan(&["drop_expandable_segments"]), None, None);
        let t = p.fix_text().expect("a fix");
        assert!(t.contains("export PYTORCH_CUDA_ALLOC_CONF=''\n"), "{t}");
        assert!(t.ends_with("--tensor-parallel-size 2\n"), "{t}");
        assert_eq!(
            compute(&kb(), &Plan::default(), None, None).fix_text(),
            None
        );
    }

    #[test]
    fn a_pr_remedy_in_focus_previews_the_patch_script() {
        let p = compute(
            &kb(),
            &plan(&["apply_pr_43923"]),
            Some("apply_pr_43923"),
            None,
        );
        let Some(ScriptPreview {
            pr,
            command,
            script,
            ..
        }) = &p.script
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
    fn no_launch_and_a_bad_launch_are_explained() {
        let empty = Plan::default();
        let p = compute(&kb(), &empty, None, None);
        assert!(matches!(&p.body, PreviewBody::Error(e) if e.contains("no launch command")));
        assert_eq!(p.writable(), None);
        let p = compute(&kb(), &plan(&[]), None, Some("line 1: unclosed quote"));
        assert!(matches!(&p.body, PreviewBody::Error(e) if e.contains("unclosed quote")));
    }
}
