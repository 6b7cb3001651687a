//! `driver.*`: the NVIDIA driver.

use super::{Fact, FactDef, Input, probed, probed_str};
use crate::snapshot::Driver;
use crate::value::Value;

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "driver.version",
        about: "NVIDIA driver version",
        derive: |i| driver(i, |d| probed_str(&d.version)),
    },
    FactDef {
        name: "driver.major",
        about: "driver branch as a number, e.g. 595",
        derive: |i| {
            driver(i, |d| match probed_str(&d.version) {
                Value::Str(v) => v
                    .split('.')
                    .next()
                    .and_then(|m| m.parse::<f64>().ok())
                    .map(Value::Num)
                    .unwrap_or(Value::unknown(format!(
                        "driver version {v:?} not understood"
                    ))),
                other => other,
            })
        },
    },
    FactDef {
        name: "driver.cuda",
        about: "CUDA version the driver supports, e.g. 13.0",
        derive: |i| driver(i, |d| probed_str(&d.cuda_driver_version)),
    },
    FactDef {
        name: "driver.open_module",
        about: "the open GPU kernel module is loaded",
        derive: |i| {
            driver(i, |d| match probed_str(&d.kernel_module) {
                Value::Str(m) => Value::Bool(m == "open"),
                other => other,
            })
        },
    },
];

fn driver(i: &Input<'_>, f: impl FnOnce(&Driver) -> Value) -> Fact {
    probed(&i.snap.driver, format!("{}: driver", i.origin()), f)
}
