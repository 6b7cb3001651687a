//! GPU and model names as vLLM sees them: the device name in tuned-config file names, those
//! file names, and the tables of knowledge/hardware.yaml (SKUs that share a chip, model
//! families by name) with their lookups. The tables are data; the knowledge base loads and
//! validates them and hands them to the facts.

/// SKUs that are one chip, by vLLM device name.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct SameChip {
    pub chip: String,
    pub devices: Vec<String>,
}

/// A model family recognised from a model name.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct ModelFamily {
    /// The id checks compare `model.type_hint` with (e.g. `deepseek_v4`).
    pub id: String,
    /// Lower-case name fragments, `_` written as `-`.
    pub names: Vec<String>,
    /// Checkpoints ship as block FP8 unless the name says another format.
    pub block_fp8: bool,
    /// DeepSeek sparse attention (the DSA indexer).
    pub sparse_attention: bool,
}

/// The tables of knowledge/hardware.yaml.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Hardware {
    pub same_chip: Vec<SameChip>,
    /// In match order: the first family whose name fragment the model name holds.
    pub model_families: Vec<ModelFamily>,
    /// Name fragments that say FP8 weights.
    pub fp8_formats: Vec<String>,
    /// Name fragments that say another weight format.
    pub other_formats: Vec<String>,
}

/// How a model name is compared with the tables: lower case, `_` read as `-`.
pub(crate) fn normalise_model_name(model: &str) -> String {
    model.to_lowercase().replace('_', "-")
}

