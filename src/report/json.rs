//! JSON report: the whole model, `schema_version` first; documented by
//! `schema/report.schema.json`. A JSON report is also a valid `--snapshot` input.

use super::model::Report;

/// The JSON report, pretty-printed, ending in a newline.
pub fn render(r: &Report) -> String {
    // The model holds only strings, numbers, booleans, lists and string-keyed maps, which
    // serde_json always serialises.
    let mut s = serde_json::to_string_pretty(r).unwrap_or_default();
    s.push('\n');
    s
}
