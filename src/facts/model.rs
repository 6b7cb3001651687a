//! `model.*`: what the model name says, by the families of knowledge/hardware.yaml.

use super::{Fact, FactDef, Input, probed};
use crate::value::Value;
use crate::vllm::hardware::{Hardware, ModelFamily};

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "model.type_hint",
        about: "model family guessed from the model name (a family id of hardware.yaml: deepseek_v4, deepseek_v32, deepseek_v3, qwen3_5, ...; null: no guess)",
        derive: |i| {
            by_name(i, |hw, m, _| {
                hw.family(m)
                    .map(|f| Value::Str(f.id.clone()))
                    .unwrap_or(Value::Null)
            })
        },
    },
    FactDef {
        name: "model.fp8",
        about: "the model name says FP8, --quantization fp8 is given, or the name is of a family whose checkpoints ship as block FP8 (hardware.yaml block_fp8)",
        derive: |i| by_name(i, |hw, m, q| Value::Bool(hw.is_fp8(m, q))),
    },
    FactDef {
        name: "model.sparse_attention",
        about: "the model name is of a DeepSeek sparse-attention (DSA) family (hardware.yaml sparse_attention: V3.2, V4)",
        derive: |i| {
            by_name(i, |hw, m, _| {
                Value::Bool(
                    hw.family(m)
                        .is_some_and(|f: &ModelFamily| f.sparse_attention),
                )
            })
        },
    },
];

/// A fact from the launch's model name (and `--quantization`).
fn by_name(i: &Input<'_>, f: fn(&Hardware, &str, Option<&str>) -> Value) -> Fact {
    probed(
        &i.snap.launch,
        "launch command (model name)",
        |l| match &l.model {
            Some(m) => f(i.hardware, m, l.quantization.as_deref()),
            None => Value::Unknown("the launch names no model".into()),
        },
    )
}
