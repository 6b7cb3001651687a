//! `patch-script`: write the bash script that applies a vLLM PR safely.

use super::{PatchScriptArgs, emit, fail};
use crate::input::UsageError;
use crate::kb;
use crate::write::{self, Kind};

pub fn run(args: &PatchScriptArgs) -> i32 {
    let kb = match kb::load(args.kb.as_deref(), crate::facts::is_known_fact) {
        Ok(k) => k,
        Err(e) => return fail(e.into()),
    };
    let opts = crate::remedy::patch_script::ScriptOptions {
        pr: args.pr,
        python: args.python.clone(),
        vllm_dir: args.vllm_dir.clone(),
    };
    let script = match crate::remedy::patch_script::generate(&kb, &opts) {
        Ok(s) => crate::report::sanitize::terminal_safe(&s, false).into_owned(),
        Err(e) => return fail(UsageError(e.to_string())),
    };
    if let Err(e) = write::write(&args.output, script.as_bytes(), Kind::Script, args.force) {
        return fail(UsageError(e.to_string()));
    }
    let shown = args.output.display().to_string();
    let shown = crate::remedy::rewrite::shell_quote(&shown).unwrap_or_else(|_| shown.clone());
    emit(&format!(
        "wrote {shown}\n  read it, then dry-run:  bash {shown}\n  apply:                 bash {shown} --apply\n"
    ))
}
