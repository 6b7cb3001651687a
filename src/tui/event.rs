//! One event enum for everything the loop waits on: terminal input, the live host as it is
//! read, GPU updates, probe results, signals.

use crate::collect::refresh::GpuUpdate;
use ratatui::crossterm::event as ct;
use std::sync::mpsc::Sender;

#[derive(Debug)]
pub enum Event {
    Term(ct::Event),
    Gpu(GpuUpdate),
    /// The live host without its Python stack (NVML, environment, OS, processes).
    Host(Box<crate::snapshot::HostSnapshot>),
    /// The live host's Python stack.
    Python(Box<crate::snapshot::Probed<crate::snapshot::PythonStack>>),
    /// The allocator/IPC probe finished on its background thread.
    Probe(Box<crate::snapshot::IpcProbe>),
    /// The functional P2P probe finished on its background thread.
    P2pProbe(Box<crate::snapshot::P2pProbe>),
    /// SIGTERM, SIGINT or SIGHUP arrived.
    Signal(&'static str),
}

/// Read terminal events on a thread (blocking reads, no polling: idle costs nothing).
pub fn spawn_input(tx: Sender<Event>) {
    std::thread::spawn(move || {
        while let Ok(ev) = ct::read() {
            if tx.send(Event::Term(ev)).is_err() {
                return;
            }
        }
    });
}

/// Turn SIGTERM/SIGINT/SIGHUP into an event so the loop ends and the terminal is restored.
/// signal-hook (already in the tree through crossterm) registers the handlers; its iterator
/// thread turns the first signal into the event.
pub fn spawn_signals(tx: Sender<Event>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    // Registered before returning, so a signal sent right after start-up is not missed.
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let _ = tx.send(Event::Signal(signal_name(sig)));
        }
    });
    Ok(())
}

/// The name the loop reports for a signal it listens to.
fn signal_name(sig: i32) -> &'static str {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    match sig {
        SIGTERM => "SIGTERM",
        SIGINT => "SIGINT",
        SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_signal_listened_to_has_its_name() {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        assert_eq!(signal_name(SIGTERM), "SIGTERM");
        assert_eq!(signal_name(SIGINT), "SIGINT");
        assert_eq!(signal_name(SIGHUP), "SIGHUP");
    }
}
