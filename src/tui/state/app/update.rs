//! The dispatcher: one call per group of actions, and one handler per group that calls into the
//! handlers grouped by concern beside it.

use super::*;

impl App {
    /// Apply one action; return the side effects for the loop.
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Control(a) => self.on_control(a),
            Action::Nav(a) => self.on_nav(a),
            Action::Choice(a) => self.on_choice(a),
            Action::Search(a) => self.on_search(a),
            Action::Prompt(a) => self.on_prompt(a),
            Action::Edit(a) => self.on_edit(a),
            Action::Probe(a) => self.on_probe(a),
            Action::Arrival(a) => self.on_arrival(a),
            Action::Outcome(a) => self.on_outcome(a),
            Action::Failed(msg) => {
                self.failed(msg);
                Vec::new()
            }
            Action::Explain(why) => {
                self.explain(why);
                Vec::new()
            }
            Action::EditKey(key) => {
                self.edit_key(key);
                Vec::new()
            }
        }
    }

    fn on_control(&mut self, action: act::Control) -> Vec<Effect> {
        match action {
            act::Control::Quit | act::Control::Interrupt => self.quit_or_ask(),
            act::Control::QuitNow => self.quit_now(),
            act::Control::ToggleHelp => self.toggle_help(),
            act::Control::HelpScroll(by) => self.scroll_help(by),
            act::Control::ToggleDetails => self.toggle_details(),
            act::Control::Close => self.close(),
            act::Control::Resize(w, h) => self.resize(w, h),
            act::Control::Mouse(m) => return self.mouse(m),
            act::Control::LoadDemo => return self.load_demo(),
        }
        Vec::new()
    }

    fn on_nav(&mut self, action: act::Nav) -> Vec<Effect> {
        match action {
            act::Nav::ShowPane(p) => self.show_pane(p),
            act::Nav::NextPane => self.step_pane(true),
            act::Nav::PrevPane => self.step_pane(false),
            act::Nav::NextClass => self.step_class(true),
            act::Nav::PrevClass => self.step_class(false),
            act::Nav::ShowClass(i) => self.show_class(i),
            act::Nav::OpenWalk(i) => self.open_walk(i),
            act::Nav::OpenSelected => return self.open_selected(),
            act::Nav::NextFinding => self.step_finding(true),
            act::Nav::PrevFinding => self.step_finding(false),
            act::Nav::SelectNext => self.step_remedy(true),
            act::Nav::SelectPrev => self.step_remedy(false),
            act::Nav::Scroll(by) => self.scroll_by(by),
            act::Nav::NextMatch => self.jump_match(true),
            act::Nav::PrevMatch => self.jump_match(false),
        }
        Vec::new()
    }

    fn on_choice(&mut self, action: act::Choice) -> Vec<Effect> {
        match action {
            act::Choice::Answer(a) => self.answer(a),
            act::Choice::Undo => {
                self.undo();
                Vec::new()
            }
            act::Choice::StartOnboarding => self.start_onboarding(),
            act::Choice::ChooseRemedy => {
                self.choose_remedy();
                Vec::new()
            }
            act::Choice::PickRemedy => self.pick_remedy(),
            act::Choice::PickRemedyAt(i) => self.pick_remedy_at(i),
        }
    }

    fn on_search(&mut self, action: act::Search) -> Vec<Effect> {
        match action {
            act::Search::Open => self.open_search(),
            act::Search::Char(c) => self.search_char(c),
            act::Search::Backspace => self.search_backspace(),
            act::Search::Submit => self.search_submit(),
            act::Search::Next => self.search_step(true),
            act::Search::Prev => self.search_step(false),
        }
        Vec::new()
    }

    fn on_prompt(&mut self, action: act::Prompt) -> Vec<Effect> {
        match action {
            act::Prompt::Copy => return self.copy_fix(),
            act::Prompt::OpenExport => self.open_export(),
            act::Prompt::OpenWriteLaunch => return self.open_write_launch(),
            act::Prompt::OpenLoadLog => self.open_load_log(),
            act::Prompt::ToggleFormat => self.toggle_format(),
            act::Prompt::Char(c) => self.prompt_char(c),
            act::Prompt::Backspace => self.prompt_backspace(),
            act::Prompt::Clear => self.prompt_clear(),
            act::Prompt::Submit => return self.submit_prompt(),
            act::Prompt::ConfirmYes => return self.confirm_yes(),
            act::Prompt::ConfirmNo => self.confirm_no(),
        }
        Vec::new()
    }

    fn on_edit(&mut self, action: act::Edit) -> Vec<Effect> {
        match action {
            act::Edit::Apply => return self.apply_edit(),
            act::Edit::Start => self.start_edit(),
            act::Edit::ClearPasted => self.clear_pasted(),
            act::Edit::RestorePasted => self.restore_pasted(),
            act::Edit::Paste(text) => self.paste(text),
        }
        Vec::new()
    }

    fn on_probe(&mut self, action: act::Probe) -> Vec<Effect> {
        match action {
            act::Probe::RunIpc => self.run_probe(),
            act::Probe::IpcDone(result) => self.probe_done(result),
            act::Probe::RunP2p => self.run_p2p_probe(),
            act::Probe::P2pDone(result) => self.p2p_probe_done(result),
        }
    }

    fn on_arrival(&mut self, action: act::Arrival) -> Vec<Effect> {
        match action {
            act::Arrival::Start => return self.start(),
            act::Arrival::Host(snap) => return self.host_collected(*snap),
            act::Arrival::Python(python) => return self.python_collected(python),
            act::Arrival::Gpu(update) => self.gpu_update(update),
            act::Arrival::LiveSource(label) => self.live_source(label),
        }
        Vec::new()
    }

    fn on_outcome(&mut self, action: act::Outcome) -> Vec<Effect> {
        match action {
            act::Outcome::Done(msg) => self.done(msg),
            act::Outcome::Copied(msg) => self.copied(msg),
            act::Outcome::Exported(msg) => self.exported(msg),
            act::Outcome::AskOverwrite(effect) => self.ask_overwrite(effect),
            act::Outcome::LogLoaded(log) => self.log_loaded(log),
        }
        Vec::new()
    }
}
