//! Thin entry point: parse the command line and dispatch to a mode.

use clap::Parser;
use sm120_doctor::cli::{self, Cli};
use sm120_doctor::collect::run;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        // Help and version as clap prints them; a usage error quotes the argument given (a
        // launch line, a path), so it is written like every other message: control characters
        // shown escaped.
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let text = e.render().to_string();
            sm120_doctor::report::sanitize::say(text.trim_end());
            std::process::exit(e.exit_code());
        }
    };
    // Children (the Python collector, the torch probe) never outlive the tool: on a panic, on
    // SIGINT/SIGTERM/SIGHUP in the CLI modes (the TUI turns those into an orderly exit), and
    // when the mode returns.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        run::kill_all();
        previous(info);
    }));
    if cli.command.is_some() {
        run::install_signal_cleanup();
        run::become_subreaper();
    }
    let rc = cli::dispatch(&cli);
    run::kill_all();
    std::process::exit(rc);
}
