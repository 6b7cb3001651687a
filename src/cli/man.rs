//! What the man pages say beyond clap's options: exit statuses, the environment read, examples
//! and the TUI's keys (taken from the help screen's own table, so the page and `?` agree).

use crate::report::{
    EXIT_FINDINGS, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, EXIT_OK, EXIT_RUN_FAILED, EXIT_SKIPPED,
    EXIT_UNDETERMINED, EXIT_USAGE,
};
use crate::shell_integration::ManSection;

const MAIN: &str = "sm120-doctor";
const CHECK: &str = "sm120-doctor-check";
const RUN: &str = "sm120-doctor-run";

/// The exit statuses of `run`: the launch's own, passed through, else the doctor's (as env(1)).
fn run_exit() -> Vec<(String, String)> {
    vec![
        (
            "the launch's".into(),
            "the status CMD exited with, passed through unchanged, so run can stand in front of \
             `vllm serve` in a unit, a container command: or a script. A launch ended by signal N \
             gives 128+N (SIGINT 130, SIGTERM 143, SIGKILL 137). The diagnosis never changes it."
                .into(),
        ),
        (
            code(EXIT_RUN_FAILED),
            "the doctor itself failed before the launch started: a bad option value, a --log-to \
             or -o file that exists (never overwritten) or cannot be created. CMD was not run. \
             (A command line clap cannot parse exits 2.)"
                .into(),
        ),
        (
            code(EXIT_NOT_EXECUTABLE),
            "CMD was found but could not be executed (no execute permission, not a program)."
                .into(),
        ),
        (code(EXIT_NOT_FOUND), "CMD was not found.".into()),
    ]
}

const RUN_NOTES: &[(&str, &str)] = &[
    (
        "Pass-through",
        "CMD runs in its own process group with this process's stdin; its stdout and stderr are \
         copied to the doctor's as they arrive (no line buffering) and into the log file. SIGINT, \
         SIGTERM, SIGHUP and SIGQUIT sent to the doctor (Ctrl-C in a terminal) are forwarded to \
         CMD's process group; the doctor waits for CMD and passes its status on. When CMD ends, \
         whatever it left running is killed (its group, every process carrying its run id, and \
         orphans reparented to the doctor).",
    ),
    (
        "The log",
        "--log-to FILE must be a new file. Without it, a new sm120-doctor-run-TIME-PID.log is \
         created in $XDG_STATE_HOME/sm120-doctor when XDG_STATE_HOME is set, else in the current \
         directory. Its path is printed on stderr before CMD starts.",
    ),
    (
        "The diagnosis",
        "after CMD ends, the engine of `check --log` reads the log. The launch is CMD itself; the \
         engine's environment is measured: /proc/PID/environ of CMD's processes (a vLLM server \
         first, else a vLLM worker, else a Python process, else the newest) read while they \
         ran, not this shell's. Printed to stderr after CMD's output (text, or --format json: \
         one object in check's schema plus a \"run\" member), or written to -o FILE. A clean exit \
         whose output shows no failure or hang gets one line.",
    ),
    (
        "Hangs",
        "with --hang-after SECS, a launch that prints nothing for SECS seconds, or whose stall \
         warnings repeat, is diagnosed while it runs and is left running: a long compile may \
         finish, and stopping a server is the operator's call (Ctrl-C is forwarded). It is \
         reported again after it prints and falls quiet again; its end is diagnosed as usual.",
    ),
    (
        "Not yet",
        "The TUI's --run, and --from-unit/--from-container/--from-pod, are not built. A doctor \
         killed by SIGKILL leaves nothing of the run behind: CMD's parent is a supervisor it \
         forked (a child subreaper), which kills every process of the run, setsid and env -i \
         ones included, when the doctor dies.",
    ),
];

const RUN_EXAMPLES: &[(&str, &str)] = &[
    (
        "sm120-doctor run -- vllm serve Qwen/Qwen3-8B -tp 2",
        "serve as usual; the output also goes to a new log, and the diagnosis follows it on stderr.",
    ),
    (
        "sm120-doctor run --hang-after 300 --format json -o diag.json --log-to serve.log -- ./serve.sh",
        "a wrapper for a unit or a container: a quiet launch is reported after 5 minutes, the JSON goes to diag.json.",
    ),
];

fn section(page: &str, title: &str, entries: &[(&str, &str)]) -> ManSection {
    ManSection {
        page: page.to_string(),
        title: title.to_string(),
        entries: entries
            .iter()
            .map(|(t, x)| (t.to_string(), x.to_string()))
            .collect(),
    }
}

fn code(c: i32) -> String {
    c.to_string()
}

/// The exit statuses of `check` (and `report`, `classify`), as the code returns them.
fn check_exit() -> Vec<(String, String)> {
    vec![
        (
            code(EXIT_OK),
            "nothing needs attention: no finding at warning or error, and no failure in the given logs. \
             The summary line still counts what was not checked; read it before taking 0 as an all-clear."
                .into(),
        ),
        (
            code(EXIT_FINDINGS),
            "findings were written (a warning or an error, or a log failure waiting for an answer). \
             With -o and --format prometheus this is a normal run."
                .into(),
        ),
        (
            code(EXIT_USAGE),
            "bad input: an unreadable or invalid file (named with line and column), a bad option value, \
             an output that cannot be written."
                .into(),
        ),
        (
            code(EXIT_UNDETERMINED),
            "undetermined: nothing needs attention, but a given log shows neither a failure nor the run \
             coming up (no start-up completed, no request served), so it cannot say whether the run worked. \
             Give the log of the whole run, or run the launch under `sm120-doctor run`. With --strict, \
             also when nothing needs attention but some check could not run for want of an input \
             (the summary's \"not checked\")."
                .into(),
        ),
    ]
}

