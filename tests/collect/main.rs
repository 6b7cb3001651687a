//! Collection and probes: the live collector on this machine and under injected faults, the
//! sysfs/PCI fabric readers, and the allocator/IPC and p2p probes (fake children and the real
//! 2× H200 captures).

#[path = "../support/mod.rs"]
mod support;

mod cli;
mod facts_p2p;
mod faults;
mod fixture_h200;
mod p2p_fabric_check;
mod pci_fixtures;
mod probe_fixture_h200;
mod probe_p2p_children;
mod probe_p2p_fixture_h200;
mod python_through_root;
