//! A value with the place in its knowledge-base file where it was written.
//!
//! Read from YAML, the place comes from serde-saphyr's span tracking. The knowledge base the
//! binary embeds is built once, by build.rs, and stored in a compact binary form (postcard); in
//! that form a [`Spanned`] is written as (value, referenced, defined), so the embedded knowledge
//! base keeps every line and column (for `kb lint` and for errors the caller's fact check finds).
//! Text formats (`is_human_readable`) read through serde-saphyr and write the bare value, as
//! serde-saphyr's own `Spanned` does.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeTuple, Serializer};

/// A line and column in a knowledge-base file (1-based; 0 when not known).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Location {
    line: u32,
    column: u32,
}

impl Location {
    pub const UNKNOWN: Location = Location { line: 0, column: 0 };

    pub fn new(line: u32, column: u32) -> Location {
        Location { line, column }
    }
    pub fn line(&self) -> u64 {
        u64::from(self.line)
    }
    pub fn column(&self) -> u64 {
        u64::from(self.column)
    }
}

impl From<serde_saphyr::Location> for Location {
    fn from(l: serde_saphyr::Location) -> Location {
        let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        Location::new(clamp(l.line()), clamp(l.column()))
    }
}

/// A value and where it was written: `referenced` where it is used (an alias's place for a
/// YAML alias), `defined` where its text is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Spanned<T> {
    pub value: T,
    pub referenced: Location,
    pub defined: Location,
}

impl<T> Spanned<T> {
    pub fn new(value: T, referenced: Location, defined: Location) -> Spanned<T> {
        Spanned {
            value,
            referenced,
            defined,
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            let s = serde_saphyr::Spanned::<T>::deserialize(d)?;
            Ok(Spanned::new(s.value, s.referenced.into(), s.defined.into()))
        } else {
            let (value, referenced, defined) = <(T, Location, Location)>::deserialize(d)?;
            Ok(Spanned::new(value, referenced, defined))
        }
    }
}

impl<T: Serialize> Serialize for Spanned<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            return self.value.serialize(s);
        }
        let mut t = s.serialize_tuple(3)?;
        t.serialize_element(&self.value)?;
        t.serialize_element(&self.referenced)?;
        t.serialize_element(&self.defined)?;
        t.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Doc {
        name: Spanned<String>,
        list: Vec<Spanned<u32>>,
        maybe: Option<Spanned<String>>,
    }

    #[test]
    fn yaml_gives_places_and_the_binary_form_keeps_them() {
        let doc: Doc =
            serde_saphyr::from_str("name: a\nlist:\n  - 1\n  - 22\nmaybe: x\n").expect("parses");
        assert_eq!(doc.name.value, "a");
        assert_eq!(
            (doc.name.referenced.line(), doc.name.referenced.column()),
            (1, 7)
        );
        assert_eq!(doc.list[1].referenced.line(), 4);
        assert_eq!(doc.maybe.as_ref().map(|m| m.referenced.line()), Some(5));
        let bytes = postcard::to_allocvec(&doc).expect("serialises");
        let back: Doc = postcard::from_bytes(&bytes).expect("reads back");
        assert_eq!(back, doc);
        // Text formats show the value alone.
        assert_eq!(
            serde_json::to_string(&doc.name).expect("json"),
            "\"a\"".to_string()
        );
    }

    #[test]
    fn an_alias_is_referenced_where_used_and_defined_at_its_anchor() {
        let doc: Doc = serde_saphyr::from_str("name: &n a\nlist: []\nmaybe: *n\n").expect("parses");
        let m = doc.maybe.expect("alias");
        assert_eq!(m.referenced.line(), 3);
        assert_eq!(m.defined.line(), 1);
    }
}