fn owned(entries: Vec<(String, String)>, page: &str, title: &str) -> ManSection {
    ManSection {
        page: page.to_string(),
        title: title.to_string(),
        entries,
    }
}

/// The variables the tool itself reads (the engine's allocator variables are read from the
/// launch and the engine's process, not from here).
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "NO_COLOR, CLICOLOR_FORCE, CLICOLOR, TERM",
        "with --color auto (the default): a non-empty NO_COLOR turns colour off; else CLICOLOR_FORCE (not 0) \
         turns it on even into a pipe; else CLICOLOR=0 or TERM=dumb turn it off; else a terminal gets colour. \
         --color always|never overrides them all.",
    ),
    (
        "VIRTUAL_ENV, CONDA_PREFIX",
        "the Python environment whose vLLM, torch and DeepGEMM versions are read (the active virtualenv first, \
         then conda, then python3 on PATH); --python PATH overrides both.",
    ),
    ("PATH", "where python3 is looked for."),
    (
        "TMUX, STY, TERM",
        "the TUI's copy to the clipboard (OSC 52): inside tmux it needs tmux's set-clipboard on; \
         it is refused under GNU screen and on the Linux console (TERM=linux), with the reason.",
    ),
    (
        "PYTORCH_CUDA_ALLOC_CONF, PYTORCH_ALLOC_CONF",
        "not read from this shell as the engine's: the engine's are read from the launch given (--launch, --launch-file) \
         or the running vLLM process. This shell's value is shown as assumed, never as measured.",
    ),
];

const EXAMPLES: &[(&str, &str)] = &[
    (
        "sm120-doctor",
        "the TUI on this host; with no NVIDIA driver it says so, and d opens the demo.",
    ),
    (
        "sm120-doctor check --log vllm.log --launch-file serve.sh",
        "diagnose a failed start-up from its log and launch script: one line per check, the fix plan, \
         the questions; -v adds the evidence, every remedy and the sources.",
    ),
    (
        "sm120-doctor report --log vllm.log -o report.md",
        "a redacted Markdown report to attach to a GitHub issue.",
    ),
    (
        "sm120-doctor fix --launch-file serve.sh --log vllm.log --format diff",
        "the fix plan check makes for this launch and log, as a diff against the script (which stays as it is).",
    ),
    (
        "sm120-doctor fix --launch-file serve.sh --remedy drop_expandable_segments -o serve-fixed.sh",
        "write the launch with a remedy applied to a new file (never over the original without --force).",
    ),
    (
        "sm120-doctor run -- vllm serve MODEL -tp 2",
        "start the launch under the doctor: output passed through and logged, the diagnosis after it, \
         the engine's environment measured from its own processes.",
    ),
    (
        "sm120-doctor check --format prometheus -o /var/lib/node_exporter/textfile/sm120.prom --force",
        "the fleet form: metrics for node_exporter's textfile collector (deploy/ has a timer and a DaemonSet).",
    ),
];

/// Every extra section, for `sm120-doctor man`.
pub fn sections() -> Vec<ManSection> {
    let keys: Vec<(&str, &str)> = crate::tui::help::KEYS.to_vec();
    vec![
        owned(check_exit(), MAIN, "EXIT STATUS"),
        section(MAIN, "ENVIRONMENT", ENVIRONMENT),
        section(MAIN, "TUI KEYS", &keys),
        section(MAIN, "EXAMPLES", EXAMPLES),
        owned(check_exit(), CHECK, "EXIT STATUS"),
        section(CHECK, "ENVIRONMENT", ENVIRONMENT),
        section(CHECK, "EXAMPLES", &EXAMPLES[1..]),
        owned(run_exit(), RUN, "EXIT STATUS"),
        section(RUN, "HOW IT RUNS", RUN_NOTES),
        section(RUN, "EXAMPLES", RUN_EXAMPLES),
        probe_exit(
            "sm120-doctor-probe-ipc",
            "the engine's allocator config was refused an IPC handle.",
        ),
        probe_exit(
            "sm120-doctor-probe-p2p",
            "a pair hung, got wrong data or failed, or the probe could not run.",
        ),
    ]
}

fn probe_exit(page: &str, finding: &str) -> ManSection {
    owned(
        vec![
            (code(EXIT_OK), "probed, and nothing was refused or wrong.".into()),
            (code(EXIT_FINDINGS), finding.into()),
            (code(EXIT_USAGE), "bad input.".into()),
            (
                code(EXIT_SKIPPED),
                "nothing was tested (no driver, fewer than two GPUs, no torch): the reason is printed. \
                 Not an all-clear."
                    .into(),
            ),
        ],
        page,
        "EXIT STATUS",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_section_names_a_page_that_exists() {
        let pages =
            crate::shell_integration::man_pages(super::super::Cli::command(), &[]).expect("render");
        for s in sections() {
            let file = format!("{}.1", s.page);
            assert!(
                pages.iter().any(|(n, _)| *n == file),
                "{} names {file}, which is not a page",
                s.title
            );
            assert!(!s.entries.is_empty(), "{} on {file} is empty", s.title);
        }
    }

    #[test]
    fn the_main_page_lists_every_tui_key() {
        let keys = sections()
            .into_iter()
            .find(|s| s.page == MAIN && s.title == "TUI KEYS")
            .expect("keys section");
        assert_eq!(keys.entries.len(), crate::tui::help::KEYS.len());
    }
}
