//! PyTorch's caching-allocator variables: the one place the tool interprets them.
//!
//! Which variable is in effect ([`Precedence`]), how a config splits into options ([`items`]),
//! whether a boolean option is on ([`switch`]), and how an option is dropped or set while every
//! other item stays as written ([`drop_option`], [`set_option`]). Facts, `fix`, the report's
//! remedy commands, the IPC probe and the TUI all read the variables through these functions,
//! so they cannot disagree.
//!
//! The rules, with their sources:
//! - Tokens: c10/core/AllocatorConfig.h (`ConfigTokenizer`, pytorch/pytorch at
//!   007b9bc026a6844ce406a10aa8820a466cf2d770) splits on `,` `:` `[` `]` and drops whitespace.
//! - Booleans: `ConfigTokenizer::toBool` accepts exactly `True` and `False`; anything else
//!   (`1`, `true`, `TRUE`) raises `ValueError: Expected 'True' or 'False' at index N in
//!   ConfigTokenizer but got '...'` at the first CUDA allocation, so the engine never starts.
//! - Precedence on torch 2.11.0+cu130, measured on H200
//!   (tests/fixtures/h200x2/allocator-precedence-torch2.11.txt): see [`Precedence::CudaVarWins`].
//! - Precedence per torch release ([`Precedence::for_torch`]), read from the PyPI CUDA wheels'
//!   headers (`c10/cuda/CUDAAllocatorConfig.h` `instance()`) and `libc10*.so` strings of torch
//!   2.8.0, 2.9.0, 2.9.1, 2.10.0, 2.11.0, 2.12.0, 2.13.0 and 2.14.0: before 2.10 the CUDA caching
//!   allocator reads only `PYTORCH_CUDA_ALLOC_CONF` ([`Precedence::CudaVarOnly`]; in 2.9.1
//!   `PYTORCH_ALLOC_CONF=expandable_segments:True` is ignored on CUDA, pytorch/pytorch#183387);
//!   from 2.10 the CUDA variable when set, else the generic one.

use std::ops::Range;

/// The CUDA-specific variable (the older name).
pub const CUDA_VAR: &str = "PYTORCH_CUDA_ALLOC_CONF";
/// The device-generic variable (the newer name).
pub const GENERIC_VAR: &str = "PYTORCH_ALLOC_CONF";
/// Both allocator variables.
pub const VARS: [&str; 2] = [CUDA_VAR, GENERIC_VAR];
/// The option behind the allocator/IPC crash.
pub const EXPANDABLE_SEGMENTS: &str = "expandable_segments";
/// The only words PyTorch accepts for a boolean option.
pub const TRUE: &str = "True";
pub const FALSE: &str = "False";

/// Which allocator variable PyTorch reads. The rule changed between torch releases, so callers
/// pass the rule in ([`Precedence::for_torch`]); the default is the rule of torch 2.10 and
/// later (measured on 2.11), which every torch vLLM 0.22 and later pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precedence {
    /// torch 2.10 and later: `PYTORCH_CUDA_ALLOC_CONF`, when set (even empty), is the whole
    /// config and `PYTORCH_ALLOC_CONF` is ignored; when it is unset, `PYTORCH_ALLOC_CONF`
    /// applies. The options of the two are never merged.
    #[default]
    CudaVarWins,
    /// torch 2.8 and 2.9: the CUDA caching allocator reads only `PYTORCH_CUDA_ALLOC_CONF`.
    /// `PYTORCH_ALLOC_CONF` is not read for it (2.8 has no such variable; 2.9 reads it into the
    /// device-generic config, but the CUDA allocator takes expandable_segments from its own,
    /// pytorch/pytorch#183387), and 2.9 warns that `PYTORCH_CUDA_ALLOC_CONF is deprecated`.
    CudaVarOnly,
}

/// The first torch release whose CUDA allocator falls back to `PYTORCH_ALLOC_CONF`.
pub const GENERIC_VAR_SINCE_TORCH: &str = "2.10.0";

/// The rule a verdict used and the torch it assumed, for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TorchRule {
    pub precedence: Precedence,
    /// `torch 2.9.1+cu128: only PYTORCH_CUDA_ALLOC_CONF is read (torch < 2.10)`.
    pub assumed: String,
}

impl Precedence {
    /// Every rule, for validating names in the knowledge base.
    pub const ALL: [Precedence; 2] = [Precedence::CudaVarWins, Precedence::CudaVarOnly];

