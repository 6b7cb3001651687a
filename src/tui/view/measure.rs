//! What the state floor may ask the view: the screen's geometry as it is drawn (the regions,
//! the rows each pane wraps into, where the log's pages end), so scrolling and mouse clicks
//! agree with the picture. The only view module the state imports (tests/layering.rs); nothing
//! here draws.

use crate::tui::state::Target;
use crate::tui::state::app::App;
use crate::tui::state::types::Pane;
use crate::tui::view::theme::Theme;
use crate::tui::view::{help, layout, log, remedy, summary, text, walk};
use ratatui::layout::{Position, Rect};

pub use layout::Regions;
pub use text::Row;

/// The screen's regions at the app's size (as the renderer lays them out).
pub fn regions(app: &App) -> Regions {
    layout::regions(Rect::new(0, 0, app.size.0, app.size.1), app)
}

/// What a click at `at` lands on, if anything.
pub fn hit(app: &App, r: &Regions, at: Position) -> Option<Target> {
    layout::hit(app, r, at)
}

/// The scrolling rows of the pane in view (not the log pane) at `width`.
pub fn pane_rows(app: &App, width: usize) -> Vec<Row<'_>> {
    let theme = Theme::new(false);
    let paras = match app.pane {
        Pane::Summary => summary::paras(app, theme),
        Pane::Walk => walk::paras(app, theme),
        Pane::Remedy => remedy::paras(app, theme),
        Pane::Log => Vec::new(),
    };
    text::wrap(paras, width)
}

/// The help's rows in all and the rows it shows, in the body region `area`.
pub(crate) fn help_rows(area: Rect) -> (usize, usize) {
    help::rows(area)
}

/// The Remedy pane's row where the plan starts, at `width`.
pub(crate) fn plan_row(app: &App, width: usize) -> usize {
    remedy::plan_row(app, width)
}

/// How many log rows from `top` fit in `height` rows of `width` columns.
pub(crate) fn log_fit(app: &App, top: usize, width: usize, height: usize) -> usize {
    log::fit(app, top, width, height)
}

/// The log's top row for a page that ends just above `end`.
pub(crate) fn log_top_ending_at(app: &App, end: usize, width: usize, height: usize) -> usize {
    log::top_ending_at(app, end, width, height)
}

/// The log's last top row: its last page ends at its last line.
pub(crate) fn log_last_top(app: &App, width: usize, height: usize) -> usize {
    log::last_top(app, width, height)
}
