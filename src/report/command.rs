//! What to run for one chosen remedy alone, as shown in a report's per-finding detail (the plan,
//! [`crate::engine::plan`], combines every finding's remedy into one command): the user's launch rewritten by the
//! same code as `sm120-doctor fix` (every byte outside the edit kept), manual steps, and the tool
//! command that writes the exact artefact (`fix` for launch edits, `patch-script` for PR scripts).

use crate::engine::plan::{describe, host_alloc_edit, script_for};
use crate::facts::Facts;
use crate::kb::KnowledgeBase;
use crate::kb::schema::Edit;
use crate::remedy::rewrite;
use crate::snapshot::HostSnapshot;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RemedyAction {
    /// The launch to run, rewritten. Empty when the remedy does not change the launch or no
    /// launch was given.
    pub shell: Vec<String>,
    /// Steps a person has to take (upgrades, file copies, a launch edit when no launch was given).
    pub steps: Vec<String>,
    /// The tool command that writes the exact artefact for this remedy, when there is one.
    pub tool_command: Option<String>,
    /// The script file the tool command writes, for script remedies.
    pub script: Option<String>,
}

/// What to run for remedy `id` with `edits` on this host and launch.
pub fn action(
    id: &str,
    edits: &[Edit],
    snap: &HostSnapshot,
    facts: &Facts,
    kb: &KnowledgeBase,
) -> RemedyAction {
    let mut act = RemedyAction::default();
    let launch = snap.launch.value().map(|l| l.raw.clone());
    let mut text = launch.clone();
    let mut launch_edits = false;
    for e in edits {
        match e {
            Edit::PatchScript { pr } => {
                let (script, step) = script_for(*pr);
                act.tool_command = Some(script.command);
                act.steps.push(step);
                act.script = Some(script.file);
            }
            Edit::Manual { text } => act.steps.push(text.clone()),
            edit => {
                launch_edits = true;
                let edit = match edit {
                    Edit::DropAllocOption { option } => {
                        host_alloc_edit(option, snap, facts).unwrap_or_else(|| edit.clone())
                    }
                    other => other.clone(),
                };
                match &text {
                    Some(current) => match rewrite::apply_edit(current, id, &edit, kb) {
                        Ok(step) => {
                            act.steps.extend(step.notes);
                            text = Some(step.text);
                        }
                        Err(e) => {
                            act.steps.push(format!(
                                "The launch could not be rewritten ({e}); {}",
                                describe(&edit, kb)
                            ));
                        }
                    },
                    None => act.steps.push(describe(&edit, kb)),
                }
            }
        }
    }
    if let (Some(before), Some(after)) = (&launch, &text)
        && before != after
    {
        act.shell.push(after.clone());
    }
    if act.tool_command.is_none() && launch_edits {
        act.tool_command = Some(format!(
            "sm120-doctor fix --launch-file LAUNCH_FILE --remedy {id}"
        ));
    }
    act
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Probed;

    fn kb() -> KnowledgeBase {
        crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb")
    }

    fn snap_with(launch: &str, env: &[(&str, &str)]) -> HostSnapshot {
        let mut s = HostSnapshot::empty("test", "test");
        s.launch = Probed::Value(crate::launch::parse_launch(launch).expect("launch"));
        s.env = Probed::Value(crate::snapshot::Environment {
            whose: None,
            source: "test".into(),
            vars: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            covers: None,
        });
        s
    }

    fn run(launch: &str, env: &[(&str, &str)], edits: &[Edit]) -> RemedyAction {
        let s = snap_with(launch, env);
        let facts = crate::facts::derive(&s, false, &kb().hardware);
        action("r", edits, &s, &facts, &kb())
    }

    #[test]
    fn drop_expandable_unsets_an_export_in_the_script() {
        let a = run(
            "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nvllm serve m --tensor-parallel-size 2",
            &[],
            &[Edit::DropAllocOption {
                option: "expandable_segments".into(),
            }],
        );
        assert_eq!(
            a.shell,
            // The user's bytes stay; the emptied variable stays set so it still masks
            // PYTORCH_ALLOC_CONF.
            vec![
                "export PYTORCH_CUDA_ALLOC_CONF=''\nvllm serve m --tensor-parallel-size 2"
                    .to_string()
            ]
        );
        assert_eq!(
            a.tool_command.as_deref(),
            Some("sm120-doctor fix --launch-file LAUNCH_FILE --remedy r")
        );
    }

    #[test]
    fn drop_expandable_keeps_other_options_from_the_host_env() {
        let a = run(
            "vllm serve m",
            &[(
                "PYTORCH_CUDA_ALLOC_CONF",
                "expandable_segments:True,max_split_size_mb:512",
            )],
            &[Edit::DropAllocOption {
                option: "expandable_segments".into(),
            }],
        );
        assert_eq!(
            a.shell,
            vec!["PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512 vllm serve m".to_string()]
        );
    }

    #[test]
    fn add_flag_once_and_prefix_env_is_replaced() {
        let a = run(
            "FOO='a b' VLLM_USE_DEEP_GEMM=1 vllm serve m --enforce-eager",
            &[],
            &[
                Edit::AddFlag {
                    flag: "--enforce-eager".into(),
                    value: None,
                },
                Edit::AddFlag {
                    flag: "--disable-custom-all-reduce".into(),
                    value: None,
                },
                Edit::SetEnv {
                    name: "VLLM_USE_DEEP_GEMM".into(),
                    value: "0".into(),
                },
            ],
        );
        assert_eq!(
            a.shell,
            vec!["FOO='a b' VLLM_USE_DEEP_GEMM=0 vllm serve m --enforce-eager --disable-custom-all-reduce".to_string()]
        );
    }

    #[test]
    fn compilation_config_is_merged_into_the_json() {
        let a = run(
            r#"vllm serve m --compilation-config '{"level": 3, "cudagraph_mode": "FULL"}'"#,
            &[],
            &[Edit::SetCompilationConfig {
                key: "cudagraph_mode".into(),
                value: "PIECEWISE".into(),
            }],
        );
        assert_eq!(
            a.shell,
            vec![r#"vllm serve m --compilation-config '{"level": 3, "cudagraph_mode": "PIECEWISE"}'"#.to_string()]
        );
        let b = run(
            "vllm serve m",
            &[],
            &[Edit::SetCompilationConfig {
                key: "cudagraph_mode".into(),
                value: "PIECEWISE".into(),
            }],
        );
        assert_eq!(
            b.shell.last().map(String::as_str),
            Some("vllm serve m --compilation-config '{\"cudagraph_mode\": \"PIECEWISE\"}'")
        );
    }

    #[test]
    fn remove_flag_takes_its_value() {
        let a = run(
            "vllm serve m --kv-cache-dtype fp8 --enforce-eager",
            &[],
            &[Edit::RemoveFlag {
                flag: "--kv-cache-dtype".into(),
            }],
        );
        assert_eq!(a.shell, vec!["vllm serve m --enforce-eager".to_string()]);
    }

    #[test]
    fn patch_script_names_the_script_and_the_tool_command() {
        let s = HostSnapshot::empty("t", "t");
        let facts = crate::facts::derive(&s, false, &kb().hardware);
        let a = action(
            "apply_pr_43923",
            &[Edit::PatchScript { pr: 43923 }],
            &s,
            &facts,
            &kb(),
        );
        assert_eq!(a.script.as_deref(), Some("apply-pr-43923.sh"));
        assert_eq!(
            a.tool_command.as_deref(),
            Some("sm120-doctor patch-script --pr 43923 -o apply-pr-43923.sh")
        );
        assert!(a.shell.is_empty());
    }

    #[test]
    fn without_a_launch_flag_edits_become_steps() {
        let s = HostSnapshot::empty("t", "t");
        let facts = crate::facts::derive(&s, false, &kb().hardware);
        let a = action(
            "x",
            &[Edit::AddFlag {
                flag: "--enforce-eager".into(),
                value: None,
            }],
            &s,
            &facts,
            &kb(),
        );
        assert!(a.shell.is_empty());
        assert_eq!(
            a.steps,
            vec!["Add `--enforce-eager` to the vLLM launch.".to_string()]
        );
    }
}
