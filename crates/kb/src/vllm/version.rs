//! Package versions as PEP 440 orders them, the version ranges the knowledge base writes
//! (`holds:`), and where an installed build sits against a range's edges.
//!
//! Parsing and ordering are `pep440_rs` (PEP 440: `0.24.0 < 0.24.0+cu130 < 0.24.1`,
//! `0.25.1rc1.dev12+g… < 0.25.1rc1 < 0.25.1`, `2.11.0a0+git… < 2.11.0`). On top of it, the
//! decisions this file makes deliberately:
//!
//! - **Ranges are half-open intervals**: `>=A,<B`, either side optional, alternatives joined
//!   with `||` (`>=0.24.0,<0.25.0 || >=0.27.0,<0.28.0`). Every edge is a release where
//!   something changed, so every edge can name that change. No `==`, `<=`, `~=`, `!=`: an edge
//!   written any other way would have no release at which the claim stops holding.
//! - **A final release is exact**, with any post release or local label: `0.24.0+cu130` is
//!   0.24.0's code, `0.6.7.post1` comes after 0.6.7.
//! - **A pre-release (`0.25.0rc1`) lies between its own number and its release**: it is cut from
//!   the release branch, so it may or may not carry what the release fixed. An edge at its
//!   release (`<0.25.0` for `0.25.0rc1`) is undecided: the tool asks.
//! - **A development build (`.devN`, e.g. a vLLM nightly `0.26.1rc1.dev1219+g46638857f`) is at
//!   least as new as its number and possibly much newer**: vLLM numbers nightlies after the
//!   last tag on main, and that nightly already had #52035, first released in 0.28.0. So a
//!   dev build is decided only where every later version gives the same answer; at the first
//!   edge above it where the answer would change, the tool asks.
//! - **PyTorch is compared on its release segment** (`2.10.0a0+git…`, a source or NGC build,
//!   reads as 2.10.0): torch numbers its main branch after the next release right at the branch
//!   cut, so a0 builds carry that release's behaviour. The decision says so when it reads a
//!   build that way.
//! - **An unknown version is not assumed**: every edge is undecided and the tool asks, lowest
//!   edge first.

use pep440_rs::Version;
use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// A package the knowledge base bounds its claims by.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Package {
    Vllm,
    Torch,
    FlashInfer,
    DeepGemm,
}

impl Package {
    pub const ALL: [Package; 4] = [
        Package::Vllm,
        Package::Torch,
        Package::FlashInfer,
        Package::DeepGemm,
    ];

    /// The name in `holds:` and in answer ids.
    pub fn key(self) -> &'static str {
        match self {
            Package::Vllm => "vllm",
            Package::Torch => "torch",
            Package::FlashInfer => "flashinfer",
            Package::DeepGemm => "deep_gemm",
        }
    }

    /// The name people read.
    pub fn display(self) -> &'static str {
        match self {
            Package::Vllm => "vLLM",
            Package::Torch => "PyTorch",
            Package::FlashInfer => "FlashInfer",
            Package::DeepGemm => "DeepGEMM",
        }
    }

    /// The fact that holds the installed version.
    pub fn fact(self) -> &'static str {
        match self {
            Package::Vllm => "python.vllm",
            Package::Torch => "python.torch",
            Package::FlashInfer => "python.flashinfer",
            Package::DeepGemm => "python.deep_gemm",
        }
    }

    /// How to read the installed version.
    pub fn hint(self) -> &'static str {
        match self {
            Package::Vllm => "pip show vllm (in the environment vLLM runs in)",
            Package::Torch => "python -c 'import torch; print(torch.__version__)'",
            Package::FlashInfer => "pip show flashinfer-python",
            Package::DeepGemm => {
                "pip show deep_gemm (vLLM's vendored copy has no version of its own)"
            }
        }
    }

    pub fn from_key(key: &str) -> Option<Package> {
        Package::ALL.into_iter().find(|p| p.key() == key)
    }
}

/// Parse a PEP 440 version, with the text in the error.
pub fn parse(text: &str) -> Result<Version, String> {
    Version::from_str(text.trim()).map_err(|e| format!("{text:?} is not a PEP 440 version: {e}"))
}

/// `[lower, upper)`; a missing side is open.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    pub lower: Option<Version>,
    pub upper: Option<Version>,
}

impl Interval {
    fn contains(&self, v: &Version) -> bool {
        self.lower.as_ref().is_none_or(|l| v >= l) && self.upper.as_ref().is_none_or(|u| v < u)
    }
}

