//! Moving around the App: the regions at the current size, scrolling each pane (the log pane
//! by logical line, the others by row, none past its end), the log's matched lines and search,
//! and mouse clicks and the wheel. Another `impl App` block beside `app/`, so the state
//! changes stay pure and testable without a terminal.

use crate::tui::state::action::{self as act, Action, Effect};
use crate::tui::state::app::App;
use crate::tui::state::words;
use crate::tui::state::{Pane, Screen, ScrollBy, Search, Target};
use crate::tui::view::measure::{self, Regions, Row};
use ratatui::crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Position;

/// Rows the mouse wheel scrolls.
const WHEEL_ROWS: isize = 3;

impl App {
    /// The screen's regions at the current size (as the renderer lays them out).
    pub fn regions(&self) -> Regions {
        measure::regions(self)
    }

    /// The log pane's top row, clamped so the last page ends at the last line.
    pub(crate) fn log_top(&self, width: usize, height: usize) -> usize {
        let top = self.scroll.get(Pane::Log);
        if top == 0 {
            return 0;
        }
        top.min(measure::log_last_top(self, width, height))
    }

    /// Apply a scroll request to the pane in view.
    pub(in crate::tui) fn scroll_by(&mut self, by: ScrollBy) {
        let r = self.regions();
        let (width, height) = (usize::from(r.rows.width), usize::from(r.rows.height).max(1));
        if self.pane == Pane::Log {
            let last = measure::log_last_top(self, width, height);
            let top = self.log_top(width, height);
            let next = match by {
                ScrollBy::Top => 0,
                ScrollBy::Bottom => last,
                ScrollBy::Lines(n) => top.saturating_add_signed(n),
                ScrollBy::Pages(n) if n > 0 => {
                    top + measure::log_fit(self, top, width, height) * n.unsigned_abs()
                }
                ScrollBy::Pages(n) => {
                    let mut t = top;
                    for _ in 0..n.unsigned_abs() {
                        t = measure::log_top_ending_at(self, t, width, height);
                    }
                    t
                }
            };
            self.scroll.set(Pane::Log, next.min(last));
            return;
        }
        let total = self.pane_rows(width).len();
        let last = total.saturating_sub(height);
        let top = self.scroll.get(self.pane);
        self.scroll.set(self.pane, scrolled(top, last, height, by));
    }

