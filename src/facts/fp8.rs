//! `fp8.*`: the tuned FP8 config files vLLM looks up for GPU 0, and aliases from sibling SKUs
//! of the same chip (knowledge/hardware.yaml `same_chip`).

use super::gpu::first_device;
use super::{Fact, FactDef, Input, strs};
use crate::snapshot::Probed;
use crate::value::Value;
use crate::vllm::hardware::{
    Hardware, alias_pairs, config_device, dense_fp8_config_name, moe_fp8_config_name,
};

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "fp8.dense_config_name",
        about: "dense W8A8 block-FP8 config file name vLLM looks up for GPU 0 (<N>,<K> from the layer shape)",
        derive: |i| with_device(i, |d| Value::Str(dense_fp8_config_name(d))),
    },
    FactDef {
        name: "fp8.moe_config_name",
        about: "fused-MoE FP8 config file name vLLM looks up for GPU 0 (<E>,<N> from the model)",
        derive: |i| with_device(i, |d| Value::Str(moe_fp8_config_name(d))),
    },
    FactDef {
        name: "fp8.configs_listed",
        about: "the installed vLLM's FP8 config folder was listed",
        derive: |i| {
            let listed = matches!(files(i), Some(Probed::Value(_)));
            Fact::new(Value::Bool(listed), list_source(i))
        },
    },
    FactDef {
        name: "fp8.own_configs",
        about: "files in that folder for GPU 0's device name",
        derive: |i| {
            from_listing(i, |d, l| {
                strs(l.iter().filter(|x| config_device(x) == Some(d)).cloned())
            })
        },
    },
    FactDef {
        name: "fp8.sibling_device_names",
        about: "other SKUs of the same chip as GPU 0 (hardware.yaml same_chip)",
        derive: |i| {
            let hw = i.hardware;
            let value = match first_device(i) {
                Ok(d) => strs(hw.siblings(&d).into_iter().map(String::from)),
                Err(why) => Value::unknown(why),
            };
            Fact::new(value, device_source(i))
        },
    },
    FactDef {
        name: "fp8.sibling_configs",
        about: "files in that folder for a sibling SKU of GPU 0",
        derive: |i| {
            let hw = i.hardware;
            from_listing(i, |d, l| {
                let sib = hw.siblings(d);
                strs(
                    l.iter()
                        .filter(|x| config_device(x).is_some_and(|c| sib.contains(&c)))
                        .cloned(),
                )
            })
        },
    },
    FactDef {
        name: "fp8.alias_commands",
        about: "ln -s commands (run in the config folder) that alias each sibling config to GPU 0's name",
        derive: |i| {
            let hw = i.hardware;
            from_listing(i, |d, l| strs(alias_commands(hw, d, l)))
        },
    },
    FactDef {
        name: "fp8.alias_script",
        about: "one shell line: cd to the config folder and run every alias command (null: nothing to alias)",
        derive: |i| {
            let hw = i.hardware;
            let dir = i.snap.python.value().map(|p| &p.fp8_config_dir);
            from_listing(i, |d, l| match dir {
                Some(Probed::Value(dir)) => alias_script(dir, &alias_commands(hw, d, l))
                    .map(Value::Str)
                    .unwrap_or(Value::Null),
                _ => Value::Unknown("config folder path not known".into()),
            })
        },
    },
];

fn device_source(i: &Input<'_>) -> String {
    format!("{}: GPU 0 name", i.origin())
}

fn list_source(i: &Input<'_>) -> String {
    format!("{}: vLLM FP8 config folder", i.host_origin())
}

fn with_device(i: &Input<'_>, k: impl FnOnce(&str) -> Value) -> Fact {
    let value = match first_device(i) {
        Ok(d) => k(&d),
        Err(why) => Value::unknown(why),
    };
    Fact::new(value, device_source(i))
}

fn files<'a>(i: &Input<'a>) -> Option<&'a Probed<Vec<String>>> {
    i.snap.python.value().map(|p| &p.fp8_config_files)
}

/// A fact from GPU 0's device name and the folder listing, or why one is not known.
fn from_listing(i: &Input<'_>, k: impl FnOnce(&str, &Vec<String>) -> Value) -> Fact {
    let listing: Result<&Vec<String>, String> = match files(i) {
        Some(Probed::Value(l)) => Ok(l),
        Some(other) => Err(format!(
            "config folder not listed: {}",
            other.why_or("unknown")
        )),
        None => Err(format!("Python stack {}", i.snap.python.why_or("unknown"))),
    };
    let value = match (first_device(i), listing) {
        (Ok(d), Ok(l)) => k(&d, l),
        (Err(why), _) | (_, Err(why)) => Value::unknown(why),
    };
    Fact::new(value, list_source(i))
}

/// `ln -s` commands that give `device` a copy of each sibling config it lacks.
pub(crate) fn alias_commands(hw: &Hardware, device: &str, files: &[String]) -> Vec<String> {
    alias_pairs(hw, device, files)
        .into_iter()
        .filter_map(
            |(src, dst)| match (shlex::try_quote(&src), shlex::try_quote(&dst)) {
                (Ok(a), Ok(b)) => Some(format!("ln -s {a} {b}")),
                _ => None,
            },
        )
        .collect()
}

/// One shell line that makes every alias inside `dir`: `cd DIR && ln -s .. && ln -s ..`.
pub(crate) fn alias_script(dir: &str, commands: &[String]) -> Option<String> {
    if commands.is_empty() {
        return None;
    }
    let dir = shlex::try_quote(dir).ok()?;
    Some(format!("cd {dir} && {}", commands.join(" && ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vllm::hardware::tests::sample;

    #[test]
    fn alias_commands_and_script() {
        let hw = sample();
        let ws = "NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition";
        let files: Vec<String> = [
            "N=16384,K=1024,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=1024,K=4096,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=1024,K=4096,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition,dtype=fp8_w8a8,block_shape=[128,128].json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let cmds = alias_commands(&hw, ws, &files);
        assert_eq!(cmds.len(), 1, "{cmds:?}");
        assert!(cmds[0].starts_with(
            "ln -s 'N=16384,K=1024,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition"
        ));
        assert!(cmds[0].contains("device_name=NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition"));
        let maxq = "NVIDIA_RTX_PRO_6000_Blackwell_Max-Q_Workstation_Edition";
        let for_maxq = alias_commands(&hw, maxq, &files);
        assert_eq!(for_maxq.len(), 2, "{for_maxq:?}");
        let script = alias_script("/x y/configs", &for_maxq).expect("script");
        assert!(
            script.starts_with("cd '/x y/configs' && ln -s "),
            "{script}"
        );
        assert_eq!(script.matches(" && ln -s ").count(), 2);
        assert_eq!(alias_script("/x", &[]), None);
        assert!(alias_commands(&hw, "NVIDIA_H200", &files).is_empty());
    }
}
