//! Why something is not known, as a type: which input is missing, or what kind of absence it
//! is, with the producer's words. The floor under both the snapshot (whose facts carry one when
//! they have no value) and `value` (whose `Unknown` carries one); it imports nothing.

use std::fmt;

/// An input a person gives the doctor. Each front end says how to give it in its own words
/// (the command line by its options, the TUI by its keys); the model only names which one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Input {
    /// A vLLM log.
    Log,
    /// The vLLM launch command (or its file).
    Launch,
    /// The allocator/IPC probe (`probe ipc`).
    IpcProbe,
    /// The functional peer-to-peer probe (`probe p2p`).
    P2pProbe,
    /// The PCI fabric (IOMMU, ACS) read from /proc and /sys.
    PciFabric,
}

impl Input {
    /// Every input, in the order front ends list them.
    pub const ALL: [Input; 5] = [
        Input::Log,
        Input::Launch,
        Input::IpcProbe,
        Input::P2pProbe,
        Input::PciFabric,
    ];

    /// The input's name in knowledge-base prose: `{input:launch}`.
    pub fn name(self) -> &'static str {
        match self {
            Input::Log => "log",
            Input::Launch => "launch",
            Input::IpcProbe => "ipc_probe",
            Input::P2pProbe => "p2p_probe",
            Input::PciFabric => "pci_fabric",
        }
    }

    pub fn from_name(name: &str) -> Option<Input> {
        Input::ALL.into_iter().find(|i| i.name() == name)
    }

    /// How the command line gives it: its option, or the command that measures it.
    pub fn cli_how(self) -> &'static str {
        match self {
            Input::Log => "--log FILE",
            Input::Launch => "--launch CMD or --launch-file FILE",
            Input::IpcProbe => "`sm120-doctor probe ipc`",
            Input::P2pProbe => "`sm120-doctor probe p2p`",
            Input::PciFabric => "`sm120-doctor snapshot`",
        }
    }
}

/// The placeholder that names an input in knowledge-base prose: `{input:NAME}`.
pub const INPUT_PLACEHOLDER: &str = "{input:";