    /// The scrolling rows of the pane in view (not the log pane) at `width`.
    pub fn pane_rows(&self, width: usize) -> Vec<Row<'_>> {
        measure::pane_rows(self, width)
    }

    /// Scroll the help overlay, within its rows at the current size.
    pub(in crate::tui) fn scroll_help(&mut self, by: ScrollBy) {
        let body = self.regions().body;
        let (total, height) = measure::help_rows(body);
        let last = total.saturating_sub(height);
        self.help_scroll = scrolled(self.help_scroll, last, height, by);
    }

    /// After a pick, show the plan it changed (below the remedies in the Remedy pane).
    pub(in crate::tui) fn scroll_to_plan(&mut self) {
        let width = usize::from(self.regions().rows.width);
        let row = measure::plan_row(self, width);
        self.scroll.set(Pane::Remedy, row);
    }

    /// Jump the log pane to a row: focus it and show it with two rows above.
    pub(in crate::tui) fn show_log_row(&mut self, row: usize) {
        self.log_focus = Some(row);
        self.scroll.set(Pane::Log, row.saturating_sub(2));
    }

    /// Where a log row is, for the status line: "the pasted log line 29,998".
    fn log_row_label(&self, row: usize) -> String {
        match self.log_index.rows.get(row) {
            Some(crate::tui::state::logindex::RowRef::Line(i, n)) => format!(
                "{} line {}",
                words::log_name(&self.logs()[*i].name),
                words::thousands(n + 1)
            ),
            _ => String::new(),
        }
    }

    pub(in crate::tui) fn jump_match(&mut self, forward: bool) {
        let m = &self.log_index.matched;
        if m.is_empty() {
            self.status = "no matched line in the logs".into();
            return;
        }
        let here = self.log_focus.unwrap_or(self.scroll.get(Pane::Log));
        let k = if forward {
            m.iter().position(|&r| r > here).unwrap_or(0)
        } else {
            m.iter().rposition(|&r| r < here).unwrap_or(m.len() - 1)
        };
        let (row, n) = (m[k], m.len());
        self.show_log_row(row);
        self.status = format!("matched line {} of {n}: {}", k + 1, self.log_row_label(row)).into();
    }

    pub(in crate::tui) fn search_step(&mut self, forward: bool) {
        let Some(s) = &mut self.search else {
            return;
        };
        if s.hits.is_empty() {
            return;
        }
        let n = s.hits.len();
        s.current = if forward {
            (s.current + 1) % n
        } else {
            (s.current + n - 1) % n
        };
        let (row, k, q) = (s.hits[s.current], s.current, s.query.clone());
        self.show_log_row(row);
        self.status = format!("/{q}: hit {} of {n}, {}", k + 1, self.log_row_label(row)).into();
    }

    pub(in crate::tui) fn run_search(&mut self, query: String) {
        if query.is_empty() {
            self.search = None;
            self.status = "search cleared".into();
            return;
        }
        let hits = self.log_index.search(self.logs(), &query);
        let here = self.log_focus.unwrap_or(self.scroll.get(Pane::Log));
        let current = hits.iter().position(|&r| r >= here).unwrap_or(0);
        self.status = match hits.get(current) {
            Some(&row) => {
                self.show_log_row(row);
                format!(
                    "/{query}: {} line(s); hit {} of {}, {} (n/N: next/previous)",
                    hits.len(),
                    current + 1,
                    hits.len(),
                    self.log_row_label(row)
                )
            }
            None => format!("/{query}: no line contains it"),
        }
        .into();
        self.search = Some(Search {
            query,
            hits,
            current,
        });
    }

    /// A mouse event: clicks on tabs, class marks, remedies and findings; the wheel scrolls
    /// the pane under the pointer.
    pub(in crate::tui) fn mouse(&mut self, m: MouseEvent) -> Vec<Effect> {
        if self.overlay.is_some() || self.editing.is_some() || self.screen != Screen::Main {
            return Vec::new();
        }
        let r = self.regions();
        let at = Position::new(m.column, m.row);
        match m.kind {
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp if r.pane.contains(at) => {
                let n = if m.kind == MouseEventKind::ScrollDown {
                    WHEEL_ROWS
                } else {
                    -WHEEL_ROWS
                };
                self.scroll_by(ScrollBy::Lines(n));
                Vec::new()
            }
            MouseEventKind::Down(MouseButton::Left) => match measure::hit(self, &r, at) {
                Some(t) => self.click(t),
                None => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    fn click(&mut self, t: Target) -> Vec<Effect> {
        match t {
            Target::Tab(p) => self.update(Action::Nav(act::Nav::ShowPane(p))),
            Target::Class(i) => self.update(Action::Nav(act::Nav::ShowClass(i))),
            Target::Remedy(i) => self.update(Action::Choice(act::Choice::PickRemedyAt(i))),
            Target::Finding(w) => self.update(Action::Nav(act::Nav::OpenWalk(w))),
        }
    }
}

/// The new top row of a view `height` rows tall whose last top row is `last`: a page keeps one
/// row of the old page in view, so the reader does not lose their place.
fn scrolled(top: usize, last: usize, height: usize, by: ScrollBy) -> usize {
    let top = top.min(last);
    let next = match by {
        ScrollBy::Top => 0,
        ScrollBy::Bottom => last,
        ScrollBy::Lines(n) => top.saturating_add_signed(n),
        ScrollBy::Pages(n) => top.saturating_add_signed(n * height.max(2) as isize - n.signum()),
    };
    next.min(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrolling_stays_between_the_top_and_the_last_top_row() {
        assert_eq!(scrolled(5, 40, 10, ScrollBy::Lines(1)), 6);
        assert_eq!(scrolled(5, 40, 10, ScrollBy::Lines(-9)), 0);
        assert_eq!(scrolled(35, 40, 10, ScrollBy::Lines(9)), 40);
        // A page down keeps the old page's last row: 10 rows tall moves 9.
        assert_eq!(scrolled(0, 40, 10, ScrollBy::Pages(1)), 9);
        assert_eq!(scrolled(20, 40, 10, ScrollBy::Pages(-1)), 11);
        assert_eq!(scrolled(38, 40, 10, ScrollBy::Pages(1)), 40);
        assert_eq!(scrolled(17, 40, 10, ScrollBy::Top), 0);
        assert_eq!(scrolled(0, 40, 10, ScrollBy::Bottom), 40);
        // A top row past the end (the content shrank) is brought back first.
        assert_eq!(scrolled(90, 40, 10, ScrollBy::Lines(0)), 40);
    }
}
