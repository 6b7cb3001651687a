//! schema/report.schema.json is generated from the report model (`schemars` derives on
//! `src/report/model.rs` and the snapshot/engine types it embeds), never edited by hand.
//!
//! This test fails when the committed file differs from what the model derives. Regenerate it
//! with `UPDATE_SCHEMA=1 cargo test --test report schema::` and commit the result.

use schemars::generate::SchemaSettings;
use serde_json::Value;
use sm120_doctor::report::Report;

const SCHEMA_PATH: &str = "schema/report.schema.json";

/// The schema as the model derives it, in the committed file's text form.
///
/// A report is both written (`report --format json`) and read back (`check --snapshot`), so a
/// field is required when the writer always emits it (schemars' serialize contract: no
/// `skip_serializing_if`) and the reader has no default for it (no serde default). serde alone
/// would read a missing `Option` field as `None`, but a report without `chosen_remedy` is not one
/// this tool wrote; fields with a serde default (sections added later, like `probe`) stay optional
/// so older reports still validate.
fn derived() -> String {
    let ser = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<Report>();
    let mut schema = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<Report>()
        .to_value();
    require_written_fields(&mut schema, ser.as_value());
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_else(|e| panic!("{e}"));
    text.push('\n');
    text
}

/// Walk the read-side schema `de` and the write-side schema `ser` of the same types in step; at
/// each object add to `required` the properties `ser` requires that have no `default` in `de`.
fn require_written_fields(de: &mut Value, ser: &Value) {
    match (de, ser) {
        (Value::Object(d), Value::Object(s)) => {
            if let (Some(Value::Object(props)), Some(Value::Array(written))) =
                (d.get("properties"), s.get("required"))
            {
                let add: Vec<Value> = written
                    .iter()
                    .filter(|name| {
                        name.as_str()
                            .and_then(|n| props.get(n))
                            .is_some_and(|p| p.get("default").is_none())
                    })
                    .cloned()
                    .collect();
                let required = d
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(list) = required {
                    for name in add {
                        if !list.contains(&name) {
                            list.push(name);
                        }
                    }
                }
            }
            for (k, v) in d.iter_mut() {
                if let Some(sv) = s.get(k) {
                    require_written_fields(v, sv);
                }
            }
        }
        (Value::Array(d), Value::Array(s)) => {
            for (dv, sv) in d.iter_mut().zip(s) {
                require_written_fields(dv, sv);
            }
        }
        _ => {}
    }
}

#[test]
fn committed_schema_is_the_derived_one() {
    let want = derived();
    if std::env::var("UPDATE_SCHEMA").as_deref() == Ok("1") {
        // Other tests in this binary read the file meanwhile: replace it in one rename.
        let tmp = format!("{SCHEMA_PATH}.tmp");
        std::fs::write(&tmp, &want).unwrap_or_else(|e| panic!("write {tmp}: {e}"));
        std::fs::rename(&tmp, SCHEMA_PATH).unwrap_or_else(|e| panic!("rename {tmp}: {e}"));
        eprintln!("wrote {SCHEMA_PATH} ({} bytes)", want.len());
        return;
    }
    let have =
        std::fs::read_to_string(SCHEMA_PATH).unwrap_or_else(|e| panic!("read {SCHEMA_PATH}: {e}"));
    if have != want {
        let first = have
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| have.lines().count().min(want.lines().count()));
        panic!(
            "{SCHEMA_PATH} differs from the schema derived from src/report/model.rs \
             (first difference at line {}; committed {} lines, derived {} lines).\n\
             Regenerate it: UPDATE_SCHEMA=1 cargo test --test report schema::",
            first + 1,
            have.lines().count(),
            want.lines().count()
        );
    }
}

#[test]
fn required_means_written_and_not_defaulted() {
    let ser = serde_json::json!({
        "type": "object",
        "properties": {"a": {}, "b": {}, "c": {}, "d": {}},
        "required": ["a", "b", "c"]
    });
    let mut de = serde_json::json!({
        "type": "object",
        "properties": {"a": {}, "b": {}, "c": {"default": null}, "d": {}},
        "required": ["a"]
    });
    require_written_fields(&mut de, &ser);
    // b: always written, no default -> required; c: defaulted on read; d: may be skipped.
    assert_eq!(de["required"], serde_json::json!(["a", "b"]));
}

use crate::report_support;

use report_support::{demo, report, snapshot_file, validate};
use sm120_doctor::report::{self as rep, RedactOptions, ReportFormat};

