//! Background refresh of fast-changing GPU fields (memory, utilisation, temperature, power, PCIe)
//! for the TUI. Polling runs on its own thread so it never blocks rendering; the receiver gets
//! one whole update per tick and the thread ends when the receiver is dropped.

use crate::snapshot::{Gpu, Probed};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread;
use std::time::{Duration, SystemTime};

/// One poll's result.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuUpdate {
    pub at: SystemTime,
    pub gpus: Probed<Vec<Gpu>>,
}

/// Start polling every `period`. Only the newest update matters, so the channel holds one and
/// a slow consumer makes the poller skip ticks instead of queueing stale data.
pub(crate) fn spawn_refresher<F>(period: Duration, mut poll: F) -> Receiver<GpuUpdate>
where
    F: FnMut() -> Probed<Vec<Gpu>> + Send + 'static,
{
    let (tx, rx): (SyncSender<GpuUpdate>, Receiver<GpuUpdate>) = mpsc::sync_channel(1);
    thread::spawn(move || {
        loop {
            let update = GpuUpdate {
                at: SystemTime::now(),
                gpus: poll(),
            };
            match tx.try_send(update) {
                Ok(()) | Err(mpsc::TrySendError::Full(_)) => {}
                Err(mpsc::TrySendError::Disconnected(_)) => return,
            }
            thread::sleep(period);
        }
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivers_updates_and_stops_when_dropped() {
        let mut n = 0u32;
        let rx = spawn_refresher(Duration::from_millis(5), move || {
            n += 1;
            Probed::Value(vec![Gpu::named(0, &format!("poll {n}"), "fake")])
        });
        let first = rx
            .recv_timeout(Duration::from_secs(2))
            .expect("first update");
        let name = first
            .gpus
            .value()
            .and_then(|g| g[0].name.value().cloned())
            .expect("name");
        assert!(name.starts_with("poll "), "{name}");
        let second = rx
            .recv_timeout(Duration::from_secs(2))
            .expect("second update");
        assert!(second.at >= first.at);
        drop(rx);
    }
}