/// A `holds:` range: disjoint half-open intervals, lowest first.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Range {
    pub text: String,
    pub intervals: Vec<Interval>,
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Range {
    /// `>=0.24.0,<0.25.0 || >=0.27.0,<0.28.0`. Errors name the part that is wrong.
    pub fn parse(text: &str) -> Result<Range, String> {
        let mut intervals = Vec::new();
        for alt in text.split("||") {
            let mut iv = Interval {
                lower: None,
                upper: None,
            };
            let parts: Vec<&str> = alt.split(',').map(str::trim).collect();
            if parts.iter().all(|p| p.is_empty()) {
                return Err(format!("{text:?}: an empty alternative"));
            }
            for part in parts {
                let (slot, rest, op) = if let Some(r) = part.strip_prefix(">=") {
                    (&mut iv.lower, r, ">=")
                } else if let Some(r) = part.strip_prefix('<').filter(|r| !r.starts_with('=')) {
                    (&mut iv.upper, r, "<")
                } else {
                    return Err(format!(
                        "{part:?}: a range is written with >=V and <V only (half-open, so every \
                         edge is the release where something changed)"
                    ));
                };
                let v = parse(rest)?;
                if v.is_pre() || v.is_dev() || v.is_local() || v.is_post() {
                    return Err(format!(
                        "{part:?}: an edge is a final release (no pre, dev, post or local part)"
                    ));
                }
                if slot.replace(v).is_some() {
                    return Err(format!("{alt:?}: two {op} bounds"));
                }
            }
            if let (Some(l), Some(u)) = (&iv.lower, &iv.upper)
                && l >= u
            {
                return Err(format!(
                    "{alt:?}: empty (the lower edge is not below the upper)"
                ));
            }
            intervals.push(iv);
        }
        // Disjoint, in order, and not touching: a touching pair is one interval.
        for pair in intervals.windows(2) {
            match (&pair[0].upper, &pair[1].lower) {
                (Some(u), Some(l)) if u < l => {}
                _ => {
                    return Err(format!(
                        "{text:?}: alternatives must be written lowest first, apart and not \
                         touching"
                    ));
                }
            }
        }
        Ok(Range {
            text: text.trim().to_string(),
            intervals,
        })
    }

    /// Every edge, ascending.
    pub fn edges(&self) -> Vec<Version> {
        let mut e: Vec<Version> = self
            .intervals
            .iter()
            .flat_map(|i| i.lower.iter().chain(i.upper.iter()).cloned())
            .collect();
        e.sort();
        e.dedup();
        e
    }

    /// Is `v` inside? `None` stands for "below every version".
    pub fn contains(&self, v: Option<&Version>) -> bool {
        match v {
            Some(v) => self.intervals.iter().any(|i| i.contains(v)),
            None => self.intervals.iter().any(|i| i.lower.is_none()),
        }
    }

    /// The edge that explains why `v` (outside the range) is outside: the nearest upper edge at
    /// or below it (what ended the claim), else the nearest lower edge above it (what began it).
    pub(crate) fn explaining_edge(&self, v: Option<&Version>) -> Option<(Version, Side)> {
        let edges = self.edges();
        let below = v.and_then(|v| edges.iter().rev().find(|e| *e <= v).cloned());
        match below {
            Some(e) => Some((e, Side::Upper)),
            None => {
                let above = match v {
                    Some(v) => edges.into_iter().find(|e| e > v),
                    None => edges.into_iter().next(),
                };
                above.map(|e| (e, Side::Lower))
            }
        }
    }
}

/// Which side of a range an edge bounds, seen from a version outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The version is at or above the edge: the claim stopped holding there ("fixed in").
    Upper,
    /// The version is below the edge: the claim begins there ("introduced in").
    Lower,
}

/// Where an installed build can be, as far as its version number tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The lowest version the build can be (`None`: not known at all).
    pub low: Option<Version>,
    /// The highest it can be: `None` is unbounded; `Some((v, true))` at most `v`.
    pub high: Option<(Version, bool)>,
    /// How the version was read, when that is an assumption worth saying.
    pub note: Option<String>,
}

impl Placement {
    /// Nothing is known.
    pub fn unknown() -> Placement {
        Placement {
            low: None,
            high: None,
            note: None,
        }
    }