/// The JSON report of the H200 live snapshot with the allocator/IPC probe (every snapshot section
/// filled, including `probe`).
fn h200_probe_report() -> Value {
    let input = snapshot_file(std::path::Path::new(
        "tests/fixtures/h200-live-2026-11-30/snapshot-probe.yaml",
    ));
    let (_, model) = report(&input, true, &[], Some(RedactOptions::default()));
    serde_json::from_str(&rep::render(&model, ReportFormat::Json)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_report_with_the_probe_validates() {
    let v = h200_probe_report();
    assert!(
        v["snapshot"]["probe"]["value"]["native"]["value"].is_array(),
        "fixture has a native probe run: {}",
        v["snapshot"]["probe"]
    );
    validate(&v.to_string()).unwrap_or_else(|e| panic!("{e}"));
}

/// A report of the H200 P2P capture carries the sections added after the hand-written schema
/// (`p2p_probe`, `pci_fabric`), which that schema rejected as unknown properties.
#[test]
fn a_report_with_the_p2p_probe_and_pci_fabric_validates() {
    // The capture's snapshot has the PCI fabric; its `probe p2p` output goes in beside it.
    let dir = "tests/fixtures/h200-p2p-2026-11-30";
    let read = |f: &str| -> Value {
        let text = std::fs::read_to_string(format!("{dir}/{f}")).unwrap_or_else(|e| panic!("{e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{f}: {e}"))
    };
    let mut snap = read("snapshot.json");
    snap["p2p_probe"] = serde_json::json!({ "value": read("probe.json") });
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = tmp.path().join("snapshot.json");
    std::fs::write(&path, snap.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let input = snapshot_file(&path);
    let (_, model) = report(&input, false, &[], Some(RedactOptions::default()));
    let v: Value = serde_json::from_str(&rep::render(&model, ReportFormat::Json))
        .unwrap_or_else(|e| panic!("{e}"));
    for section in ["p2p_probe", "pci_fabric"] {
        assert!(
            v["snapshot"][section]["value"].is_object(),
            "fixture has {section}: {}",
            v["snapshot"][section]
        );
    }
    validate(&v.to_string()).unwrap_or_else(|e| panic!("{e}"));
}

/// Each constraint the schema states beyond the Rust types (closed string sets, constants,
/// minimums, fields the writer always emits) rejects a report that breaks it.
#[test]
fn the_derived_schema_keeps_the_report_contract() {
    let (_, model) = report(&demo(), false, &[], Some(RedactOptions::default()));
    let demo: Value = serde_json::from_str(&rep::render(&model, ReportFormat::Json))
        .unwrap_or_else(|e| panic!("{e}"));
    validate(&demo.to_string()).unwrap_or_else(|e| panic!("demo: {e}"));
    // The breakers below edit these; on a null, serde_json's indexing would build a new object.
    assert!(demo["findings"][0]["chosen_remedy"]["action"].is_object());
    assert!(demo["walks"][0]["steps"][0].is_object());
    let probe = h200_probe_report();
    type Breaker = fn(&mut Value);
    let cases: [(&str, &Value, Breaker); 12] = [
        ("mode outside the enum", &demo, |v| {
            v["mode"] = "everything".into()
        }),
        ("schema_version 2", &demo, |v| {
            v["schema_version"] = 2.into()
        }),
        ("snapshot schema_version 2", &demo, |v| {
            v["snapshot"]["schema_version"] = 2.into()
        }),
        ("unknown redaction kind", &demo, |v| {
            v["redactions"] = serde_json::json!([{"kind": "password", "count": 1}])
        }),
        ("redaction count 0", &demo, |v| {
            v["redactions"] = serde_json::json!([{"kind": "secret", "count": 0}])
        }),
        ("chosen_by outside the enum", &demo, |v| {
            v["findings"][0]["chosen_remedy"]["chosen_by"] = "random".into()
        }),
        ("chosen_remedy missing", &demo, |v| {
            if let Some(f) = v["findings"][0].as_object_mut() {
                f.remove("chosen_remedy");
            }
        }),
        ("tool_command missing", &demo, |v| {
            if let Some(a) = v["findings"][0]["chosen_remedy"]["action"].as_object_mut() {
                a.remove("tool_command");
            }
        }),
        ("confidence outside the enum", &demo, |v| {
            v["findings"][0]["confidence"] = "confirmed".into()
        }),
        ("step answered by someone else", &demo, |v| {
            v["walks"][0]["steps"][0]["by"] = "oracle".into()
        }),
        ("log line 0", &demo, |v| {
            v["log_matches"] = serde_json::json!([
                {"class": "x", "signature": "s", "file": "f", "line": 0, "text": "t"}
            ])
        }),
        ("probe path outside the enum", &probe, |v| {
            v["snapshot"]["probe"]["value"]["native"]["value"][0]["path"] = "cupy".into()
        }),
    ];
    for (what, base, breaker) in cases {
        let mut v = base.clone();
        breaker(&mut v);
        assert_ne!(&v, base, "{what}: the breaker changed nothing");
        assert!(
            validate(&v.to_string()).is_err(),
            "{what}: the schema accepted a broken report"
        );
    }
}

/// The schema's closed set of redaction kinds is the redactor's (model.rs cannot import
/// `redact`: it imports the model).
#[test]
fn redaction_kinds_are_the_redactors() {
    use sm120_doctor::report::redact::Kind;
    // A new `Kind` stops this match compiling until it is listed below.
    let _every_kind_listed = |k: Kind| match k {
        Kind::Secret
        | Kind::CredentialsInUrl
        | Kind::Hostname
        | Kind::User
        | Kind::HomePath
        | Kind::GpuUuid => (),
    };
    let kinds: Vec<&str> = [
        Kind::Secret,
        Kind::CredentialsInUrl,
        Kind::Hostname,
        Kind::User,
        Kind::HomePath,
        Kind::GpuUuid,
    ]
    .map(Kind::as_str)
    .to_vec();
    let schema: Value = serde_json::from_str(&derived()).unwrap_or_else(|e| panic!("{e}"));
    let listed: Vec<&str> = schema["$defs"]["Redaction"]["properties"]["kind"]["enum"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert_eq!(listed, kinds);
}
