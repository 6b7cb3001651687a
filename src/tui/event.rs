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
pub fn spawn_signals(tx: Sender<Event>) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Register before returning, so a signal sent right after start-up is not missed.
    let (mut term, mut int, mut hup) = rt.block_on(async {
        Ok::<_, std::io::Error>((
            signal(SignalKind::terminate())?,
            signal(SignalKind::interrupt())?,
            signal(SignalKind::hangup())?,
        ))
    })?;
    std::thread::spawn(move || {
        let name = rt.block_on(async {
            tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
                _ = hup.recv() => "SIGHUP",
            }
        });
        let _ = tx.send(Event::Signal(name));
    });
    Ok(())
}