    /// The rule's name in the knowledge base (`allocator.yaml`).
    pub fn name(self) -> &'static str {
        match self {
            Precedence::CudaVarWins => "cuda_var_wins",
            Precedence::CudaVarOnly => "cuda_var_only",
        }
    }

    pub fn from_name(name: &str) -> Option<Precedence> {
        Precedence::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The rule for an installed torch (`torch.__version__`); `None` or an unreadable version
    /// assumes the default and says so. Source and nightly builds (`2.10.0a0+git…`) are read on
    /// their release segment.
    pub fn for_torch(version: Option<&str>) -> TorchRule {
        use super::version::parse;
        let since = parse(GENERIC_VAR_SINCE_TORCH).ok();
        let read = version.map(|v| (v, parse(v).map(|p| p.only_release())));
        match (read, since) {
            (Some((v, Ok(release))), Some(since)) if release < since => TorchRule {
                precedence: Precedence::CudaVarOnly,
                assumed: format!(
                    "torch {v}: the CUDA allocator reads only PYTORCH_CUDA_ALLOC_CONF \
                     (torch before {GENERIC_VAR_SINCE_TORCH} ignores PYTORCH_ALLOC_CONF for it)"
                ),
            },
            (Some((v, Ok(_))), _) => TorchRule {
                precedence: Precedence::CudaVarWins,
                assumed: format!(
                    "torch {v}: PYTORCH_CUDA_ALLOC_CONF when set (even empty), else \
                     PYTORCH_ALLOC_CONF"
                ),
            },
            (read, _) => TorchRule {
                precedence: Precedence::CudaVarWins,
                assumed: format!(
                    "torch version {}: assumed torch {GENERIC_VAR_SINCE_TORCH} or newer (the \
                     torch of every vLLM since 0.22): PYTORCH_CUDA_ALLOC_CONF when set (even \
                     empty), else PYTORCH_ALLOC_CONF",
                    match read {
                        Some((v, _)) => format!("{v:?} not readable"),
                        None => "not known".into(),
                    }
                ),
            },
        }
    }

    /// The variables in the order PyTorch consults them: the first one set is the whole config.
    pub fn order(self) -> &'static [&'static str] {
        match self {
            Precedence::CudaVarWins => &[CUDA_VAR, GENERIC_VAR],
            Precedence::CudaVarOnly => &[CUDA_VAR],
        }
    }

    /// The variables this rule never reads for the CUDA allocator.
    pub(crate) fn never_read(self) -> &'static [&'static str] {
        match self {
            Precedence::CudaVarWins => &[],
            Precedence::CudaVarOnly => &[GENERIC_VAR],
        }
    }

    /// The variable in effect and what `get` says about it. `get` answers for one variable:
    /// `Ok(Some(x))` set, `Ok(None)` unset, `Err(why)` not known. A variable consulted before
    /// the one in effect that is not known makes the answer not known.
    pub fn resolve<T, E>(
        self,
        mut get: impl FnMut(&'static str) -> Result<Option<T>, E>,
    ) -> Result<Option<(&'static str, T)>, E> {
        for &var in self.order() {
            if let Some(v) = get(var)? {
                return Ok(Some((var, v)));
            }
        }
        Ok(None)
    }

    /// The config in effect from a plain variable map: (variable, value).
    pub fn in_effect<'a>(
        self,
        get: impl Fn(&str) -> Option<&'a str>,
    ) -> Option<(&'static str, &'a str)> {
        self.resolve(|var| Ok::<_, ()>(get(var))).ok().flatten()
    }

    /// The variables PyTorch ignores while `in_effect` is the one it reads.
    pub fn ignored_while(self, in_effect: &str) -> Vec<&'static str> {
        let order = self.order();
        let mut out = match order.iter().position(|v| *v == in_effect) {
            Some(i) => order[i + 1..].to_vec(),
            None => Vec::new(),
        };
        out.extend(self.never_read());
        out
    }
}