impl Hardware {
    /// Other SKUs of the same chip as `device`.
    pub fn siblings(&self, device: &str) -> Vec<&str> {
        self.same_chip
            .iter()
            .find(|g| g.devices.iter().any(|d| d == device))
            .map(|g| {
                g.devices
                    .iter()
                    .map(String::as_str)
                    .filter(|d| *d != device)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The model family a name or path belongs to (judgement-free: the name only).
    pub fn family(&self, model: &str) -> Option<&ModelFamily> {
        let m = normalise_model_name(model);
        self.model_families
            .iter()
            .find(|f| f.names.iter().any(|n| m.contains(n.as_str())))
    }

    /// Does the name (or `--quantization`) say FP8 weights? A block-FP8 family's checkpoint
    /// is FP8 unless the name or `--quantization` says another format.
    pub fn is_fp8(&self, model: &str, quantization: Option<&str>) -> bool {
        let m = normalise_model_name(model);
        let fp8 = &self.fp8_formats;
        if quantization.is_some_and(|q| fp8.iter().any(|f| q.eq_ignore_ascii_case(f)))
            || fp8.iter().any(|f| m.contains(f.as_str()))
        {
            return true;
        }
        if self.other_formats.iter().any(|f| m.contains(f.as_str())) || quantization.is_some() {
            return false;
        }
        self.family(model).is_some_and(|f| f.block_fp8)
    }
}

/// vLLM's device-name normalisation for config file names: spaces become underscores
/// (fp8_utils.py: `current_platform.get_device_name().replace(" ", "_")`).
pub fn device_name(gpu_name: &str) -> String {
    gpu_name.replace(' ', "_")
}

/// The dense W8A8 block-FP8 config name vLLM looks up (fp8_utils.py `get_w8a8_block_fp8_configs`).
pub fn dense_fp8_config_name(device: &str) -> String {
    format!("N=<N>,K=<K>,device_name={device},dtype=fp8_w8a8,block_shape=[128,128].json")
}

/// The fused-MoE FP8 config name vLLM looks up (fused_moe configs).
pub fn moe_fp8_config_name(device: &str) -> String {
    format!("E=<E>,N=<N>,device_name={device},dtype=fp8_w8a8,block_shape=[128,128].json")
}

/// The `device_name=` part of a config file name.
pub fn config_device(file: &str) -> Option<&str> {
    let rest = file.split_once("device_name=")?.1;
    Some(rest.split(',').next().unwrap_or(rest))
}

/// (source, target) pairs that give `device` a copy of each sibling config it lacks.
pub fn alias_pairs(hw: &Hardware, device: &str, files: &[String]) -> Vec<(String, String)> {
    let siblings = hw.siblings(device);
    let mut out: Vec<(String, String)> = Vec::new();
    for f in files {
        let Some(dev) = config_device(f) else {
            continue;
        };
        if !siblings.contains(&dev) {
            continue;
        }
        let target = f.replacen(
            &format!("device_name={dev},"),
            &format!("device_name={device},"),
            1,
        );
        // Skip names the folder already has, and a second source for the same target.
        if files.contains(&target) || out.iter().any(|(_, t)| *t == target) {
            continue;
        }
        out.push((f.clone(), target));
    }
    out
}

// Also for sm120-doctor's unit tests (its dev-dependency turns `test-support` on).
#[cfg(any(test, feature = "test-support"))]
pub mod tests {
    use super::*;

    /// A small table like knowledge/hardware.yaml, for unit tests that must not load the KB.
    pub fn sample() -> Hardware {
        let fam = |id: &str, names: &[&str], block_fp8: bool, sparse: bool| ModelFamily {
            id: id.into(),
            names: names.iter().map(|s| s.to_string()).collect(),
            block_fp8,
            sparse_attention: sparse,
        };
        Hardware {
            same_chip: vec![SameChip {
                chip: "GB202".into(),
                devices: vec![
                    "NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition".into(),
                    "NVIDIA_RTX_PRO_6000_Blackwell_Max-Q_Workstation_Edition".into(),
                    "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition".into(),
                ],
            }],
            model_families: vec![
                fam("deepseek_v4", &["deepseek-v4"], true, true),
                fam(
                    "deepseek_v32",
                    &["deepseek-v3.2", "deepseek-v3-2"],
                    true,
                    true,
                ),
                fam("deepseek_v3", &["deepseek-v3", "deepseek-r1"], true, false),
                fam("qwen3_5", &["qwen3.5", "qwen3.6", "qwen3-5"], false, false),
            ],
            fp8_formats: vec!["fp8".into()],
            other_formats: [
                "fp4", "awq", "gptq", "int4", "int8", "w4a16", "gguf", "bf16",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        }
    }

    #[test]
    fn device_name_normalisation() {
        assert_eq!(
            device_name("NVIDIA RTX PRO 6000 Blackwell Workstation Edition"),
            "NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition"
        );
    }

    #[test]
    fn families_and_fp8_from_names() {
        let hw = sample();
        let id = |m: &str| hw.family(m).map(|f| f.id.as_str());
        assert_eq!(id("deepseek-ai/DeepSeek-V4-Flash"), Some("deepseek_v4"));
        assert_eq!(id("deepseek-ai/DeepSeek-V3.2-Exp"), Some("deepseek_v32"));
        assert_eq!(id("deepseek-ai/DeepSeek_V3_2"), Some("deepseek_v32"));
        assert_eq!(id("deepseek-ai/DeepSeek-V3-0324"), Some("deepseek_v3"));
        assert_eq!(id("Qwen/Qwen3.6-27B-FP8"), Some("qwen3_5"));
        assert_eq!(id("meta-llama/Llama-3.1-8B-Instruct"), None);
        assert!(hw.is_fp8("Qwen/Qwen3.6-27B-FP8", None));
        assert!(hw.is_fp8("deepseek-ai/DeepSeek-V4-Flash", None));
        assert!(hw.is_fp8("/models/llama-70b", Some("fp8")));
        assert!(hw.is_fp8("/models/llama-70b", Some("FP8")));
        assert!(!hw.is_fp8("nvidia/DeepSeek-V3-0324-FP4", None));
        assert!(!hw.is_fp8("Qwen/Qwen3-32B", None));
        assert!(!hw.is_fp8("deepseek-ai/DeepSeek-V4-Flash", Some("awq")));
        assert!(!Hardware::default().is_fp8("deepseek-ai/DeepSeek-V4-Flash", None));
    }

    #[test]
    fn config_names_and_aliases() {
        let hw = sample();
        let ws = "NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition";
        assert_eq!(
            dense_fp8_config_name(ws),
            "N=<N>,K=<K>,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition,dtype=fp8_w8a8,block_shape=[128,128].json"
        );
        assert!(
            moe_fp8_config_name("NVIDIA_H200").starts_with("E=<E>,N=<N>,device_name=NVIDIA_H200,")
        );
        assert_eq!(hw.siblings(ws).len(), 2);
        assert!(hw.siblings("NVIDIA_H200").is_empty());
        let files: Vec<String> = [
            "N=16384,K=1024,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=1024,K=4096,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=1024,K=4096,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Workstation_Edition,dtype=fp8_w8a8,block_shape=[128,128].json",
            "N=1024,K=4096,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(config_device(&files[3]), Some("NVIDIA_H200"));
        let pairs = alias_pairs(&hw, ws, &files);
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        assert!(pairs[0].0.contains("Server_Edition") && pairs[0].1.contains(ws));
        // WS and Server both have N=1024,K=4096: one alias per target name.
        let maxq = "NVIDIA_RTX_PRO_6000_Blackwell_Max-Q_Workstation_Edition";
        assert_eq!(alias_pairs(&hw, maxq, &files).len(), 2);
        assert!(alias_pairs(&hw, "NVIDIA_H200", &files).is_empty());
    }
}
