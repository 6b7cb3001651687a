//! What arrives from the io floor: the live host and its Python stack, GPU updates, probe
//! results, the terminal's size, and the outcome of each effect.

use super::*;
use crate::collect::refresh::GpuUpdate;
use crate::snapshot::{IpcProbe, P2pProbe, PythonStack, ReasonCode};

impl App {
    pub(super) fn start(&mut self) -> Vec<Effect> {
        if self.collecting.any() {
            return vec![Effect::CollectHost];
        }
        if self.screen == Screen::Main && refreshes(&self.snapshot) {
            return vec![Effect::StartRefresher];
        }
        Vec::new()
    }

    pub(super) fn python_collected(&mut self, python: Box<Probed<PythonStack>>) -> Vec<Effect> {
        if !self.collecting.python {
            // Another host was opened meanwhile (the demo): not this one's.
            return Vec::new();
        }
        self.collecting.python = false;
        self.snapshot.python = *python;
        let dropped = self.input_changed();
        self.jump_to_matched_class();
        self.status = format!("{}{dropped}", self.collected_status()).into();
        Vec::new()
    }

    pub(super) fn gpu_update(&mut self, update: GpuUpdate) {
        match update.gpus {
            Probed::Value(gpus) => {
                let identity = |g: &[crate::snapshot::Gpu]| -> Vec<(u32, Option<String>)> {
                    g.iter()
                        .map(|x| (x.index, x.name.value().cloned()))
                        .collect()
                };
                let changed = self
                    .snapshot
                    .gpus
                    .value()
                    .is_none_or(|old| identity(old) != identity(&gpus));
                self.snapshot.gpus = Probed::Value(gpus);
                self.live.updates += 1;
                self.live.last_error = None;
                if changed {
                    self.rediagnose();
                }
            }
            other => {
                self.live.last_error = other.missing_reason().map(ToString::to_string);
            }
        }
    }

    pub(super) fn resize(&mut self, w: u16, h: u16) {
        self.size = (w, h)
    }

    pub(super) fn done(&mut self, msg: String) {
        self.status = msg.into()
    }

    pub(super) fn copied(&mut self, msg: String) {
        self.status = Status::done(msg)
    }

    pub(super) fn exported(&mut self, msg: String) {
        self.unsaved = Unsaved::default();
        self.status = msg.into();
    }

    pub(super) fn failed(&mut self, msg: String) {
        self.status = Status::error(msg)
    }

    pub(super) fn ask_overwrite(&mut self, effect: Effect) {
        if let Some(pending) = effect.pending_write() {
            self.overlay = Some(Overlay::Confirm {
                question: format!("{} exists. Overwrite it?", pending.path().display()),
                pending,
            });
        }
    }

    pub(super) fn live_source(&mut self, label: String) {
        self.live.source = label
    }

    pub(super) fn run_probe(&mut self) -> Vec<Effect> {
        if !self.can_probe() {
            return Vec::new();
        }
        self.probe_running = true;
        self.probe_lines = vec![
            "running: native path (≤ 1 s), then torch (about 5 s with the torch import)…".into(),
        ];
        self.status = "allocator/IPC probe running in the background…".into();
        let (conf, source) = probe::engine_conf(&self.snapshot);
        vec![Effect::RunProbe { conf, source }]
    }

    pub(super) fn probe_done(&mut self, result: Box<IpcProbe>) -> Vec<Effect> {
        if !self.snapshot.origin.is_live() {
            // It measured this machine, but the user switched to another host meanwhile.
            self.status =
                "the allocator/IPC probe finished for the live host; not applied to this one"
                    .into();
            return Vec::new();
        }
        self.probe_running = false;
        let summary = probe::summary(&result);
        self.snapshot.probe = Probed::Value(*result);
        self.probe_lines = probe::lines(&self.snapshot.probe, self.is_live());
        let dropped = self.input_changed();
        self.status = format!("{summary}{dropped}").into();
        Vec::new()
    }

