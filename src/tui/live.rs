//! Live wiring: where the host snapshot and the 1 Hz GPU updates come from.
//!
//! The lead plugs the real NVML collector in here: [`collect_live_host`] for the whole host,
//! and the `origin == "live"` arm of [`poll_for`] for the refresher's poll.

use super::event::Event;
use crate::collect::refresh::spawn_refresher;
use crate::snapshot::{Gpu, HostSnapshot, Probed};
use std::sync::mpsc::Sender;
use std::time::Duration;

pub type Poll = Box<dyn FnMut() -> Probed<Vec<Gpu>> + Send>;

/// The live host, or why there is none.
pub fn collect_live_host() -> Result<HostSnapshot, String> {
    Err("no live collector in this build, so no NVIDIA driver can be seen from here".into())
}

/// The poll function for this host and a label for the GPU panel.
pub fn poll_for(snapshot: &HostSnapshot) -> (String, Poll) {
    let gpus = snapshot.gpus.value().cloned().unwrap_or_default();
    ("simulated refresh".into(), Box::new(simulated(gpus)))
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