/// `text` with each `{input:NAME}` replaced by `how(input)`: each front end says how to give
/// an input in its own words. An unknown name is left as written (`kb lint` and a test refuse
/// one in the knowledge base).
pub fn fill_inputs(text: &str, how: impl Fn(Input) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(INPUT_PLACEHOLDER) {
        out.push_str(&rest[..start]);
        let after = &rest[start + INPUT_PLACEHOLDER.len()..];
        match after
            .find('}')
            .and_then(|end| Some((end, Input::from_name(&after[..end])?)))
        {
            Some((end, input)) => {
                out.push_str(&how(input));
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(INPUT_PLACEHOLDER);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The `{input:NAME}` names in `text` that name no input.
pub fn unknown_inputs(text: &str) -> Vec<String> {
    text.match_indices(INPUT_PLACEHOLDER)
        .filter_map(|(i, _)| {
            let after = &text[i + INPUT_PLACEHOLDER.len()..];
            let name = after.split('}').next().unwrap_or(after);
            Input::from_name(name).is_none().then(|| name.to_string())
        })
        .collect()
}

/// What kind of absence a reason is: the part a front end or a metric may branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    /// An input was not given (or a probe not run).
    Missing(Input),
    /// The package or program is not installed.
    NotInstalled,
    /// No NVIDIA driver (library or kernel module) on this host.
    NoDriver,
    /// It did not answer in time.
    Timeout,
    /// The operating system refused access.
    NoPermission,
    /// The GPU, driver or platform does not support it.
    NotSupported,
    /// A file or program it needs is not there.
    NotFound,
    /// The imported input (a report, a snapshot) does not hold it.
    NotInInput,
    /// The user asked for it not to be collected (an option), or nobody asked for it.
    NotRequested,
    /// The collector ran but gave nothing back.
    NoResult,
    /// Anything else: the detail says what.
    Other,
}

impl ReasonCode {
    /// The code as a stable label (metrics, JSON).
    pub fn label(self) -> &'static str {
        match self {
            ReasonCode::Missing(_) | ReasonCode::NotRequested => "not_requested",
            ReasonCode::NotInstalled => "not_installed",
            ReasonCode::NoDriver => "no_driver",
            ReasonCode::Timeout => "timeout",
            ReasonCode::NoPermission => "no_permission",
            ReasonCode::NotSupported => "not_supported",
            ReasonCode::NotFound => "not_found",
            ReasonCode::NotInInput => "not_in_input",
            ReasonCode::NoResult => "no_result",
            ReasonCode::Other => "other",
        }
    }
}

/// Why something is not known: a code to branch on, the collector's own words for it, and
/// what it reached through ("skipped", "environment not collected"), outermost first.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Reason {
    pub code: ReasonCode,
    /// The producer's words; `None` when the code says it all (a missing input).
    pub detail: Option<String>,
    /// Words put before it as it travels ("skipped", "failed", "environment not collected").
    pub context: Vec<String>,
}

impl Reason {
    pub fn new(code: ReasonCode, detail: impl Into<String>) -> Reason {
        Reason {
            code,
            detail: Some(detail.into()),
            context: Vec::new(),
        }
    }

    /// An input not given; each front end says how to give it.
    pub fn missing(input: Input) -> Reason {
        Reason {
            code: ReasonCode::Missing(input),
            detail: None,
            context: Vec::new(),
        }
    }

    /// The input this reason says is missing, if that is what it says.
    pub fn missing_input(&self) -> Option<Input> {
        match self.code {
            ReasonCode::Missing(i) => Some(i),
            _ => None,
        }
    }

    /// The same reason, reached through `what` ("skipped", "environment not collected").
    pub fn within(mut self, what: impl Into<String>) -> Reason {
        self.context.insert(0, what.into());
        self
    }

    /// The reason with its own part rendered by `own` (a front end's words for a missing
    /// input), the context before it.
    pub fn render_with(&self, own: impl FnOnce(&Reason) -> String) -> String {
        let mut out = String::new();
        for c in &self.context {
            out.push_str(c);
            out.push_str(": ");
        }
        out.push_str(&own(self));
        out
    }

    /// The reason's own words without context: the detail, else the command line's words for
    /// the code (the default rendering; the TUI has its own, `tui::words`).
    pub fn own_words(&self) -> String {
        match &self.detail {
            Some(d) => d.clone(),
            None => self.code.cli_words().to_string(),
        }
    }
}

impl ReasonCode {
    /// How the command line says the code when no detail is given: a missing input names the
    /// option that gives it. These are also the words a recorded snapshot keeps (they read back
    /// to the same code).
    pub fn cli_words(self) -> &'static str {
        match self {
            ReasonCode::Missing(Input::Log) => "no log given (--log FILE)",
            ReasonCode::Missing(Input::Launch) => {
                "no launch command given (--launch or --launch-file)"
            }
            ReasonCode::Missing(Input::IpcProbe) => {
                "allocator/IPC probe not run (sm120-doctor probe ipc)"
            }
            ReasonCode::Missing(Input::P2pProbe) => "P2P probe not run (sm120-doctor probe p2p)",
            ReasonCode::Missing(Input::PciFabric) => "PCI fabric (IOMMU/ACS) not collected",
            ReasonCode::NotInstalled => "not installed",
            ReasonCode::NoDriver => "no NVIDIA driver",
            ReasonCode::Timeout => "timed out",
            ReasonCode::NoPermission => "no permission",
            ReasonCode::NotSupported => "not supported",
            ReasonCode::NotFound => "not found",
            ReasonCode::NotInInput => "not in the input",
            ReasonCode::NotRequested => "not collected",
            ReasonCode::NoResult => "no result",
            ReasonCode::Other => "not known",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_with(Reason::own_words))
    }
}

/// Free words with no code to branch on (`ReasonCode::Other`).
impl From<String> for Reason {
    fn from(detail: String) -> Reason {
        Reason::new(ReasonCode::Other, detail)
    }
}

impl From<&str> for Reason {
    fn from(detail: &str) -> Reason {
        Reason::new(ReasonCode::Other, detail)
    }
}

impl From<&String> for Reason {
    fn from(detail: &String) -> Reason {
        Reason::new(ReasonCode::Other, detail.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_placeholders_are_filled_by_the_front_ends_words() {
        let t = "Run {input:ipc_probe} (a few seconds); give {input:launch}.";
        assert_eq!(
            fill_inputs(t, |i| i.cli_how().to_string()),
            "Run `sm120-doctor probe ipc` (a few seconds); give --launch CMD or --launch-file FILE."
        );
        assert_eq!(
            fill_inputs("{input:nope} {x}", |_| "?".into()),
            "{input:nope} {x}"
        );
        assert_eq!(unknown_inputs("{input:log} {input:nope}"), vec!["nope"]);
        for i in Input::ALL {
            assert_eq!(Input::from_name(i.name()), Some(i));
        }
    }

    #[test]
    fn reasons_keep_their_code_through_context() {
        let r = Reason::missing(Input::Log).within("skipped");
        assert_eq!(r.missing_input(), Some(Input::Log));
        assert_eq!(r.to_string(), "skipped: no log given (--log FILE)");
        assert_eq!(r.render_with(|_| "paste one".into()), "skipped: paste one");
        let t = Reason::new(ReasonCode::Timeout, "NVML did not answer within 5 s");
        assert_eq!(t.to_string(), "NVML did not answer within 5 s");
        assert_eq!(t.code.label(), "timeout");
        assert_eq!(Reason::from("free words").code, ReasonCode::Other);
    }
}