    pub(super) fn run_p2p_probe(&mut self) -> Vec<Effect> {
        if !self.can_probe_p2p() {
            return Vec::new();
        }
        let tp = self
            .snapshot
            .launch
            .value()
            .and_then(|l| l.tensor_parallel_size);
        self.p2p_running = true;
        self.p2p_lines = vec![probe::p2p_running_line(tp)];
        self.status = "P2P probe running in the background…".into();
        vec![Effect::RunP2pProbe { tp }]
    }

    pub(super) fn p2p_probe_done(&mut self, result: Box<P2pProbe>) -> Vec<Effect> {
        if !self.snapshot.origin.is_live() {
            self.status =
                "the P2P probe finished for the live host; not applied to this one".into();
            return Vec::new();
        }
        self.p2p_running = false;
        let summary = probe::p2p_summary(&result);
        self.snapshot.p2p_probe = Probed::Value(*result);
        self.p2p_lines = probe::p2p_lines(&self.snapshot.p2p_probe, self.is_live());
        let dropped = self.input_changed();
        self.status = format!("{summary}{dropped}").into();
        Vec::new()
    }

    pub(super) fn log_loaded(&mut self, log: LogText) {
        let name = log.name.clone();
        self.file_logs.push(log);
        self.after_log_change(&format!("loaded {name}"), Some(&name));
    }

    /// The live host arrived (without its Python stack, unless that came first): decide the
    /// screen, re-run the walk, start the refresher when there are GPUs to show.
    pub(super) fn host_collected(&mut self, mut snap: HostSnapshot) -> Vec<Effect> {
        if !self.collecting.host {
            return Vec::new();
        }
        self.collecting.host = false;
        // The user's launch and whatever Python stack is known (or still "collecting…").
        snap.launch = std::mem::replace(&mut self.snapshot.launch, Probed::skipped(COLLECTING));
        snap.python = std::mem::replace(&mut self.snapshot.python, Probed::skipped(COLLECTING));
        self.snapshot = snap;
        let why = no_gpu_reason(&self.snapshot);
        // A log given on the command line is read even without a host.
        self.screen = if why.is_some() && self.logs_cache.is_empty() {
            Screen::NoHost
        } else {
            Screen::Main
        };
        let has_gpus = why.is_none();
        self.no_host_reason = why.unwrap_or_default();
        let dropped = self.input_changed();
        self.jump_to_matched_class();
        self.pane = self.first_pane();
        self.status = format!("{}{dropped}", self.collected_status()).into();
        if self.screen == Screen::Main && has_gpus {
            vec![Effect::StartRefresher]
        } else {
            Vec::new()
        }
    }

    /// The status line while and after the live host is read.
    pub(super) fn collected_status(&self) -> String {
        if self.collecting.host {
            COLLECTING_STATUS.into()
        } else if self.collecting.python {
            "read this host; collecting the Python stack… (the walk re-runs when it arrives)".into()
        } else if self.offers_onboarding() {
            ONBOARDING_OFFER.into()
        } else if matches!(&self.snapshot.python, Probed::Skipped(r) if r.code == ReasonCode::NotRequested)
        {
            "read this host (GPUs, environment; Python stack not collected: --no-python); the walk was re-run".into()
        } else {
            "read this host (GPUs, environment, Python stack); the walk was re-run".into()
        }
    }
}

/// Why a live snapshot has no GPU to show (the collector's own reason), or `None` when it has.
pub fn no_gpu_reason(snapshot: &HostSnapshot) -> Option<String> {
    match &snapshot.gpus {
        Probed::Value(g) if g.is_empty() => Some("NVML answered but lists no GPU".into()),
        Probed::Value(_) => None,
        Probed::Skipped(r) => Some(format!("no NVIDIA driver seen: {r}")),
        Probed::Failed(e) => Some(format!("the NVIDIA driver could not be read: {e}")),
    }
}

/// Does this host's GPU panel refresh? The live host does (NVML) and the demo does (a
/// simulation, so the panel visibly moves); a recorded host (a snapshot or a collect-env file)
/// is static and says so instead.
pub(crate) fn refreshes(snapshot: &HostSnapshot) -> bool {
    snapshot.origin.is_live() || snapshot.origin.is_demo()
}
