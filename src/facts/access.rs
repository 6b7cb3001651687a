//! `host.live`, `gpu.read_ok`, `gpu.read_error`: whether this is a read of the host the tool
//! runs on, and whether its GPUs could be read at all (the NVIDIA driver answered).

use super::{Fact, FactDef};
use crate::snapshot::Probed;
use crate::value::Value;

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "host.live",
        about: "the input is a live read of a host (now, or recorded in a snapshot file), not a demo, a paste or a collect-env",
        derive: |i| Fact::new(Value::Bool(i.snap.origin.is_live_read()), i.origin()),
    },
    FactDef {
        name: "gpu.read_ok",
        about: "the GPUs could be read (the NVIDIA driver answered through NVML)",
        derive: |i| {
            Fact::new(
                Value::Bool(matches!(i.snap.gpus, Probed::Value(_))),
                format!("{}: GPUs", i.origin()),
            )
        },
    },
    FactDef {
        name: "gpu.read_error",
        about: "why the GPUs could not be read (null: they were)",
        derive: |i| {
            let v = match i.snap.gpus.missing_reason() {
                Some(r) => Value::Str(r.to_string()),
                None => Value::Null,
            };
            Fact::new(v, format!("{}: GPUs", i.origin()))
        },
    },
];
