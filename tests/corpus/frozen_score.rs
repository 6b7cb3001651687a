//! The frozen (held-out) sets in tests/corpus/frozen/cases: the verdict rules they are scored
//! by, and the first-run lines of tests/corpus/LEDGER.md that a later run is compared with.
//!
//! The rules are the ones the first run was scored with (the scoring script named in the
//! ledger), so the test and the ledger count the same thing:
//! - a class label is right when it is the top-ranked class;
//! - `none` is right when no class is named;
//! - `unrecognized` is right when no class is named at SUSPECTED or CONFIRMED and the run signs
//!   show a failure or a hang.

use sm120_doctor::engine::classify::run_signs::RunSigns;

use crate::eval::{Level, NONE, Verdict};

/// The label of a log that shows a real failure no knowledge-base class covers.
pub const UNRECOGNIZED: &str = "unrecognized";

/// File-name prefixes of frozen cases: sets A (public threads), B (GPU-host captures and public
/// threads), C and D (public threads), folded into training and kept as a regression guard, and
/// set E (public threads), the held-out set.
pub const CASE_PREFIXES: &[&str] = &["fa_", "fb_", "fc_", "fd_", "fe_"];

/// The prefix of the set that is held out now: no rule may be written from it, and its score is
/// printed apart from the sets folded into training.
pub const HELD_OUT_PREFIX: &str = "fe_";

/// Whether the run signs show that the run failed or hung, whatever the class.
pub fn shows_failure(run: &RunSigns) -> bool {
    !run.failures.is_empty() || run.hang.is_some()
}

/// Whether the verdict on a frozen case is right for its label.
pub fn is_exact(label: &str, verdict: &Verdict, shows_failure: bool) -> bool {
    match label {
        NONE => verdict.ranked.is_empty(),
        UNRECOGNIZED => {
            shows_failure
                && !verdict
                    .ranked
                    .iter()
                    .any(|(_, level)| matches!(level, Level::Confirmed | Level::Suspected))
        }
        class => verdict.ranked.first().is_some_and(|(top, _)| top == class),
    }
}

/// One case's first-run line in the ledger.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstRun {
    pub case: String,
    pub label: String,
    pub exact: bool,
}

