//! Which launch a file holding several is read for (`--service NAME` / `--container NAME`),
//! and the one rule every form picks it by.

use super::LaunchError;

/// Which launch to use when a file holds several (`--service NAME` / `--container NAME`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Select {
    pub service: Option<String>,
    pub container: Option<String>,
}

impl Select {
    pub fn service(name: &str) -> Self {
        Select {
            service: Some(name.to_string()),
            container: None,
        }
    }

    pub fn container(name: &str) -> Self {
        Select {
            service: None,
            container: Some(name.to_string()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.service.is_none() && self.container.is_none()
    }
}

/// A refusal's words for a name asked for and the candidates that have it.
type SayNamed<'f, T> = &'f dyn Fn(&str, &[&T]) -> String;

/// How [`pick_one`] words its refusals, in the form's own terms.
pub(crate) struct PickWords<'f, T> {
    /// No candidate has the name asked for.
    pub unknown: &'f dyn Fn(&str) -> String,
    /// Several candidates have it; `None`: the first of them is taken.
    pub several_named: Option<SayNamed<'f, T>>,
    /// Several candidates run vLLM and none was named.
    pub several: &'f dyn Fn(&[&T]) -> String,
}

/// Pick one service / container / modelSpec entry: the one named `want` (matched by
/// `has_name` among `all`), else the only one in `runs` (those that run vLLM), else the one
/// `prefer` settles on among several.
pub(crate) fn pick_one<'a, T>(
    all: &'a [T],
    want: Option<&str>,
    has_name: impl Fn(&T, &str) -> bool,
    runs: Vec<&'a T>,
    prefer: impl Fn(&[&'a T]) -> Option<&'a T>,
    words: PickWords<'_, T>,
) -> Result<&'a T, LaunchError> {
    let refuse = |message: String| Err(LaunchError::Ambiguous { message });
    match want {
        Some(want) => {
            let hits: Vec<&T> = all.iter().filter(|t| has_name(t, want)).collect();
            match (hits.as_slice(), words.several_named) {
                ([], _) => refuse((words.unknown)(want)),
                ([one], _) | ([one, ..], None) => Ok(one),
                (many, Some(say)) => refuse(say(want, many)),
            }
        }
        None => match runs.as_slice() {
            [] => Err(LaunchError::NoVllmCommand),
            [one] => Ok(one),
            many => match prefer(many) {
                Some(one) => Ok(one),
                None => refuse((words.several)(many)),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words_for<'f>(
        unknown: &'f dyn Fn(&str) -> String,
        several_named: Option<SayNamed<'f, &'static str>>,
        several: &'f dyn Fn(&[&&'static str]) -> String,
    ) -> PickWords<'f, &'static str> {
        PickWords {
            unknown,
            several_named,
            several,
        }
    }

    #[test]
    fn pick_one_by_name_else_the_only_one_that_runs() {
        let all = ["a", "b", "b", "c"];
        let unknown = |w: &str| format!("no {w}");
        let several = |m: &[&&str]| format!("{} run", m.len());
        let dup = |w: &str, m: &[&&str]| format!("{w} x{}", m.len());
        let same = |t: &&str, w: &str| *t == w;
        let none = |_: &[&&'static str]| None;
        let pick = |want, runs, dups| {
            pick_one(
                &all,
                want,
                same,
                runs,
                none,
                words_for(&unknown, dups, &several),
            )
        };
        assert_eq!(pick(Some("c"), vec![], None), Ok(&"c"));
        let ambiguous = |m: &str| {
            Err(LaunchError::Ambiguous {
                message: m.to_string(),
            })
        };
        assert_eq!(pick(Some("z"), vec![], None), ambiguous("no z"));
        // A name several have: the first, unless the form refuses it.
        assert!(pick(Some("b"), vec![], None).is_ok_and(|t| std::ptr::eq(t, &all[1])));
        assert_eq!(pick(Some("b"), vec![], Some(&dup)), ambiguous("b x2"));
        assert_eq!(pick(None, vec![&all[3]], None), Ok(&"c"));
        assert_eq!(pick(None, vec![], None), Err(LaunchError::NoVllmCommand));
        assert_eq!(pick(None, vec![&all[0], &all[3]], None), ambiguous("2 run"));
        let settled = pick_one(
            &all,
            None,
            same,
            vec![&all[0], &all[3]],
            |m| m.last().copied(),
            words_for(&unknown, None, &several),
        );
        assert_eq!(settled, Ok(&"c"));
    }
}