/// One `key:value` item of a config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item<'a> {
    /// The key as PyTorch reads it (whitespace removed).
    pub key: String,
    /// The value as PyTorch reads it (whitespace removed; `[..]` lists kept whole). `None`
    /// when the item has no `:`.
    pub value: Option<String>,
    /// The item as written, without the spaces around it.
    pub text: &'a str,
    /// Where `text` sits in the config.
    pub range: Range<usize>,
}

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The items of a config, in order. Commas inside `[...]` (e.g. `roundup_power2_divisions`)
/// do not split; empty items are skipped.
pub fn items(conf: &str) -> Vec<Item<'_>> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut push = |from: usize, to: usize| {
        let raw = &conf[from..to];
        let text = raw.trim();
        if text.is_empty() {
            return;
        }
        let lead = raw.len() - raw.trim_start().len();
        let (key, value) = match text.split_once(':') {
            Some((k, v)) => (squeeze(k), Some(squeeze(v))),
            None => (squeeze(text), None),
        };
        out.push(Item {
            key,
            value,
            text,
            range: from + lead..from + lead + text.len(),
        });
    };
    for (i, c) in conf.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                push(start, i);
                start = i + 1;
            }
            _ => {}
        }
    }
    push(start, conf.len());
    out
}

/// What a config says about one boolean option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Switch {
    /// The option is not in the config (PyTorch's default applies: off).
    Absent,
    On,
    Off,
    /// A value PyTorch rejects at start-up (anything but `True` / `False`), as PyTorch reads
    /// it; empty when the item has no value at all.
    Invalid(String),
}

impl Switch {
    /// PyTorch's reading of one value word.
    pub(crate) fn of_value(value: &str) -> Switch {
        match value {
            TRUE => Switch::On,
            FALSE => Switch::Off,
            other => Switch::Invalid(other.to_string()),
        }
    }

    pub fn is_on(&self) -> bool {
        *self == Switch::On
    }

    pub fn is_invalid(&self) -> bool {
        matches!(self, Switch::Invalid(_))
    }

    /// The value as PyTorch reads it (`None` when the option is absent).
    pub fn value(&self) -> Option<&str> {
        match self {
            Switch::Absent => None,
            Switch::On => Some(TRUE),
            Switch::Off => Some(FALSE),
            Switch::Invalid(v) => Some(v),
        }
    }
}

fn item_switch(item: &Item<'_>) -> Switch {
    Switch::of_value(item.value.as_deref().unwrap_or(""))
}

/// Is boolean `option` on in `conf`? PyTorch reads the items left to right: an invalid value
/// stops start-up wherever it is; otherwise the last occurrence wins.
pub fn switch(conf: &str, option: &str) -> Switch {
    let mut state = Switch::Absent;
    for item in items(conf).iter().filter(|i| i.key == option) {
        match item_switch(item) {
            invalid @ Switch::Invalid(_) => return invalid,
            s => state = s,
        }
    }
    state
}

