//! The live GPU panel: per GPU name, compute capability with the SM120 mark, memory bar,
//! utilisation, temperature, power, PCIe link; GPU pairs; driver and CUDA versions.

use crate::snapshot::{Gpu, Probed};
use crate::tui::state::app::App;
use crate::tui::view::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

/// `[████░░░░]`-style bar of `width` cells for `used/total`.
pub fn bar(used: u64, total: u64, width: usize) -> String {
    if total == 0 || width == 0 {
        return "░".repeat(width);
    }
    let filled = ((used.min(total) as f64 / total as f64) * width as f64).round() as usize;
    format!("{}{}", "█".repeat(filled), "░".repeat(width - filled))
}

fn opt<T: std::fmt::Display>(p: &Probed<T>, unit: &str) -> String {
    match p.value() {
        Some(v) => format!("{v}{unit}"),
        None => "—".into(),
    }
}

fn gib(mib: u64) -> String {
    format!("{:.1}", mib as f64 / 1024.0)
}

pub(crate) fn gpu_lines<'a>(g: &Gpu, width: usize, theme: Theme) -> Vec<Line<'a>> {
    let name = g
        .name
        .value()
        .cloned()
        .unwrap_or_else(|| "unknown GPU".into());
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("GPU{} ", g.index), theme.accent()),
        Span::styled(name, theme.title()),
    ])];
    let mut l2 = vec![Span::raw(" CC ")];
    match g.compute_capability.value() {
        Some(cc) => {
            l2.push(Span::raw(cc.to_string()));
            if cc.is_sm12x() {
                l2.push(Span::raw(" "));
                l2.push(Span::styled(
                    format!(" SM{}{} ", cc.major, cc.minor),
                    theme.sm120(),
                ));
            } else {
                l2.push(Span::styled(" (not SM120)", theme.dim()));
            }
        }
        None => l2.push(Span::styled("unknown", theme.dim())),
    }
    let pcie = match g.pcie.value() {
        Some(p) => format!("  PCIe gen{} x{}", p.gen_current, p.width_current),
        None => "  PCIe —".into(),
    };
    l2.push(Span::raw(pcie));
    lines.push(Line::from(l2));
    let power = match (g.power_w.value(), g.power_limit_w.value()) {
        (Some(p), Some(l)) => format!("{p:.0}/{l:.0} W"),
        (None, Some(l)) => format!("—/{l:.0} W"),
        (Some(p), None) => format!("{p:.0} W"),
        (None, None) => "— W".into(),
    };
    lines.push(Line::from(format!(
        " util {}  temp {}  power {}",
        opt(&g.utilization_pct, "%"),
        opt(&g.temperature_c, "°C"),
        power
    )));
    let mem = match (g.memory_used_mib.value(), g.memory_total_mib.value()) {
        (Some(u), Some(t)) => {
            let text = format!(" {}/{} GiB", gib(*u), gib(*t));
            let w = width.saturating_sub(6 + text.chars().count()).clamp(4, 30);
            Line::from(vec![
                Span::raw(" mem "),
                Span::styled(bar(*u, *t, w), theme.bar_full()),
                Span::raw(text),
            ])
        }
        (None, Some(t)) => Line::from(format!(" mem —/{} GiB", gib(*t))),
        _ => Line::from(Span::styled(" mem —", theme.dim())),
    };
    lines.push(mem);
    lines
}

pub fn lines<'a>(app: &App, width: usize, theme: Theme) -> Vec<Line<'a>> {
    let snap = &app.snapshot;
    let mut out = Vec::new();
    match &snap.gpus {
        Probed::Value(gpus) if gpus.is_empty() => out.push(Line::from("no GPUs reported")),
        Probed::Value(gpus) => {
            for g in gpus {
                out.extend(gpu_lines(g, width, theme));
            }
        }
        other => out.push(Line::from(Span::styled(
            format!("GPUs: {}", other.why_or("unknown")),
            theme.dim(),
        ))),
    }
    if let Some(pairs) = snap.gpu_pairs.value() {
        for p in pairs {
            let yn = |x: &Probed<bool>| match x.value() {
                Some(true) => "yes",
                Some(false) => "no",
                None => "?",
            };
            out.push(Line::from(format!(
                "GPU{}↔GPU{} {}  P2P {}  NVLink {}",
                p.a,
                p.b,
                p.topology.value().map_or("?", String::as_str),
                yn(&p.p2p),
                yn(&p.nvlink)
            )));
        }
    }
    let driver = match snap.driver.value() {
        Some(d) => format!(
            "driver {}{} · CUDA {}",
            opt(&d.version, ""),
            d.kernel_module
                .value()
                .map(|k| format!(" ({k})"))
                .unwrap_or_default(),
            opt(&d.cuda_driver_version, "")
        ),
        None => format!("driver: {}", snap.driver.why_or("unknown")),
    };
    out.push(Line::from(driver));
    out
}

pub(crate) fn height(app: &App) -> u16 {
    let gpus = app
        .snapshot
        .gpus
        .value()
        .map_or(1, |g| (g.len() * 4).max(1));
    let pairs = app.snapshot.gpu_pairs.value().map_or(0, Vec::len);
    (gpus + pairs + 1 + 2) as u16
}

/// The panel's title: where the numbers come from (live, the demo's simulation, or a
/// recording that does not change).
pub fn title(app: &App) -> String {
    if !app.live.source.is_empty() {
        format!(
            " GPUs · {} · {} updates ",
            app.live.source, app.live.updates
        )
    } else if app.snapshot.origin.is_live() || app.snapshot.origin.is_demo() {
        " GPUs ".into()
    } else {
        " GPUs · recorded, not live ".into()
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let width = area.width.saturating_sub(2) as usize;
    let block = Block::default()
        .borders(Borders::ALL)
        .title(crate::tui::view::text::ellipsize(&title(app), width));
    let mut l = lines(app, width, theme);
    if let Some(e) = &app.live.last_error {
        l.push(Line::from(Span::styled(
            format!("refresh: {e}"),
            theme.dim(),
        )));
    }
    let l: Vec<Line> = l
        .into_iter()
        .map(|x| crate::tui::view::text::cut_line(x, width))
        .collect();
    frame.render_widget(Paragraph::new(l).block(block), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_fills_in_proportion() {
        assert_eq!(bar(0, 100, 4), "░░░░");
        assert_eq!(bar(50, 100, 4), "██░░");
        assert_eq!(bar(200, 100, 4), "████");
        assert_eq!(bar(1, 0, 3), "░░░");
    }

    #[test]
    fn sm120_gpu_is_marked() {
        let app = App::demo();
        let g = &app.snapshot.gpus.value().expect("gpus")[0];
        let text: Vec<String> = gpu_lines(g, 40, Theme::new(false))
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert!(text[1].contains("CC 12.0  SM120 "), "{text:?}");
        assert!(text[1].contains("PCIe gen5 x16"), "{text:?}");
    }
}
