//! Values clap offers for completion and help: the embedded knowledge base's remedy ids and
//! question nodes. They are hints, not a closed list: `--kb DIR` may bring other ids, so any
//! value parses here and the knowledge base in use judges it (with its own error).

use clap::builder::{PossibleValue, TypedValueParser};

/// Which ids a parser offers.
#[derive(Debug, Clone, Copy)]
pub enum KbValues {
    /// `--remedy ID`: every remedy id.
    Remedies,
    /// `--answer NODE=ANSWER`: every question node, with each answer.
    Answers,
}

/// The answers `--answer` takes.
const ANSWERS: &[&str] = &["yes", "no", "unsure"];

impl KbValues {
    /// The values with a one-line help each (a remedy's title, a node's question), from the
    /// knowledge base built into this binary (none if it does not read).
    fn values(self) -> Vec<(String, String)> {
        let Some(built) = crate::kb::built() else {
            return Vec::new();
        };
        match self {
            KbValues::Remedies => built
                .kb
                .remedies
                .values()
                .map(|r| (r.id.value.clone(), r.title.clone()))
                .collect(),
            KbValues::Answers => built
                .kb
                .classes
                .iter()
                .flat_map(|c| c.def.nodes.iter())
                .flat_map(|n| {
                    ANSWERS
                        .iter()
                        .map(move |a| (format!("{}={a}", n.id.value), n.question.clone()))
                })
                .collect(),
        }
    }
}

impl TypedValueParser for KbValues {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            self.values()
                .into_iter()
                .map(|(v, help)| PossibleValue::new(v).help(help)),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_kb_offers_its_remedies_and_answers() {
        let remedies = KbValues::Remedies.values();
        assert!(
            remedies
                .iter()
                .any(|(r, help)| r == "drop_expandable_segments" && !help.is_empty()),
            "{remedies:?}"
        );
        let answers: Vec<String> = KbValues::Answers
            .values()
            .into_iter()
            .map(|(a, _)| a)
            .collect();
        assert!(!answers.is_empty());
        assert!(
            answers
                .iter()
                .all(|a| a.ends_with("=yes") || a.ends_with("=no") || a.ends_with("=unsure"))
        );
    }

    #[test]
    fn any_value_parses_since_another_kb_may_bring_it() {
        let cmd = clap::Command::new("t");
        let v = KbValues::Remedies
            .parse_ref(&cmd, None, std::ffi::OsStr::new("not_in_the_embedded_kb"))
            .expect("parses");
        assert_eq!(v, "not_in_the_embedded_kb");
    }
}