/// The per-case rows of the ledger's first-run sections: the table rows (first cell a case
/// file name ending in `.log`, backquoted or not, then label, what the tool said, `check` exit,
/// exact, all-clear) under a heading that says "first run" (or "first-run"). Rows of later runs
/// are not read.
/// Errors name `file:line`.
pub fn first_run_rows(file: &str, text: &str) -> Result<Vec<FirstRun>, String> {
    let mut rows: Vec<FirstRun> = Vec::new();
    let mut in_first_run = false;
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.starts_with('#') {
            let heading = line.to_ascii_lowercase();
            in_first_run = heading.contains("first run") || heading.contains("first-run");
            continue;
        }
        if !in_first_run || !line.starts_with('|') {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if !cells
            .first()
            .is_some_and(|c| c.trim_matches('`').ends_with(".log"))
        {
            continue; // the table's heading and separator rows
        }
        let [case, label, _said, _rc, exact, ..] = cells.as_slice() else {
            return Err(format!(
                "{file}:{line_no}: a first-run row needs case, label, what the tool said, check exit and exact"
            ));
        };
        let exact = match *exact {
            "yes" => true,
            "no" => false,
            other => {
                return Err(format!(
                    "{file}:{line_no}: exact is `{other}`, want yes or no"
                ));
            }
        };
        let case = case.trim_matches('`').to_string();
        if rows.iter().any(|r| r.case == case) {
            return Err(format!(
                "{file}:{line_no}: {case} has a second first-run line"
            ));
        }
        rows.push(FirstRun {
            case,
            label: label.to_string(),
            exact,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sm120_doctor::engine::classify::run_signs::{Hang, HangKind};

    fn verdict(ranked: &[(&str, Level)]) -> Verdict {
        Verdict {
            ranked: ranked.iter().map(|(c, l)| (c.to_string(), *l)).collect(),
            matches: ranked.len(),
        }
    }

    #[test]
    fn class_labels_need_the_top_class() {
        let v = verdict(&[
            ("cuda_oom", Level::Confirmed),
            ("orphan_workers", Level::Low),
        ]);
        assert!(is_exact("cuda_oom", &v, true));
        assert!(!is_exact("orphan_workers", &v, true));
        assert!(!is_exact("cuda_oom", &verdict(&[]), true));
    }

    #[test]
    fn none_needs_nothing_named() {
        assert!(is_exact(NONE, &verdict(&[]), false));
        assert!(!is_exact(
            NONE,
            &verdict(&[("fp8_tuning", Level::Low)]),
            false
        ));
    }

    #[test]
    fn unrecognized_needs_a_shown_failure_and_no_sure_class() {
        let low = verdict(&[("sm12x_unknown_gap", Level::Low)]);
        assert!(is_exact(UNRECOGNIZED, &low, true));
        assert!(is_exact(UNRECOGNIZED, &verdict(&[]), true));
        assert!(
            !is_exact(UNRECOGNIZED, &verdict(&[]), false),
            "no failure shown"
        );
        let suspected = verdict(&[("sm120_kernel_missing", Level::Suspected)]);
        assert!(!is_exact(UNRECOGNIZED, &suspected, true));
        let confirmed = verdict(&[("orphan_workers", Level::Confirmed)]);
        assert!(!is_exact(UNRECOGNIZED, &confirmed, true));
    }

    #[test]
    fn a_hang_or_a_failure_line_shows_failure() {
        let mut run = RunSigns::default();
        assert!(!shows_failure(&run));
        run.hang = Some(Hang {
            kind: HangKind::EndsInStartup,
            file: "x.log".into(),
            last_progress_line: None,
            last_progress_text: String::new(),
            stall_line: None,
            stall_count: 0,
            interrupt_line: None,
            phase: None,
        });
        assert!(shows_failure(&run));
    }

    const LEDGER: &str = "\
# Frozen-set ledger

## Set A (fa_*), first run — 2026-12-01

| case | label | tool said | check exit | exact | all-clear |
|---|---|---|---|---|---|
| `fa_one.log` | cuda_oom | cuda_oom (CONFIRMED) | 1 | yes | no |
| `fa_two.log` | unrecognized | nothing named | 0 | no | yes |

## Set B (fb_*), first run

| case | label | tool said | check exit | exact | all-clear |
|---|---|---|---|---|---|
| fb_three.log | none | nothing named | 0 | yes | no |

## Set A (fa_*), run 2 — 2027-01-10

| `fa_one.log` | cuda_oom | nothing named | 0 | no | yes |
";

    #[test]
    fn only_first_run_sections_are_read() {
        let rows = first_run_rows("LEDGER.md", LEDGER).expect("parses");
        assert_eq!(
            rows,
            [
                FirstRun {
                    case: "fa_one.log".into(),
                    label: "cuda_oom".into(),
                    exact: true
                },
                FirstRun {
                    case: "fa_two.log".into(),
                    label: "unrecognized".into(),
                    exact: false
                },
                FirstRun {
                    case: "fb_three.log".into(),
                    label: "none".into(),
                    exact: true
                },
            ]
        );
    }

    #[test]
    fn bad_rows_name_the_line() {
        let twice = format!(
            "{LEDGER}\n## Set B, first run\n| `fa_one.log` | cuda_oom | x | 1 | yes | no |\n"
        );
        let e = first_run_rows("LEDGER.md", &twice).expect_err("second first-run line");
        assert!(e.starts_with("LEDGER.md:21:"), "{e}");
        let bad = "## first run\n| `fa_x.log` | none | nothing named | 0 | maybe | no |\n";
        let e = first_run_rows("LEDGER.md", bad).expect_err("exact not yes/no");
        assert!(
            e.starts_with("LEDGER.md:2:") && e.contains("`maybe`"),
            "{e}"
        );
        let short = "## first run\n| `fa_x.log` | none |\n";
        let e = first_run_rows("LEDGER.md", short).expect_err("too few cells");
        assert!(e.starts_with("LEDGER.md:2:"), "{e}");
    }
}
