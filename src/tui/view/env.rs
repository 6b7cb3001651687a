//! The environment panel: Python stack versions and the variables that matter, highlighted
//! when a finding used them.

use crate::engine::Finding;
use crate::facts::Facts;
use crate::kb::schema::{AllocPanel, fill_text};
use crate::snapshot::{Environment, Probed, env_var_matters};
use crate::tui::state::app::App;
use crate::tui::view::theme::Theme;
use crate::value::Value;
use crate::vllm::alloc_conf::{self, EXPANDABLE_SEGMENTS, Precedence, Switch};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use std::collections::BTreeSet;

/// Variable names the findings used: `env.X` → X, `alloc.*` → the allocator variables.
pub(crate) fn used_vars(findings: &[Finding]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for f in findings {
        for name in &f.facts_used {
            if let Some(v) = name.strip_prefix("env.") {
                out.insert(v.to_string());
            } else if name.starts_with("alloc.") {
                out.extend(alloc_conf::VARS.iter().map(|s| s.to_string()));
            }
        }
    }
    out
}

/// `width` is the inner width: a `NAME=value` longer than that puts the value on its own line.
pub fn lines<'a>(app: &App, width: usize, theme: Theme) -> Vec<Line<'a>> {
    let snap = &app.snapshot;
    let used = used_vars(&app.diagnosis.findings);
    let mut out = Vec::new();
    let mut any_hit = false;
    if let Some(p) = snap.python.value() {
        let v = |x: &Probed<String>| x.value().cloned().unwrap_or_else(|| "—".into());
        out.push(Line::from(format!(
            "vLLM {} · torch {} (CUDA {})",
            v(&p.vllm),
            v(&p.torch),
            v(&p.torch_cuda)
        )));
    }
    let mut row = |name: &str, value: &str, origin: &str| {
        let hit = used.contains(name);
        any_hit |= hit;
        let mark = if hit { "◆ " } else { "  " };
        let style = if hit {
            theme.used()
        } else {
            ratatui::style::Style::new()
        };
        let full = format!("{mark}{name}={value}");
        if full.chars().count() + origin.len() <= width {
            out.push(Line::from(vec![
                Span::styled(full, style),
                Span::styled(origin.to_string(), theme.dim()),
            ]));
        } else {
            out.push(Line::from(vec![
                Span::styled(format!("{mark}{name}="), style),
                Span::styled(origin.to_string(), theme.dim()),
            ]));
            out.push(Line::from(Span::styled(format!("    {value}"), style)));
        }
    };
    match &snap.env {
        Probed::Value(env) => {
            for (k, v) in env.vars.iter().filter(|(k, _)| env_var_matters(k)) {
                row(k, v, "");
            }
        }
        other => row("(environment)", &other.why_or("unknown"), ""),
    }
    if let Some(l) = snap.launch.value() {
        for (k, v) in &l.env {
            row(k, v, "  (launch)");
        }
    }
    for (text, invalid) in alloc_reading(
        &app.diagnosis.facts,
        &app.kb.allocator.panel,
        snap.env.value(),
    ) {
        let style = if invalid { theme.used() } else { theme.dim() };
        for part in wrap(&text, width) {
            out.push(Line::from(Span::styled(part, style)));
        }
    }
    if any_hit {
        out.push(Line::from(Span::styled("◆ used by a finding", theme.dim())));
    }
    out
}

/// `text` in lines of at most `width` characters, broken at spaces where it can be;
/// continuation lines are indented by two spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(8);
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let room = if out.is_empty() { width } else { width - 2 };
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > room {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push(line);
    out.into_iter()
        .enumerate()
        .map(|(i, l)| if i == 0 { l } else { format!("  {l}") })
        .collect()
}

