//! The project around the code: the source tree's import rules and sizes, the wheel's data
//! files, the deploy recipes checked by their own tools, and the Prometheus file scraped by
//! node_exporter.

#[path = "../support/mod.rs"]
mod support;

mod deploy_recipes;
mod layering;
mod prometheus_node_exporter;
mod sentences;
mod sizes;
mod wheel_data;
