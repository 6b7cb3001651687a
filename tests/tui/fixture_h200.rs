//! The TUI capture from a real 2× H200 host (tests/fixtures/h200-tui-2026-11-30): the pane shows
//! the GPUs NVML reported there, and the probe run from the TUI confirmed the root cause.

fn read(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/h200-tui-2026-11-30/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

#[test]
fn the_live_pane_shows_the_real_gpus() {
    let host = read("host.txt");
    let pane = read("tui-live-20s.txt");
    let gpus = host
        .lines()
        .filter(|l| l.starts_with("GPU ") && l.contains("NVIDIA H200"))
        .count();
    assert_eq!(gpus, 2, "{host}");
    assert!(
        pane.contains("GPU0 NVIDIA H200") && pane.contains("GPU1 NVIDIA H200"),
        "{pane}"
    );
    assert!(pane.contains("CC 9.0 (not SM120)"), "{pane}");
    assert!(pane.contains("NVML, live"), "{pane}");
    assert!(pane.contains("driver 580.159.04"), "{pane}");
    assert!(pane.contains("allocator_ipc_will_crash"), "{pane}");
}

#[test]
fn the_probe_from_the_tui_confirmed_the_root_cause() {
    let pane = read("tui-live-probe.txt");
    assert!(pane.contains("allocator_ipc_confirmed_on_host"), "{pane}");
    assert!(pane.contains("probe.ipc_expandable_ok = no"), "{pane}");
    let quit = read("tui-after-quit.txt");
    assert!(quit.contains("EXIT=0"), "{quit}");
    assert!(
        !quit.contains("sm120-doctor  host:"),
        "the alternate screen was left: {quit}"
    );
}
