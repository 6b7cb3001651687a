//! The state floor: [`app::App`] (plain data) and [`app::App::update`], which turns an
//! [`action::Action`] into a state change and the effects for the io floor to perform; the
//! keymap, the session's queries, the log index and the words the TUI uses for things. Nothing
//! here touches the terminal, a thread or a file, and nothing here builds a widget: scrolling
//! and mouse clicks measure the screen through [`crate::tui::view::measure`] only.
//!
//! The plain types of the state's fields ([`types`]) are re-exported here.

pub mod action;
pub mod app;
pub mod keymap;
pub mod logindex;
pub mod nav;
pub mod preview;
pub mod probe;
pub mod status;
pub mod types;
pub mod words;

pub use types::*;