/// `conf` without the items that turn boolean `option` on or give it a value PyTorch rejects;
/// every other item stays as written. `None` when there is nothing to drop.
pub fn drop_option(conf: &str, option: &str) -> Option<String> {
    let all = items(conf);
    let hit = |i: &Item<'_>| i.key == option && item_switch(i) != Switch::Off;
    if !all.iter().any(hit) {
        return None;
    }
    Some(
        all.iter()
            .filter(|i| !hit(i))
            .map(|i| i.text)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// `conf` with `option` set to `value`: earlier occurrences removed, `option:value` appended,
/// every other item kept as written.
pub fn set_option(conf: &str, option: &str, value: &str) -> String {
    let mut kept: Vec<String> = items(conf)
        .iter()
        .filter(|i| i.key != option)
        .map(|i| i.text.to_string())
        .collect();
    kept.push(format!("{option}:{value}"));
    kept.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn in_effect(e: &BTreeMap<String, String>) -> Option<(&'static str, &str)> {
        Precedence::default().in_effect(|v| e.get(v).map(String::as_str))
    }

    /// The rows of the torch 2.11 measurement (tests/fixtures/h200x2/allocator-precedence-torch2.11.txt):
    /// (PYTORCH_CUDA_ALLOC_CONF, PYTORCH_ALLOC_CONF, expandable segments in effect).
    #[test]
    fn precedence_matches_the_torch_2_11_measurement() {
        let rows: &[(Option<&str>, Option<&str>, Switch)] = &[
            (None, None, Switch::Absent),
            (Some("expandable_segments:True"), None, Switch::On),
            (None, Some("expandable_segments:True"), Switch::On),
            (Some(""), Some("expandable_segments:True"), Switch::Absent),
            (
                Some("expandable_segments:False"),
                Some("expandable_segments:True"),
                Switch::Off,
            ),
            (
                Some("expandable_segments:True"),
                Some("expandable_segments:False"),
                Switch::On,
            ),
            (
                Some("max_split_size_mb:256"),
                Some("expandable_segments:True"),
                Switch::Absent,
            ),
            (
                Some("expandable_segments:true"),
                None,
                Switch::Invalid("true".into()),
            ),
            (
                Some("expandable_segments:1"),
                None,
                Switch::Invalid("1".into()),
            ),
        ];
        for (cuda, generic, want) in rows {
            let mut e = BTreeMap::new();
            if let Some(c) = cuda {
                e.insert(CUDA_VAR.to_string(), c.to_string());
            }
            if let Some(g) = generic {
                e.insert(GENERIC_VAR.to_string(), g.to_string());
            }
            let got = in_effect(&e)
                .map(|(_, conf)| switch(conf, EXPANDABLE_SEGMENTS))
                .unwrap_or(Switch::Absent);
            assert_eq!(&got, want, "CUDA={cuda:?} ALLOC={generic:?}");
        }
    }

    #[test]
    fn the_cuda_variable_wins_even_when_empty() {
        let e = env(&[(CUDA_VAR, ""), (GENERIC_VAR, "expandable_segments:True")]);
        assert_eq!(in_effect(&e), Some((CUDA_VAR, "")));
        let e = env(&[(GENERIC_VAR, "expandable_segments:True")]);
        assert_eq!(in_effect(&e).map(|x| x.0), Some(GENERIC_VAR));
        assert_eq!(in_effect(&env(&[])), None);
        assert_eq!(
            Precedence::default().ignored_while(CUDA_VAR),
            vec![GENERIC_VAR]
        );
        assert!(Precedence::default().ignored_while(GENERIC_VAR).is_empty());
    }

    #[test]
    fn an_unknown_variable_before_the_one_in_effect_makes_the_answer_unknown() {
        let p = Precedence::default();
        let r: Result<_, &str> = p.resolve(|v| if v == CUDA_VAR { Err("?") } else { Ok(Some(1)) });
        assert_eq!(r, Err("?"));
        let r: Result<_, &str> = p.resolve(|v| if v == CUDA_VAR { Ok(Some(0)) } else { Err("?") });
        assert_eq!(r, Ok(Some((CUDA_VAR, 0))));
        assert_eq!(Precedence::from_name("cuda_var_wins"), Some(p));
        assert_eq!(Precedence::from_name("alloc_var_wins"), None);
    }

    /// The rule per torch release: 2.8 and 2.9 read only the CUDA variable; 2.10 on fall back
    /// to the generic one; a torch that cannot be read assumes the newer rule and says so.
    #[test]
    fn the_rule_follows_the_torch_release() {
        let rule = |v: Option<&str>| Precedence::for_torch(v).precedence;
        assert_eq!(rule(Some("2.8.0+cu128")), Precedence::CudaVarOnly);
        assert_eq!(rule(Some("2.9.1+cu128")), Precedence::CudaVarOnly);
        assert_eq!(rule(Some("2.10.0")), Precedence::CudaVarWins);
        assert_eq!(rule(Some("2.10.0a0+git449b176")), Precedence::CudaVarWins);
        assert_eq!(rule(Some("2.11.0+cu130")), Precedence::CudaVarWins);
        assert_eq!(rule(Some("2.14.0")), Precedence::CudaVarWins);
        let unknown = Precedence::for_torch(None);
        assert_eq!(unknown.precedence, Precedence::CudaVarWins);
        assert!(unknown.assumed.contains("not known") && unknown.assumed.contains("assumed"));
        assert!(
            Precedence::for_torch(Some("weird"))
                .assumed
                .contains("not readable")
        );
        assert!(
            Precedence::for_torch(Some("2.9.1"))
                .assumed
                .starts_with("torch 2.9.1:")
        );
        // pytorch#183387: on 2.9.1 PYTORCH_ALLOC_CONF=expandable_segments:True is ignored on CUDA.
        let e = env(&[(GENERIC_VAR, "expandable_segments:True")]);
        let old = Precedence::CudaVarOnly;
        assert_eq!(old.in_effect(|v| e.get(v).map(String::as_str)), None);
        assert_eq!(old.ignored_while(CUDA_VAR), vec![GENERIC_VAR]);
        let e = env(&[(CUDA_VAR, "expandable_segments:True")]);
        assert_eq!(
            old.in_effect(|v| e.get(v).map(String::as_str)).map(|x| x.0),
            Some(CUDA_VAR)
        );
        assert_eq!(Precedence::from_name("cuda_var_only"), Some(old));
    }

    /// The verdict for each spelling: only `True` is on, only `False` is off.
    #[test]
    fn expandable_segments_spellings() {
        let v = |s: &str| switch(&format!("expandable_segments:{s}"), EXPANDABLE_SEGMENTS);
        assert_eq!(v("True"), Switch::On);
        assert_eq!(v("False"), Switch::Off);
        assert_eq!(v("1"), Switch::Invalid("1".into()));
        assert_eq!(v("true"), Switch::Invalid("true".into()));
        assert_eq!(v("TRUE"), Switch::Invalid("TRUE".into()));
        assert_eq!(v("false"), Switch::Invalid("false".into()));
        assert_eq!(v("0"), Switch::Invalid("0".into()));
        assert_eq!(
            v(" True "),
            Switch::On,
            "whitespace is dropped by the tokenizer"
        );
        assert_eq!(
            switch("expandable_segments", EXPANDABLE_SEGMENTS),
            Switch::Invalid(String::new())
        );
        assert_eq!(switch("", EXPANDABLE_SEGMENTS), Switch::Absent);
        assert_eq!(
            switch("max_split_size_mb:512", EXPANDABLE_SEGMENTS),
            Switch::Absent
        );
        // Left to right: the last valid value wins; an invalid one anywhere stops start-up.
        assert_eq!(
            switch(
                "expandable_segments:True,expandable_segments:False",
                EXPANDABLE_SEGMENTS
            ),
            Switch::Off
        );
        assert_eq!(
            switch(
                "expandable_segments:1,expandable_segments:True",
                EXPANDABLE_SEGMENTS
            ),
            Switch::Invalid("1".into())
        );
        assert!(v("True").is_on() && !v("1").is_on() && v("1").is_invalid());
        assert_eq!(v("TRUE").value(), Some("TRUE"));
        assert_eq!(Switch::Absent.value(), None);
    }

    #[test]
    fn items_keep_lists_whole_and_know_their_place() {
        let conf = "roundup_power2_divisions:[64:8,256:4], expandable_segments : True ,,x";
        let it = items(conf);
        assert_eq!(
            it.iter().map(|i| i.key.as_str()).collect::<Vec<_>>(),
            vec!["roundup_power2_divisions", "expandable_segments", "x"]
        );
        assert_eq!(it[0].value.as_deref(), Some("[64:8,256:4]"));
        assert_eq!(it[1].value.as_deref(), Some("True"));
        assert_eq!(it[1].text, "expandable_segments : True");
        assert_eq!(&conf[it[1].range.clone()], it[1].text);
        assert_eq!(it[2].value, None);
    }

    #[test]
    fn drop_keeps_the_others_as_written() {
        let d = |c: &str| drop_option(c, EXPANDABLE_SEGMENTS);
        assert_eq!(
            d("expandable_segments:True,max_split_size_mb:512"),
            Some("max_split_size_mb:512".into())
        );
        assert_eq!(
            d("max_split_size_mb:512, expandable_segments:True"),
            Some("max_split_size_mb:512".into())
        );
        assert_eq!(d("expandable_segments:True"), Some(String::new()));
        for invalid in ["1", "true", "TRUE", "false"] {
            assert_eq!(
                d(&format!(
                    "expandable_segments:{invalid},garbage_collection_threshold:0.6"
                )),
                Some("garbage_collection_threshold:0.6".into()),
                "{invalid}"
            );
        }
        assert_eq!(d("expandable_segments:False"), None);
        assert_eq!(d("max_split_size_mb:512"), None);
        assert_eq!(d(""), None);
        assert_eq!(
            d("roundup_power2_divisions:[64:8,256:4],expandable_segments:True"),
            Some("roundup_power2_divisions:[64:8,256:4]".into())
        );
    }

    #[test]
    fn set_replaces_every_occurrence_and_appends() {
        assert_eq!(
            set_option(
                "expandable_segments:True,max_split_size_mb:512",
                EXPANDABLE_SEGMENTS,
                FALSE
            ),
            "max_split_size_mb:512,expandable_segments:False"
        );
        assert_eq!(
            set_option("", EXPANDABLE_SEGMENTS, TRUE),
            "expandable_segments:True"
        );
        assert_eq!(
            set_option("expandable_segments:1", EXPANDABLE_SEGMENTS, FALSE),
            "expandable_segments:False"
        );
    }
}
