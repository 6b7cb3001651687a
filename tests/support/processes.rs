//! Processes seen through /proc, for the tests that no process a run starts survives it
//! (tests/robustness/no_survivor.rs, tests/tui/no_survivor.rs).

use std::time::{Duration, Instant};

/// Live (not zombie) processes whose command line has `marker` as an argument.
pub fn with_marker(marker: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rsplit_once(')')
                    .map(|(_, r)| r.trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if !zombie && cmd.split(|b| *b == 0).any(|a| a == marker.as_bytes()) {
            out.push(pid);
        }
    }
    out
}

/// Poll `f` every 20 ms until it holds or `secs` pass; whether it held.
pub fn within(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
