//! Styles. Under `NO_COLOR` every distinction is made with bold/reverse/underline only.

use crate::kb::schema::Severity;
use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    pub fn new(color: bool) -> Theme {
        Theme { color }
    }
    fn pick(&self, colored: Style, plain: Style) -> Style {
        if self.color { colored } else { plain }
    }
    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    pub(crate) fn dim(&self) -> Style {
        self.pick(Style::new().fg(Color::DarkGray), Style::new())
    }
    pub(crate) fn accent(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
    /// The SM120 mark next to a compute capability.
    pub fn sm120(&self) -> Style {
        self.pick(
            Style::new()
                .fg(Color::Black)
                .bg(Color::Magenta)
                .add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )
    }
    /// A value a finding used (env var, log line).
    pub fn used(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        )
    }
    pub(crate) fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }
    pub fn severity(&self, s: Severity) -> Style {
        let c = match s {
            Severity::Error => Color::Red,
            Severity::Warning => Color::Yellow,
            Severity::Info => Color::Blue,
            Severity::Ok => Color::Green,
        };
        self.pick(
            Style::new().fg(c).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
    pub fn question(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
    pub(crate) fn bar_full(&self) -> Style {
        self.pick(Style::new().fg(Color::Green), Style::new())
    }
}

/// The mark of a finding: its severity's for a problem; otherwise one glyph per state, so a
/// check that did not run never shows as ✓ (text, so it survives NO_COLOR and screen captures).
pub(crate) fn finding_mark(f: &crate::engine::Finding) -> &'static str {
    use crate::engine::CheckState;
    match f.state {
        CheckState::Problem => mark(f.severity),
        CheckState::Passed => "✓",
        CheckState::NotChecked => "○",
        CheckState::NotApplicable => "–",
    }
}

/// The mark shown for a severity (text, so it survives NO_COLOR and screen captures).
pub fn mark(s: Severity) -> &'static str {
    match s {
        Severity::Error => "✗",
        Severity::Warning => "!",
        Severity::Info => "i",
        Severity::Ok => "✓",
    }
}
