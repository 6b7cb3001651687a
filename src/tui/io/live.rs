//! Live wiring: where the host snapshot and the 1 Hz GPU updates come from.
//!
//! With no host option the TUI draws first and reads this host afterwards: [`collector`] runs
//! the two parts [`crate::input`] defines on their own threads (the host without Python, which
//! is fast, and the Python stack, under its time limit), each arriving as an [`Event`].
//! [`crate::tui::state::app::no_gpu_reason`] decides whether the host has GPUs to show; its GPUs are then polled by
//! `collect::live_gpu_poll` on the refresher's thread, never on the render path.

use crate::collect::refresh::spawn_refresher;
use crate::input::LivePython;
use crate::snapshot::{Gpu, HostSnapshot, Probed};
use crate::tui::io::event::Event;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::Duration;

/// Reads the live host without blocking the caller; each part arrives on the sender as
/// [`Event::Host`] or [`Event::Python`]. The sender is dropped once everything was sent.
pub type Collector = Arc<dyn Fn(Sender<Event>) + Send + Sync>;

/// This host: the fast part and the Python stack on two threads, in parallel. Under
/// `--no-python` ([`LivePython::Skip`]) no interpreter runs: the stack arrives at once as not
/// requested.
pub fn collector(python: LivePython) -> Collector {
    Arc::new(move |tx: Sender<Event>| {
        let host_tx = tx.clone();
        std::thread::spawn(move || {
            let snap = crate::input::collect_live_without_python();
            let _ = host_tx.send(Event::Host(Box::new(snap)));
        });
        match python {
            LivePython::Collect => {
                std::thread::spawn(move || {
                    let python = crate::input::collect_live_python();
                    let _ = tx.send(Event::Python(Box::new(python)));
                });
            }
            LivePython::Skip => {
                let _ = tx.send(Event::Python(Box::new(
                    crate::collect::python_not_requested(),
                )));
            }
        }
    })
}

pub type Poll = Box<dyn FnMut() -> Probed<Vec<Gpu>> + Send>;

/// The poll function for this host and a label for the GPU panel: NVML for the live host, a
/// simulated source for the demo (and any other host it is asked for; see `refreshes` in [`crate::tui::state::app`]).
pub(crate) fn poll_for(snapshot: &HostSnapshot) -> (String, Poll) {
    if snapshot.origin.is_live() {
        return (
            "NVML, live".into(),
            Box::new(crate::collect::live_gpu_poll()),
        );
    }
    let gpus = snapshot.gpus.value().cloned().unwrap_or_default();
    ("demo, simulated refresh".into(), Box::new(simulated(gpus)))
}

/// A fake source for the demo and recorded hosts: the recorded GPUs with small changes in the
/// fields that have values (memory, utilisation, temperature, power), so the panel visibly moves.
pub fn simulated(gpus: Vec<Gpu>) -> impl FnMut() -> Probed<Vec<Gpu>> + Send {
    let mut tick: u64 = 0;
    move || {
        tick += 1;
        let wobble = (tick % 4) as u32;
        let out = gpus
            .iter()
            .map(|g| {
                let mut g = g.clone();
                if let (Some(u), Some(t)) =
                    (g.memory_used_mib.value_mut(), g.memory_total_mib.value())
                {
                    *u = (*u + u64::from(wobble) * 256).min(*t);
                }
                if let Some(u) = g.utilization_pct.value_mut() {
                    *u = (*u + wobble * 3).min(100);
                }
                if let Some(t) = g.temperature_c.value_mut() {
                    *t += wobble;
                }
                if let Some(p) = g.power_w.value_mut() {
                    *p += f64::from(wobble) * 2.5;
                }
                g
            })
            .collect();
        Probed::Value(out)
    }
}

/// Start the refresher and forward its updates into the event channel.
pub fn start(period: Duration, poll: Poll, tx: Sender<Event>) {
    let rx = spawn_refresher(period, poll);
    std::thread::spawn(move || {
        while let Ok(update) = rx.recv() {
            if tx.send(Event::Gpu(update)).is_err() {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::state::app::{no_gpu_reason, refreshes};

    #[test]
    fn a_host_without_gpus_gives_the_collectors_reason() {
        let mut s = HostSnapshot::empty("live", "libnvidia-ml.so.1 not found");
        let why = no_gpu_reason(&s).expect("no gpu");
        assert!(why.contains("libnvidia-ml.so.1 not found"), "{why}");
        s.gpus = Probed::Value(Vec::new());
        assert!(no_gpu_reason(&s).is_some());
        s.gpus = Probed::Value(vec![Gpu::named(0, "fake", "x")]);
        assert_eq!(no_gpu_reason(&s), None);
        assert_eq!(poll_for(&s).0, "NVML, live");
        s.origin = crate::snapshot::Origin::Demo(None);
        assert_eq!(poll_for(&s).0, "demo, simulated refresh");
        assert!(refreshes(&s));
        s.origin = crate::snapshot::Origin::CollectEnv("x.txt".into());
        assert!(!refreshes(&s), "a recorded host is static");
    }

    #[test]
    fn no_python_sends_the_stack_as_not_requested_without_running_python() {
        let (tx, rx) = std::sync::mpsc::channel();
        collector(LivePython::Skip)(tx);
        let (mut host, mut python) = (false, None);
        while !(host && python.is_some()) {
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(Event::Host(_)) => host = true,
                Ok(Event::Python(p)) => python = Some(*p),
                Ok(_) => {}
                Err(e) => panic!("collector stopped before both parts arrived: {e}"),
            }
        }
        match python {
            Some(Probed::Skipped(r)) => {
                assert_eq!(r.code, crate::snapshot::ReasonCode::NotRequested);
                assert!(r.to_string().contains("--no-python"), "{r}");
            }
            other => panic!("expected a skipped Python stack, got {other:?}"),
        }
    }

    #[test]
    fn simulated_changes_only_known_fields() {
        let mut g = Gpu::named(0, "fake", "not measured");
        g.memory_total_mib = Probed::Value(1000);
        g.memory_used_mib = Probed::Value(100);
        let mut poll = simulated(vec![g]);
        let a = poll();
        let b = poll();
        let ua = a.value().expect("v")[0].memory_used_mib.value().copied();
        let ub = b.value().expect("v")[0].memory_used_mib.value().copied();
        assert_ne!(ua, ub);
        assert!(b.value().expect("v")[0].temperature_c.value().is_none());
    }
}