    /// Place an installed version string of `package`.
    pub fn of(package: Package, text: &str) -> Result<Placement, String> {
        let v = parse(text)?;
        if package == Package::Torch {
            let release = v.only_release();
            let note = (v.is_pre() || v.is_dev()).then(|| {
                format!(
                    "{} {text} is a pre-release or source build; read as {release} (PyTorch numbers \
                     its main branch after the coming release)",
                    package.display()
                )
            });
            return Ok(Placement {
                low: Some(release.clone()),
                high: Some((release, true)),
                note,
            });
        }
        if v.is_dev() {
            return Ok(Placement {
                low: Some(v.clone()),
                high: None,
                note: Some(format!(
                    "{} {text} is a development build: it has at least what its number says, \
                     and maybe later changes its number does not show",
                    package.display()
                )),
            });
        }
        if v.is_pre() {
            let release = v.only_release();
            return Ok(Placement {
                low: Some(v.clone()),
                high: Some((release.clone(), true)),
                note: Some(format!(
                    "{} {text} is a pre-release of {release}: it may lack changes made for the \
                     release",
                    package.display()
                )),
            });
        }
        Ok(Placement {
            low: Some(v.clone()),
            high: Some((v, true)),
            note: None,
        })
    }

    fn admits(&self, edge: &Version) -> bool {
        let above_low = self.low.as_ref().is_none_or(|l| edge > l);
        let below_high = match &self.high {
            None => true,
            Some((h, true)) => edge <= h,
            Some((h, false)) => edge < h,
        };
        above_low && below_high
    }
}

/// What a range says about a placed build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Inside,
    /// Outside, with the edge that explains it.
    Outside {
        edge: Version,
        side: Side,
    },
    /// The answer changes at `edge` and the version cannot tell which side the build is on.
    Ask {
        edge: Version,
    },
}

/// Decide `range` for a build placed at `placement`; `answered(edge)` is the user's answer to
/// "has the build reached `edge`?" (`Some(true)`: it has what `edge` changed).
pub fn decide(
    range: &Range,
    placement: &Placement,
    answered: impl Fn(&Version) -> Option<bool>,
) -> Decision {
    let mut low = placement.low.clone();
    let mut high = placement.high.clone();
    for edge in range.edges() {
        let span = Placement {
            low: low.clone(),
            high: high.clone(),
            note: None,
        };
        if !span.admits(&edge) {
            continue;
        }
        match answered(&edge) {
            Some(true) => low = Some(edge),
            Some(false) => {
                high = Some((edge, false));
                break;
            }
            None => {}
        }
    }
    let span = Placement {
        low: low.clone(),
        high,
        note: None,
    };
    let inside_low = range.contains(low.as_ref());
    for edge in range.edges() {
        if span.admits(&edge) && range.contains(Some(&edge)) != inside_low {
            return Decision::Ask { edge };
        }
    }
    if inside_low {
        return Decision::Inside;
    }
    match range.explaining_edge(low.as_ref()) {
        Some((edge, side)) => Decision::Outside { edge, side },
        // A range with no edge contains everything, so this is not reached.
        None => Decision::Inside,
    }
}

/// The question "has the installed `package` reached `edge`?". Answers files, `--answer` and
/// JSON name it by its id, `vllm_at_least_0.25.0` ([`VersionQuestion::id`],
/// [`VersionQuestion::parse`]); nothing else reads or writes that form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VersionQuestion {
    pub package: Package,
    pub edge: Version,
}

impl VersionQuestion {
    pub fn new(package: Package, edge: &Version) -> VersionQuestion {
        VersionQuestion {
            package,
            edge: edge.clone(),
        }
    }

    /// The id it is answered by: `vllm_at_least_0.25.0`.
    pub fn id(&self) -> String {
        format!("{}_at_least_{}", self.package.key(), self.edge)
    }

    /// The question an answer id names, if it names one.
    pub fn parse(id: &str) -> Option<VersionQuestion> {
        let (key, edge) = id.split_once("_at_least_")?;
        Some(VersionQuestion {
            package: Package::from_key(key)?,
            edge: parse(edge).ok()?,
        })
    }
}

