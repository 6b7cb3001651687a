//! The interactive TUI: live GPU/env state beside a guided walk through the knowledge base.
//!
//! Three floors, each a folder (tests/layering.rs holds them):
//!
//! - [`state`]: plain data and pure changes. Keys become [`state::action::Action`]s through
//!   the one keymap ([`state::keymap`]); [`state::app::App::update`] changes the state and
//!   returns [`state::action::Effect`]s. It builds no widget and reads the screen's geometry
//!   only through [`view::measure`].
//! - [`view`]: drawing, a pure function of the state ([`view::render`]), laid out by
//!   [`view::layout::regions`], one file per screen region. It never imports [`io`].
//! - [`io`]: the event loop and whatever touches the terminal, a thread, the clipboard or a
//!   file: input, GPU updates and signals arrive as one [`io::event::Event`] stream, and
//!   [`io::effects::perform`] carries out the effects.
//!
//! ```text
//! ┌ header (view/mod.rs): sm120-doctor · ✗/!/? counts · host · mode ───────────────────────┐
//! │ verdict (view/mod.rs): the worst finding, or what the walk waits for                   │
//! ├─ gpu.rs ───────────────────┬─ [1 Summary │ 2 Walk │ 3 Log │ 4 Remedy] ───────────────────┤
//! │ GPU0 name                  │ summary.rs findings ranked, questions, the fix (c copies)   │
//! │  CC 12.0 SM120  PCIe       │ walk.rs    class bar (fixed), steps in words, question or   │
//! │  util temp power           │            finding with remedies (scrolls, stops at end)    │
//! │  mem ██████░░░░            │ log.rs     logs indexed once (logindex.rs); / search, ]/[   │
//! │ GPU0↔GPU1 PHB P2P NVLink   │ remedy.rs  remedies to choose, the fix plan, launch editor  │
//! ├─ env.rs ───────────────────┤                                                             │
//! │ versions, ◆ used variables │            (position on the bottom border)                  │
//! ├────────────────────────────┴─────────────────────────────────────────────────────────────┤
//! │ footer.rs: status message, styled by its tone (status.rs), or the search being typed     │
//! │ footer.rs: keys valid on this screen (from keymap::bindings; shortened when narrow)      │
//! └──────────────────────────────────────────────────────────────────────────────────────────┘
//!   overlays: help.rs (?), export.rs (path prompt, overwrite and quit questions)
//!   (the files named here are in view/; keymap.rs, logindex.rs and status.rs in state/)
//! ```
//! Below 110 columns the side panels collapse and the pane takes the width; below 80×24 only a
//! "too small" message is drawn. With no host option the first frame comes before the live
//! host is read: `Arrival::Start` hands the reading to [`io::live::collector`]'s threads and the
//! screen says "collecting…" ([`state::Screen::Collecting`]) until the host arrives as an
//! event; the walk runs then, and again when the Python stack arrives.

pub mod io;
pub mod state;
pub mod view;

// The entry points the CLI, the tests and the benches call, and the key table the man page
// prints, where they were before the split.
pub use io::{Exit, build_app, dispatch, run, run_loop};
pub use view::{MIN_HEIGHT, MIN_WIDTH, help, render};