/// How the engine reads the allocator variables, from the same facts (and the same
/// `alloc_conf` rule) that `check` and `fix` use: which variable is in effect, which one it
/// masks, and expandable_segments' verdict. Each line with whether it reports a value PyTorch
/// rejects. Nothing when no allocator variable is set or the environment is not known.
///
/// `host`: the collected environment (`None` while it is not known, when the panel shows
/// nothing about it); when it sets an allocator variable that does not reach the engine (a
/// container launch), or the engine's config is not known for another reason (an env file
/// not given), the panel says so.
pub(crate) fn alloc_reading(
    facts: &Facts,
    texts: &AllocPanel,
    host: Option<&Environment>,
) -> Vec<(String, bool)> {
    let host_sets_one =
        host.is_some_and(|h| alloc_conf::VARS.iter().any(|v| h.vars.contains_key(*v)));
    let say = |t: &crate::kb::schema::SpannedStr, vars: &[(&str, &str)]| fill_text(&t.value, vars);
    let conf_fact = facts.get("alloc.conf");
    let (Value::Str(var), Value::Str(conf)) =
        (facts.get("alloc.var").value, conf_fact.value.clone())
    else {
        return match conf_fact.value {
            Value::Unknown(reason) if host.is_some() => {
                let reason = crate::tui::state::words::reason(false, &reason);
                vec![(say(&texts.not_known, &[("reason", &reason)]), false)]
            }
            Value::Null if host_sets_one => vec![(
                say(&texts.none_reaches, &[("source", &conf_fact.source)]),
                false,
            )],
            _ => Vec::new(),
        };
    };
    let mut out = vec![(say(&texts.in_effect, &[("var", &var)]), false)];
    for other in Precedence::default().ignored_while(&var) {
        if matches!(facts.get(&format!("env.{other}")).value, Value::Str(_)) {
            out.push((
                say(&texts.ignored, &[("var", other), ("other", &var)]),
                false,
            ));
        }
    }
    let option = [("option", EXPANDABLE_SEGMENTS)];
    out.push(match alloc_conf::switch(&conf, EXPANDABLE_SEGMENTS) {
        Switch::On => (say(&texts.option_on, &option), false),
        Switch::Off => (say(&texts.option_off, &option), false),
        Switch::Absent => (say(&texts.option_absent, &option), false),
        Switch::Invalid(v) => (
            say(
                &texts.option_invalid,
                &[("option", EXPANDABLE_SEGMENTS), ("value", &v)],
            ),
            true,
        ),
    });
    out
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, theme: Theme) {
    let source = app
        .snapshot
        .env
        .value()
        .map(|e| format!(" Environment · {} ", e.source))
        .unwrap_or_else(|| " Environment ".into());
    let block = Block::default()
        .borders(Borders::ALL)
        .title(crate::tui::view::text::ellipsize(
            &source,
            usize::from(area.width.saturating_sub(2)),
        ));
    let width = area.width.saturating_sub(2) as usize;
    let l: Vec<Line> = lines(app, width, theme)
        .into_iter()
        .map(|x| crate::tui::view::text::cut_line(x, width))
        .collect();
    frame.render_widget(Paragraph::new(l).block(block), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_facts_highlight_the_allocator_variables() {
        let app = App::demo();
        let used = used_vars(&app.diagnosis.findings);
        assert!(used.contains("PYTORCH_CUDA_ALLOC_CONF"), "{used:?}");
        assert!(!used.contains("CUDA_HOME"), "{used:?}");
        let text: Vec<String> = lines(&app, 200, Theme::new(false))
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert!(
            text.iter()
                .any(|l| l.starts_with("◆ PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")),
            "{text:?}"
        );
        let narrow: Vec<String> = lines(&app, 30, Theme::new(false))
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert!(
            narrow.contains(&"◆ PYTORCH_CUDA_ALLOC_CONF=".to_string()),
            "{narrow:?}"
        );
        assert!(
            narrow.contains(&"    expandable_segments:True".to_string()),
            "{narrow:?}"
        );
    }

    /// The panel's reading for `PYTORCH_CUDA_ALLOC_CONF=conf`, from the facts the engine derives.
    fn reading_for(conf: &str) -> Vec<(String, bool)> {
        use crate::snapshot::{Environment, HostSnapshot};
        let mut s = HostSnapshot::empty("test", "test");
        s.env = Probed::Value(Environment {
            whose: None,
            source: "test shell".into(),
            vars: [(alloc_conf::CUDA_VAR.to_string(), conf.to_string())]
                .into_iter()
                .collect(),
            covers: None,
        });
        let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
        let facts = crate::facts::derive(&s, false, &kb.hardware);
        alloc_reading(&facts, &kb.allocator.panel, s.env.value())
    }

    /// A container launch gets none of the shell's allocator variables: the panel says so
    /// next to the shell's value instead of showing nothing; an env file not given makes the
    /// config unknown and the panel names why.
    #[test]
    fn the_panel_says_when_no_allocator_variable_reaches_the_engine() {
        use crate::launch::{Select, SourceFile};
        use crate::snapshot::{Environment, HostSnapshot};
        let reading = |launch: &str| {
            let mut s = HostSnapshot::empty("test", "test");
            s.env = Probed::Value(Environment {
                whose: None,
                source: "test shell".into(),
                vars: [(
                    alloc_conf::CUDA_VAR.to_string(),
                    "expandable_segments:True".to_string(),
                )]
                .into_iter()
                .collect(),
                covers: None,
            });
            let l = crate::launch::parse_launch_files(
                &[SourceFile::new("launch", launch)],
                &Select::default(),
            )
            .expect("launch");
            crate::input::apply_launch(&mut s, Some(l));
            let kb = crate::kb::load_embedded(crate::facts::is_known_fact).expect("kb");
            let facts = crate::facts::derive(&s, false, &kb.hardware);
            alloc_reading(&facts, &kb.allocator.panel, s.env.value())
        };
        let docker = reading("docker run --gpus all vllm/vllm-openai:v0.24.0 --model m -tp 2");
        assert_eq!(docker.len(), 1, "{docker:?}");
        assert!(
            docker[0]
                .0
                .starts_with("↳ none of these reaches the engine: the container's environment"),
            "{docker:?}"
        );
        let sourced = reading("source ./set_env.sh\nvllm serve m -tp 2\n");
        assert_eq!(sourced.len(), 1, "{sourced:?}");
        assert!(
            sourced[0]
                .0
                .starts_with("↳ the engine's allocator config is not known: ")
                && sourced[0].0.contains("set_env.sh"),
            "{sourced:?}"
        );
        // The shell's own value, no launch: the usual reading, no extra line.
        let plain = reading("vllm serve m -tp 2");
        assert_eq!(
            plain[0].0, "↳ in effect: PYTORCH_CUDA_ALLOC_CONF",
            "{plain:?}"
        );
    }

    /// One verdict per spelling, the same one `check` and `fix` reach (alloc_conf::switch).
    #[test]
    fn the_panel_reads_each_expandable_segments_spelling() {
        for (value, want, invalid) in [
            ("True", "↳ expandable_segments: on", false),
            ("False", "↳ expandable_segments: off", false),
            ("1", "↳ expandable_segments:1 is not True or False", true),
            (
                "true",
                "↳ expandable_segments:true is not True or False",
                true,
            ),
            (
                "TRUE",
                "↳ expandable_segments:TRUE is not True or False",
                true,
            ),
        ] {
            let reading = reading_for(&format!("expandable_segments:{value}"));
            assert_eq!(
                reading[0].0, "↳ in effect: PYTORCH_CUDA_ALLOC_CONF",
                "{value}"
            );
            let last = reading.last().expect("a verdict");
            assert!(last.0.starts_with(want), "{value}: {reading:?}");
            assert_eq!(last.1, invalid, "{value}");
        }
        assert_eq!(
            reading_for("max_split_size_mb:512")
                .last()
                .map(|r| r.0.as_str()),
            Some("↳ expandable_segments: not set (off)")
        );
        // The demo's panel shows the reading under the variables.
        let text: Vec<String> = lines(&App::demo(), 200, Theme::new(false))
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert!(
            text.iter().any(|l| l == "↳ expandable_segments: on"),
            "{text:?}"
        );
    }

    #[test]
    fn long_verdicts_wrap_at_the_panel_width() {
        let w = wrap(
            "↳ expandable_segments:1 is not True or False: PyTorch refuses",
            24,
        );
        assert!(w.len() > 1, "{w:?}");
        assert!(w.iter().all(|l| l.chars().count() <= 24), "{w:?}");
        assert!(w[1].starts_with("  "));
        assert_eq!(wrap("short", 24), vec!["short".to_string()]);
    }
}