/// Order two version strings by PEP 440 when both parse, else `None`.
pub fn compare(a: &str, b: &str) -> Option<Ordering> {
    Some(parse(a).ok()?.cmp(&parse(b).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        parse(s).expect("version")
    }

    fn r(s: &str) -> Range {
        Range::parse(s).expect("range")
    }

    fn place(p: Package, s: &str) -> Placement {
        Placement::of(p, s).expect("placement")
    }

    fn no_answers(_: &Version) -> Option<bool> {
        None
    }

    #[test]
    fn pep440_orders_the_builds_the_tool_meets() {
        assert!(v("0.24.0+cu130") > v("0.24.0") && v("0.24.0+cu130") < v("0.24.1"));
        assert!(v("0.25.1rc1.dev12+gabc") < v("0.25.1rc1"));
        assert!(v("0.25.1rc1.dev12+gabc") > v("0.25.0"));
        assert!(v("2.11.0a0+git123") < v("2.11.0") && v("2.11.0a0+git123") > v("2.10.0"));
        assert!(v("0.6.7.post1") > v("0.6.7"));
        assert!(v("0.26.1rc1.dev1219+g46638857f") < v("0.27.0"));
        assert_eq!(compare("0.24.0", "0.100.0"), Some(Ordering::Less));
        assert_eq!(compare("0.24.0", "not a version"), None);
    }

    #[test]
    fn ranges_are_half_open_with_alternatives() {
        let range = r(">=0.24.0,<0.25.0 || >=0.27.0,<0.28.0");
        assert_eq!(
            range.edges(),
            vec![v("0.24.0"), v("0.25.0"), v("0.27.0"), v("0.28.0")]
        );
        assert!(range.contains(Some(&v("0.24.0+cu130"))));
        assert!(range.contains(Some(&v("0.27.1"))));
        assert!(!range.contains(Some(&v("0.25.0"))));
        assert!(!range.contains(None));
        assert!(r("<0.30.0").contains(None));
        assert_eq!(range.to_string(), ">=0.24.0,<0.25.0 || >=0.27.0,<0.28.0");
    }

    #[test]
    fn bad_ranges_say_what_is_wrong() {
        let e = |s: &str| Range::parse(s).expect_err(s);
        assert!(e("==0.24.0").contains(">=V and <V only"));
        assert!(e("<=0.24.0").contains(">=V and <V only"));
        assert!(e(">=0.24.0rc1").contains("final release"));
        assert!(e(">=0.24.0+cu130").contains("final release"));
        assert!(e(">=0.25.0,<0.24.0").contains("empty"));
        assert!(e(">=0.24.0,>=0.25.0").contains("two >="));
        assert!(e(">=0.27.0 || <0.25.0").contains("lowest first"));
        assert!(e("<0.25.0 || >=0.25.0").contains("not touching"));
        assert!(e(">=x").contains("not a PEP 440 version"));
        assert!(e("").contains("empty alternative"));
    }

    #[test]
    fn final_releases_are_decided_with_the_edge_that_explains_them() {
        let range = r(">=0.24.0,<0.25.0");
        let d = |s: &str| decide(&range, &place(Package::Vllm, s), no_answers);
        assert_eq!(d("0.24.0"), Decision::Inside);
        assert_eq!(d("0.24.0+cu130"), Decision::Inside);
        assert_eq!(
            d("0.25.1"),
            Decision::Outside {
                edge: v("0.25.0"),
                side: Side::Upper
            }
        );
        assert_eq!(
            d("0.23.0"),
            Decision::Outside {
                edge: v("0.24.0"),
                side: Side::Lower
            }
        );
        // The DeepGEMM range: 0.25.x is between the alternatives, fixed at 0.25.0.
        let dg = r(">=0.24.0,<0.25.0 || >=0.27.0,<0.28.0");
        let d = |s: &str| decide(&dg, &place(Package::Vllm, s), no_answers);
        assert_eq!(
            d("0.26.0"),
            Decision::Outside {
                edge: v("0.25.0"),
                side: Side::Upper
            }
        );
        assert_eq!(d("0.27.1+cu129"), Decision::Inside);
        assert_eq!(
            d("0.29.0"),
            Decision::Outside {
                edge: v("0.28.0"),
                side: Side::Upper
            }
        );
    }

    #[test]
    fn a_dev_build_is_asked_about_the_first_edge_above_it() {
        let range = r(">=0.24.0,<0.25.0");
        // A nightly after 0.24.0: it may already carry the 0.25.0 change.
        assert_eq!(
            decide(
                &range,
                &place(Package::Vllm, "0.24.1rc1.dev5+gabc"),
                no_answers
            ),
            Decision::Ask { edge: v("0.25.0") }
        );
        // A nightly named after 0.25.x is past the edge whatever it carries.
        assert_eq!(
            decide(
                &range,
                &place(Package::Vllm, "0.25.1rc1.dev12+gabc"),
                no_answers
            ),
            Decision::Outside {
                edge: v("0.25.0"),
                side: Side::Upper
            }
        );
        // A nightly below the range may be newer than its number: ask about the lower edge.
        assert_eq!(
            decide(&range, &place(Package::Vllm, "0.23.1rc1.dev3"), no_answers),
            Decision::Ask { edge: v("0.24.0") }
        );
        // Answers settle it.
        let p = place(Package::Vllm, "0.24.1rc1.dev5+gabc");
        assert_eq!(
            decide(&range, &p, |e| (*e == v("0.25.0")).then_some(false)),
            Decision::Inside
        );
        assert_eq!(
            decide(&range, &p, |e| (*e == v("0.25.0")).then_some(true)),
            Decision::Outside {
                edge: v("0.25.0"),
                side: Side::Upper
            }
        );
        // The #52035 nightly: 0.26.1rc1.dev1219 against the 0.27 regression window.
        let dg = r(">=0.24.0,<0.25.0 || >=0.27.0,<0.28.0");
        let p = place(Package::Vllm, "0.26.1rc1.dev1219+g46638857f");
        assert_eq!(
            decide(&dg, &p, no_answers),
            Decision::Ask { edge: v("0.27.0") }
        );
        assert_eq!(
            decide(&dg, &p, |e| Some(*e <= v("0.28.0"))),
            Decision::Outside {
                edge: v("0.28.0"),
                side: Side::Upper
            }
        );
        // An unbounded range above the build: every later version agrees.
        assert_eq!(
            decide(
                &r(">=0.30.0"),
                &place(Package::Vllm, "0.31.1.dev4"),
                no_answers
            ),
            Decision::Inside
        );
    }

    #[test]
    fn a_pre_release_is_asked_only_about_its_own_release() {
        let range = r(">=0.24.0,<0.25.0");
        assert_eq!(
            decide(&range, &place(Package::Vllm, "0.25.0rc1"), no_answers),
            Decision::Ask { edge: v("0.25.0") }
        );
        assert_eq!(
            decide(&range, &place(Package::Vllm, "0.24.0rc2"), no_answers),
            Decision::Ask { edge: v("0.24.0") }
        );
        // 0.26.0rc1 is past 0.25.0 whatever it lacks of 0.26.0.
        assert!(matches!(
            decide(&range, &place(Package::Vllm, "0.26.0rc1"), no_answers),
            Decision::Outside { .. }
        ));
    }

    #[test]
    fn torch_is_read_on_its_release_segment() {
        let range = r(">=2.10.0");
        let p = place(Package::Torch, "2.10.0a0+git123");
        assert_eq!(decide(&range, &p, no_answers), Decision::Inside);
        assert!(
            p.note
                .as_deref()
                .is_some_and(|n| n.contains("read as 2.10.0"))
        );
        assert!(place(Package::Torch, "2.11.0+cu130").note.is_none());
        assert_eq!(
            decide(&range, &place(Package::Torch, "2.9.1+cu128"), no_answers),
            Decision::Outside {
                edge: v("2.10.0"),
                side: Side::Lower
            }
        );
    }

    #[test]
    fn an_unknown_version_is_asked_lowest_edge_first() {
        let range = r(">=0.24.0,<0.25.0");
        let p = Placement::unknown();
        assert_eq!(
            decide(&range, &p, no_answers),
            Decision::Ask { edge: v("0.24.0") }
        );
        assert_eq!(
            decide(&range, &p, |e| (*e == v("0.24.0")).then_some(true)),
            Decision::Ask { edge: v("0.25.0") }
        );
        assert_eq!(
            decide(&range, &p, |e| Some(*e == v("0.24.0"))),
            Decision::Inside
        );
        assert_eq!(
            decide(&range, &p, |_| Some(false)),
            Decision::Outside {
                edge: v("0.24.0"),
                side: Side::Lower
            }
        );
    }

    #[test]
    fn question_ids_round_trip() {
        let q = VersionQuestion::new(Package::Vllm, &v("0.25.0"));
        assert_eq!(q.id(), "vllm_at_least_0.25.0");
        assert_eq!(VersionQuestion::parse(&q.id()), Some(q));
        assert_eq!(
            VersionQuestion::parse("deep_gemm_at_least_2.5.0"),
            Some(VersionQuestion::new(Package::DeepGemm, &v("2.5.0")))
        );
        assert_eq!(VersionQuestion::parse("vllm_at_least_x"), None);
        assert_eq!(VersionQuestion::parse("aipc_tp"), None);
        assert!(Placement::of(Package::Vllm, "garbage").is_err());
    }
}
