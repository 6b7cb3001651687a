//! `os.*`: the operating system.

use super::{FactDef, probed, probed_str};

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "os.name",
        about: "operating system",
        derive: |i| probed(&i.snap.os, i.host_origin(), |o| probed_str(&o.name)),
    },
    FactDef {
        name: "os.kernel",
        about: "kernel version",
        derive: |i| probed(&i.snap.os, i.host_origin(), |o| probed_str(&o.kernel)),
    },
];
