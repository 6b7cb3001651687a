//! The flat spellings of [`Action`] from before it was grouped (`Action::Quit`,
//! `Action::ShowPane(p)`), each building its grouped value: the integration tests (tests/tui/)
//! and the unit tests beside the TUI's modules still write actions this way. The TUI's own code
//! builds the grouped values; once the tests do too, this file goes.

#![allow(non_upper_case_globals, non_snake_case)]

use super::{Action, Arrival, Choice, Control, Edit, Effect, Nav, Outcome, Probe, Prompt, Search};
use crate::collect::refresh::GpuUpdate;
use crate::engine::Answer;
use crate::engine::classify::LogText;
use crate::snapshot::{HostSnapshot, IpcProbe, P2pProbe, Probed, PythonStack};
use crate::tui::state::{Pane, ScrollBy};
use ratatui::crossterm::event::MouseEvent;

impl Action {
    pub const Quit: Action = Action::Control(Control::Quit);
    pub const Interrupt: Action = Action::Control(Control::Interrupt);
    pub const QuitNow: Action = Action::Control(Control::QuitNow);
    pub const ToggleHelp: Action = Action::Control(Control::ToggleHelp);
    pub const ToggleDetails: Action = Action::Control(Control::ToggleDetails);
    pub const Close: Action = Action::Control(Control::Close);
    pub const LoadDemo: Action = Action::Control(Control::LoadDemo);
    pub const NextPane: Action = Action::Nav(Nav::NextPane);
    pub const PrevPane: Action = Action::Nav(Nav::PrevPane);
    pub const NextClass: Action = Action::Nav(Nav::NextClass);
    pub const PrevClass: Action = Action::Nav(Nav::PrevClass);
    pub const OpenSelected: Action = Action::Nav(Nav::OpenSelected);
    pub const NextFinding: Action = Action::Nav(Nav::NextFinding);
    pub const PrevFinding: Action = Action::Nav(Nav::PrevFinding);
    pub const SelectNext: Action = Action::Nav(Nav::SelectNext);
    pub const SelectPrev: Action = Action::Nav(Nav::SelectPrev);
    pub const NextMatch: Action = Action::Nav(Nav::NextMatch);
    pub const PrevMatch: Action = Action::Nav(Nav::PrevMatch);
    pub const Undo: Action = Action::Choice(Choice::Undo);
    pub const StartOnboarding: Action = Action::Choice(Choice::StartOnboarding);
    pub const ChooseRemedy: Action = Action::Choice(Choice::ChooseRemedy);
    pub const PickRemedy: Action = Action::Choice(Choice::PickRemedy);
    pub const OpenSearch: Action = Action::Search(Search::Open);
    pub const SearchBackspace: Action = Action::Search(Search::Backspace);
    pub const SearchSubmit: Action = Action::Search(Search::Submit);
    pub const SearchNext: Action = Action::Search(Search::Next);
    pub const SearchPrev: Action = Action::Search(Search::Prev);
    pub const Copy: Action = Action::Prompt(Prompt::Copy);
    pub const OpenExport: Action = Action::Prompt(Prompt::OpenExport);
    pub const OpenWriteLaunch: Action = Action::Prompt(Prompt::OpenWriteLaunch);
    pub const OpenLoadLog: Action = Action::Prompt(Prompt::OpenLoadLog);
    pub const ToggleFormat: Action = Action::Prompt(Prompt::ToggleFormat);
    pub const PromptBackspace: Action = Action::Prompt(Prompt::Backspace);
    pub const PromptClear: Action = Action::Prompt(Prompt::Clear);
    pub const PromptSubmit: Action = Action::Prompt(Prompt::Submit);
    pub const ConfirmYes: Action = Action::Prompt(Prompt::ConfirmYes);
    pub const ConfirmNo: Action = Action::Prompt(Prompt::ConfirmNo);
    pub const ApplyEdit: Action = Action::Edit(Edit::Apply);
    pub const StartEdit: Action = Action::Edit(Edit::Start);
    pub const ClearPasted: Action = Action::Edit(Edit::ClearPasted);
    pub const RestorePasted: Action = Action::Edit(Edit::RestorePasted);
    pub const RunProbe: Action = Action::Probe(Probe::RunIpc);
    pub const RunP2pProbe: Action = Action::Probe(Probe::RunP2p);
    pub const Start: Action = Action::Arrival(Arrival::Start);

    pub fn HelpScroll(by: ScrollBy) -> Action {
        Action::Control(Control::HelpScroll(by))
    }
    pub fn Resize(w: u16, h: u16) -> Action {
        Action::Control(Control::Resize(w, h))
    }
    pub fn Mouse(m: MouseEvent) -> Action {
        Action::Control(Control::Mouse(m))
    }
    pub fn ShowPane(p: Pane) -> Action {
        Action::Nav(Nav::ShowPane(p))
    }
    pub fn ShowClass(i: usize) -> Action {
        Action::Nav(Nav::ShowClass(i))
    }
    pub fn OpenWalk(i: usize) -> Action {
        Action::Nav(Nav::OpenWalk(i))
    }
    pub fn Scroll(by: ScrollBy) -> Action {
        Action::Nav(Nav::Scroll(by))
    }
    pub fn Answer(a: Answer) -> Action {
        Action::Choice(Choice::Answer(a))
    }
    pub fn PickRemedyAt(i: usize) -> Action {
        Action::Choice(Choice::PickRemedyAt(i))
    }
    pub fn SearchChar(c: char) -> Action {
        Action::Search(Search::Char(c))
    }
    pub fn PromptChar(c: char) -> Action {
        Action::Prompt(Prompt::Char(c))
    }
    pub fn Paste(text: String) -> Action {
        Action::Edit(Edit::Paste(text))
    }
    pub fn ProbeDone(p: Box<IpcProbe>) -> Action {
        Action::Probe(Probe::IpcDone(p))
    }
    pub fn P2pProbeDone(p: Box<P2pProbe>) -> Action {
        Action::Probe(Probe::P2pDone(p))
    }
    pub fn HostCollected(s: Box<HostSnapshot>) -> Action {
        Action::Arrival(Arrival::Host(s))
    }
    pub fn PythonCollected(p: Box<Probed<PythonStack>>) -> Action {
        Action::Arrival(Arrival::Python(p))
    }
    pub fn Gpu(u: GpuUpdate) -> Action {
        Action::Arrival(Arrival::Gpu(u))
    }
    pub fn LiveSource(label: String) -> Action {
        Action::Arrival(Arrival::LiveSource(label))
    }
    pub fn Done(msg: String) -> Action {
        Action::Outcome(Outcome::Done(msg))
    }
    pub fn Copied(msg: String) -> Action {
        Action::Outcome(Outcome::Copied(msg))
    }
    pub fn Exported(msg: String) -> Action {
        Action::Outcome(Outcome::Exported(msg))
    }
    pub fn AskOverwrite(e: Effect) -> Action {
        Action::Outcome(Outcome::AskOverwrite(e))
    }
    pub fn LogLoaded(log: LogText) -> Action {
        Action::Outcome(Outcome::LogLoaded(log))
    }
}
