//! Where everything goes, as a pure function of the screen size and the state, so the
//! renderer, the scroll keys and mouse clicks use the same rectangles.
//!
//! What gives way first when the screen is small: the side panels (GPUs, environment)
//! collapse below [`SIDE_MIN_WIDTH`] columns, so the pane keeps the width; the header keeps
//! the counts and the verdict line keeps the verdict (the host name is cut first); the footer
//! shortens hints before it drops any (see `keymap`).

use crate::tui::state::app::App;
use crate::tui::state::{EditTarget, Pane, Screen, Target};
use ratatui::layout::{Constraint, Layout, Position, Rect};

/// Below this width the GPU and environment panels collapse and the pane takes the width.
pub const SIDE_MIN_WIDTH: u16 = 110;

/// The screen's regions. `rows` is the pane's scrolling part; `fixed` the part above it that
/// stays (the walk's class bar, the log's matched line).
#[derive(Debug, Clone, PartialEq)]
pub struct Regions {
    pub header: Rect,
    pub verdict: Rect,
    pub body: Rect,
    pub status: Rect,
    pub keys: Rect,
    /// GPU and environment panels, when the screen is wide enough.
    pub side: Option<(Rect, Rect)>,
    /// The pane's block (border included) and its inside.
    pub pane: Rect,
    pub inner: Rect,
    pub fixed: Rect,
    pub rows: Rect,
    /// The launch editor (Remedy pane).
    pub editor: Option<Rect>,
    /// The tab labels on the pane's top border.
    pub tabs: Vec<(Rect, Pane)>,
}

/// The side panels' width, when they are shown.
fn side_width(area: Rect) -> Option<u16> {
    (area.width >= SIDE_MIN_WIDTH).then(|| (area.width * 2 / 5).clamp(36, 70))
}

/// The launch editor's height: one line when the pane is short and nobody edits, up to a
/// third of the pane (half while editing).
fn editor_height(app: &App, inner: Rect) -> u16 {
    let lines = app.launch_editor.lines().len() as u16 + 2;
    if app.editing == Some(EditTarget::Launch) {
        lines.clamp(4, (inner.height / 2).max(4))
    } else if inner.height < 24 {
        3
    } else {
        lines.clamp(3, (inner.height / 3).max(3))
    }
}

pub fn regions(area: Rect, app: &App) -> Regions {
    let [header, verdict, body, status, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let (side, pane) = match side_width(body) {
        Some(w) if app.screen != Screen::NoHost => {
            let [left, right] =
                Layout::horizontal([Constraint::Length(w), Constraint::Min(0)]).areas(body);
            let gpu_h = crate::tui::view::gpu::height(app).min(left.height.saturating_sub(6));
            let [gpu, env] =
                Layout::vertical([Constraint::Length(gpu_h), Constraint::Min(0)]).areas(left);
            (Some((gpu, env)), right)
        }
        _ => (None, body),
    };
    let inner = Rect {
        x: pane.x + 1,
        y: pane.y + 1,
        width: pane.width.saturating_sub(2),
        height: pane.height.saturating_sub(2),
    };
    let fixed_h = match app.pane {
        Pane::Walk => crate::tui::view::walk::bar_height(app, inner.width),
        Pane::Log => 1,
        Pane::Summary | Pane::Remedy => 0,
    }
    .min(inner.height);
    let editor_h = if app.pane == Pane::Remedy {
        editor_height(app, inner).min(inner.height.saturating_sub(fixed_h + 2))
    } else {
        0
    };
    let [fixed, rows, editor] = Layout::vertical([
        Constraint::Length(fixed_h),
        Constraint::Min(0),
        Constraint::Length(editor_h),
    ])
    .areas(inner);
    let mut tabs = Vec::new();
    let mut x = pane.x + 2;
    for p in Pane::ALL {
        let w = p.title().chars().count() as u16 + 2;
        if x + w > pane.right() {
            break;
        }
        tabs.push((Rect::new(x, pane.y, w, 1), p));
        x += w + 1;
    }
    Regions {
        header,
        verdict,
        body,
        status,
        keys,
        side,
        pane,
        inner,
        fixed,
        rows,
        editor: (editor_h > 0).then_some(editor),
        tabs,
    }
}

/// What a click at `at` means on the main screen.
pub fn hit(app: &App, r: &Regions, at: Position) -> Option<Target> {
    if let Some((_, p)) = r.tabs.iter().find(|(rect, _)| rect.contains(at)) {
        return Some(Target::Tab(*p));
    }
    if r.fixed.contains(at) && app.pane == Pane::Walk {
        let line = usize::from(at.y - r.fixed.y);
        let col = at.x - r.fixed.x;
        return crate::tui::view::walk::chips(app, r.fixed.width)
            .into_iter()
            .find(|c| c.line == line && (c.x..c.x + c.width).contains(&col))
            .map(|c| Target::Class(c.walk));
    }
    if r.rows.contains(at) && app.pane != Pane::Log {
        let width = usize::from(r.rows.width);
        let rows = app.pane_rows(width);
        let height = usize::from(r.rows.height);
        let top = app
            .scroll
            .get(app.pane)
            .min(rows.len().saturating_sub(height));
        return rows
            .get(top + usize::from(at.y - r.rows.y))
            .and_then(|row| row.target);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::state::action::Action;

    #[test]
    fn narrow_screens_collapse_the_side_panels_first() {
        let app = App::demo();
        let wide = regions(Rect::new(0, 0, 200, 50), &app);
        assert!(wide.side.is_some());
        let narrow = regions(Rect::new(0, 0, 80, 24), &app);
        assert!(narrow.side.is_none());
        assert_eq!(narrow.pane.width, 80);
        assert_eq!(narrow.tabs.len(), 4, "every tab fits at 80 columns");
    }

    #[test]
    fn tabs_are_where_the_border_draws_them() {
        let mut app = App::demo();
        let r = regions(Rect::new(0, 0, 80, 24), &app);
        let (rect, p) = r.tabs[2];
        assert_eq!(p, Pane::Log);
        assert_eq!(
            hit(&app, &r, Position::new(rect.x + 1, rect.y)),
            Some(Target::Tab(Pane::Log))
        );
        app.update(Action::ShowPane(Pane::Remedy));
        let r = regions(Rect::new(0, 0, 80, 24), &app);
        assert_eq!(
            r.editor.map(|e| e.height),
            Some(3),
            "one line of the command"
        );
    }
}
