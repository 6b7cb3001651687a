//! The no-subcommand mode: read the inputs, then hand them to the TUI (which collects a live
//! host itself, after its first frame).

use super::{TuiArgs, fail};
use crate::engine::Mode;
use crate::input;

pub fn run(args: &TuiArgs) -> i32 {
    let prepared = match input::prepare(&args.input) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let mode = if args.onboard {
        Mode::All
    } else {
        Mode::Failures
    };
    crate::tui::run(prepared, mode, input::LivePython::unless(args.no_python))
}
