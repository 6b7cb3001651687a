//! JSON input (snapshot files, JSON reports): duplicate keys are refused as YAML refuses them,
//! and a type error names the field path and the line and column.

use super::InputError;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;

/// Walks a JSON document and fails on the first object with a key twice (serde_json keeps the
/// last one silently). serde_json's recursion limit (128) bounds the depth.
struct NoDuplicateKeys;

impl<'de> de::Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicateKeys)
    }
}

impl<'de> Visitor<'de> for NoDuplicateKeys {
    type Value = NoDuplicateKeys;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(self)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
            map.next_value::<NoDuplicateKeys>()?;
        }
        Ok(self)
    }
}

fn position(name: &str, e: &serde_json::Error, message: String) -> InputError {
    InputError::new(name, e.line(), e.column(), message)
}

/// Refuse a JSON text that is invalid or has an object with a duplicate key.
pub fn check(name: &str, text: &str) -> Result<(), InputError> {
    serde_json::from_str::<NoDuplicateKeys>(text)
        .map(|_| ())
        .map_err(|e| position(name, &e, format!("invalid JSON: {}", strip_position(&e))))
}

/// Deserialize `T`; an error names the field path (`gpus.value[0].name`) and the position.
pub fn from_str<T: DeserializeOwned>(name: &str, text: &str) -> Result<T, InputError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let field = if path.is_empty() || path == "." {
            String::new()
        } else {
            format!("field {path}: ")
        };
        position(name, &inner, format!("{field}{}", strip_position(&inner)))
    })?;
    de.end()
        .map_err(|e| position(name, &e, format!("invalid JSON: {}", strip_position(&e))))?;
    Ok(value)
}

/// serde_json's message without its trailing ` at line L column C` (the caller prints both).
fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_refused_with_their_place() {
        let e = check("s.json", "{\"a\": 1,\n \"b\": {\"x\": 1, \"x\": 2}}").expect_err("dup");
        assert_eq!((e.line, e.file.as_str()), (2, "s.json"));
        assert_eq!(e.message, "invalid JSON: duplicate key \"x\"", "{e}");
        assert!(check("s.json", "{\"a\": [1, {\"a\": 2}], \"b\": {\"a\": 3}}").is_ok());
    }

    #[test]
    fn type_errors_name_the_field_path_and_line() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct G {
            name: String,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct S {
            gpus: Vec<G>,
        }
        let e = from_str::<S>("s.json", "{\n  \"gpus\": [\n    {\"name\": 7}\n  ]\n}")
            .expect_err("type");
        assert_eq!(e.line, 3, "{e}");
        assert!(e.column > 0, "{e}");
        assert!(
            e.message
                .starts_with("field gpus[0].name: invalid type: integer `7`"),
            "{e}"
        );
        assert!(!e.message.contains(" at line "), "{e}");
    }
}
