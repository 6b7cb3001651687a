//! Reports: the `report` subcommand, golden files of every format, redaction of planted secrets,
//! and the JSON schema generated from the report model.

mod report_support;

mod cli;
mod golden;
mod redaction;
mod schema;
