//! YAML as a tree of nodes with byte spans, from granit-parser's events (the span-preserving
//! parser serde-saphyr is built on). Compose files, Kubernetes manifests and Helm values are read
//! through it; edits splice the original text at these spans.

use super::{LaunchError, YamlQuote};
use granit_parser::{Event, Parser, ScalarStyle, StructureStyle};
use std::collections::HashMap;
use std::ops::Range;

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    /// The node's text: a scalar with its quotes, a flow collection with its brackets, a block
    /// collection from its first item to the end of its last.
    pub span: Range<usize>,
    /// 1-based.
    pub line: usize,
    /// The anchor defined on it (`&name`), if any.
    pub anchor: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Scalar {
        value: String,
        style: ScalarStyle,
    },
    Seq {
        items: Vec<Node>,
        flow: bool,
    },
    Map {
        entries: Vec<(Node, Node)>,
        flow: bool,
    },
    /// `*name`: resolved through [`Doc::resolve`].
    Alias(usize),
}

impl Node {
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            NodeKind::Map { entries, .. } => entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The key node of `key` in a map.
    pub(crate) fn key_node(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            NodeKind::Map { entries, .. } => entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(k, _)| k),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    /// A plain empty or `~` / `null` scalar.
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, NodeKind::Scalar { value, style: ScalarStyle::Plain }
            if value.is_empty() || value == "~" || value == "null" || value == "Null" || value == "NULL")
    }

    pub fn items(&self) -> &[Node] {
        match &self.kind {
            NodeKind::Seq { items, .. } => items,
            _ => &[],
        }
    }

    pub fn entries(&self) -> &[(Node, Node)] {
        match &self.kind {
            NodeKind::Map { entries, .. } => entries,
            _ => &[],
        }
    }

    pub(crate) fn is_flow(&self) -> bool {
        matches!(
            &self.kind,
            NodeKind::Seq { flow: true, .. } | NodeKind::Map { flow: true, .. }
        )
    }

    pub fn quote(&self) -> Option<YamlQuote> {
        match &self.kind {
            NodeKind::Scalar { style, .. } => match style {
                ScalarStyle::Plain => Some(YamlQuote::Plain),
                ScalarStyle::SingleQuoted => Some(YamlQuote::Single),
                ScalarStyle::DoubleQuoted => Some(YamlQuote::Double),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Where a new item goes at the end of a sequence node ([`Node::append_point`]).
#[derive(Debug, Clone, PartialEq)]
pub enum AppendPoint {
    /// A flow sequence (`[a, b]`): after the last item, or just inside `[` when it is empty.
    Flow { offset: usize, empty: bool },
    /// A block sequence: the end of the last item's line, at its dash's indentation.
    Block { offset: usize, indent: String },
    /// Not a flow sequence and no items (a scalar, a null, a map).
    Empty,
}

impl Node {
    /// Where an item appended to this sequence goes, in `text` (the file the node is from).
    pub(crate) fn append_point(&self, text: &str) -> AppendPoint {
        match (self.is_flow(), self.items().last()) {
            (true, last) => AppendPoint::Flow {
                offset: last.map_or(self.span.start + 1, |l| l.span.end),
                empty: last.is_none(),
            },
            (false, Some(last)) => AppendPoint::Block {
                offset: super::line_end(text, last.span.end),
                indent: indent_of(text, dash_before(text, last.span.start)),
            },
            (false, None) => AppendPoint::Empty,
        }
    }
}

/// One YAML document and its anchors.
#[derive(Debug, Clone)]
pub struct Doc {
    pub root: Node,
    /// Where each anchored node sits in `root` (a path, not a copy: nested anchors would
    /// otherwise copy their contents once per level).
    anchors: HashMap<usize, Vec<Step>>,
}

/// One step down a path from a document's root.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    Item(usize),
    Key(usize),
    Value(usize),
}

impl Doc {
    /// Follow an alias to its anchored node.
    pub fn resolve<'a>(&'a self, n: &'a Node) -> &'a Node {
        match &n.kind {
            NodeKind::Alias(id) => self
                .anchors
                .get(id)
                .and_then(|path| walk(&self.root, path))
                .unwrap_or(n),
            _ => n,
        }
    }

    /// `key` in map `n`, following `<<` merge keys when the map does not have it itself.
    /// The flag says it came through a merge (an anchor shared with other places).
    pub fn get<'a>(&'a self, n: &'a Node, key: &str) -> Option<(&'a Node, bool)> {
        let n = self.resolve(n);
        if let Some(v) = n.get(key) {
            return Some((self.resolve(v), matches!(v.kind, NodeKind::Alias(_))));
        }
        let merged = n.get("<<")?;
        let merged = self.resolve(merged);
        let sources: Vec<&Node> = match &merged.kind {
            NodeKind::Seq { items, .. } => items.iter().map(|i| self.resolve(i)).collect(),
            _ => vec![merged],
        };
        sources
            .into_iter()
            .find_map(|m| m.get(key))
            .map(|v| (self.resolve(v), true))
    }
}

/// The node at `path` below `root`.
fn walk<'a>(root: &'a Node, path: &[Step]) -> Option<&'a Node> {
    path.iter().try_fold(root, |n, step| match (step, &n.kind) {
        (Step::Item(i), NodeKind::Seq { items, .. }) => items.get(*i),
        (Step::Key(i), NodeKind::Map { entries, .. }) => entries.get(*i).map(|(k, _)| k),
        (Step::Value(i), NodeKind::Map { entries, .. }) => entries.get(*i).map(|(_, v)| v),
        _ => None,
    })
}

/// How deep collections may nest, aliases followed (readers of the tree recurse this deep).
const MAX_DEPTH: usize = 256;

/// How many nodes the documents of one input may reach (as many as the KB reader allows) with every alias followed. The text
/// itself is capped at 1 MiB; aliases are what multiply it (a billion laughs reaches 10^9 nodes
/// from 400 bytes), and every reader of the tree walks the expanded form.
pub const MAX_EXPANDED_NODES: u64 = 250_000;

/// How many aliases one input may use.
pub const MAX_ALIASES: u64 = 10_000;

/// What a node costs once its aliases are followed: nodes reached and nesting depth.
#[derive(Debug, Clone, Copy, Default)]
struct Cost {
    nodes: u64,
    depth: usize,
}

impl Cost {
    fn add_child(&mut self, child: Cost) {
        self.nodes = self.nodes.saturating_add(child.nodes);
        self.depth = self.depth.max(child.depth);
    }

    /// The cost of a collection whose children cost `self` in all.
    fn wrapped(self) -> Cost {
        Cost {
            nodes: self.nodes.saturating_add(1),
            depth: self.depth + 1,
        }
    }
}

/// The expansion budget of one input (every document of it): nodes reached through aliases,
/// and the number of aliases.
#[derive(Debug, Default)]
struct Budget {
    nodes: u64,
    aliases: u64,
}

enum Open {
    Seq {
        items: Vec<Node>,
        flow: bool,
        start: usize,
        line: usize,
        anchor: usize,
        cost: Cost,
    },
    Map {
        entries: Vec<(Node, Node)>,
        pending_key: Option<Node>,
        flow: bool,
        start: usize,
        line: usize,
        anchor: usize,
        cost: Cost,
    },
}

impl Open {
    /// Where the next finished child goes.
    fn next_step(&self) -> Step {
        match self {
            Open::Seq { items, .. } => Step::Item(items.len()),
            Open::Map {
                entries,
                pending_key,
                ..
            } => match pending_key {
                Some(_) => Step::Value(entries.len()),
                None => Step::Key(entries.len()),
            },
        }
    }

    fn cost_mut(&mut self) -> &mut Cost {
        match self {
            Open::Seq { cost, .. } | Open::Map { cost, .. } => cost,
        }
    }
}

/// Parse every document of `text` (`file` names the file in errors). A mapping with the same
/// key twice is an error at the second one's line:col: compose and kubectl refuse such a file,
/// so reading it (the first or the last value) would diagnose a launch that never starts.
pub fn parse(text: &str, file: usize) -> Result<Vec<Doc>, LaunchError> {
    parse_with(text, file, true)
}

/// As [`parse`], keeping a repeated key's entries in order: PyYAML (vLLM's `--config` reader)
/// allows them and the last wins, as it does for a reader that goes through every entry.
pub(crate) fn parse_allowing_duplicate_keys(
    text: &str,
    file: usize,
) -> Result<Vec<Doc>, LaunchError> {
    parse_with(text, file, false)
}

/// The state a parse keeps across events: where each anchor sits, what it costs, and the
/// expansion budget spent.
struct Tree<'t> {
    text: &'t str,
    file: usize,
    unique_keys: bool,
    li: &'t super::lex::LineIndex,
    anchors: HashMap<usize, Vec<Step>>,
    costs: HashMap<usize, Cost>,
    budget: Budget,
}

impl Tree<'_> {
    /// An alias node (`*name`) at `span`, `depth` collections deep, within the budget.
    fn alias(
        &mut self,
        id: usize,
        span: Range<usize>,
        depth: usize,
    ) -> Result<(Node, Cost), LaunchError> {
        let (s, e) = (span.start, span.end);
        let at = |message: String| {
            LaunchError::syntax(
                self.file,
                self.li.line(s),
                self.li.col(self.text, s),
                message,
            )
        };
        let name = self.text.get(s..e).unwrap_or("*").chars().take(40);
        let name: String = name.collect();
        // An anchor is usable once its node is complete: an alias inside the node it
        // names (`a: &a [*a]`) would make the tree contain itself.
        let Some(cost) = self.costs.get(&id).copied() else {
            return Err(at(format!(
                "the alias {name} is inside the node it names (a YAML node that \
                 contains itself)"
            )));
        };
        self.budget.aliases += 1;
        self.budget.nodes = self.budget.nodes.saturating_add(cost.nodes);
        if self.budget.aliases > MAX_ALIASES {
            return Err(at(format!(
                "YAML with more than {MAX_ALIASES} aliases (*name)"
            )));
        }
        if self.budget.nodes > MAX_EXPANDED_NODES {
            return Err(at(format!(
                "YAML that expands to more than {MAX_EXPANDED_NODES} values with its \
                 aliases followed (an alias bomb?); stopped at {name}"
            )));
        }
        if depth + cost.depth > MAX_DEPTH {
            return Err(at(format!(
                "YAML nested more than {MAX_DEPTH} deep with its aliases followed"
            )));
        }
        Ok((
            Node {
                kind: NodeKind::Alias(id),
                span: s..e,
                line: self.li.line(s),
                anchor: 0,
            },
            cost,
        ))
    }

    /// Put a finished node in its parent (or make it the document's root).
    fn attach(
        &mut self,
        stack: &mut [Open],
        root: &mut Option<Node>,
        node: Node,
        cost: Cost,
    ) -> Result<(), LaunchError> {
        if !matches!(node.kind, NodeKind::Alias(_)) {
            self.budget.nodes += 1;
            if self.budget.nodes > MAX_EXPANDED_NODES {
                return Err(LaunchError::syntax(
                    self.file,
                    node.line,
                    self.li.col(self.text, node.span.start),
                    format!("YAML with more than {MAX_EXPANDED_NODES} values"),
                ));
            }
        }
        if node.anchor != 0 {
            self.anchors
                .insert(node.anchor, stack.iter().map(Open::next_step).collect());
            self.costs.insert(node.anchor, cost);
        }
        if let Some(open) = stack.last_mut() {
            open.cost_mut().add_child(cost);
        }
        match stack.last_mut() {
            Some(Open::Seq { items, .. }) => items.push(node),
            Some(Open::Map {
                entries,
                pending_key,
                ..
            }) => match pending_key.take() {
                Some(k) => entries.push((k, node)),
                None => {
                    if !matches!(node.kind, NodeKind::Scalar { .. }) {
                        return Err(LaunchError::syntax(
                            self.file,
                            node.line,
                            self.li.col(self.text, node.span.start),
                            "a YAML key that is not a plain string is not supported here",
                        ));
                    }
                    if self.unique_keys
                        && let Some(key) = node.as_str().filter(|k| *k != "<<")
                        && let Some((first, _)) =
                            entries.iter().find(|(k, _)| k.as_str() == Some(key))
                    {
                        return Err(LaunchError::syntax(
                            self.file,
                            node.line,
                            self.li.col(self.text, node.span.start),
                            format!(
                                "duplicate key {key} (first on line {}): docker compose and \
                             kubectl refuse a mapping with the same key twice; keep one",
                                first.line
                            ),
                        ));
                    }
                    *pending_key = Some(node);
                }
            },
            None => *root = Some(node),
        }
        Ok(())
    }
}

fn parse_with(text: &str, file: usize, unique_keys: bool) -> Result<Vec<Doc>, LaunchError> {
    let mut docs = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut root: Option<Node> = None;
    let li = super::lex::LineIndex::new(text);
    let mut tree = Tree {
        text,
        file,
        unique_keys,
        li: &li,
        anchors: HashMap::new(),
        costs: HashMap::new(),
        budget: Budget::default(),
    };
    let mut parser = Parser::new_from_str(text);
    let byte = |m: &granit_parser::Marker| m.byte_offset().unwrap_or(0).min(text.len());
    while let Some(ev) = parser.next_event() {
        let (ev, span) = ev.map_err(|e| {
            let m = e.marker();
            LaunchError::syntax(
                file,
                m.line(),
                m.col() + 1,
                format!("not valid YAML: {}", e.info()),
            )
        })?;
        let (s, e) = (byte(&span.start), byte(&span.end));
        let finished: Option<(Node, Cost)> = match ev {
            Event::DocumentStart(..) => {
                root = None;
                tree.anchors.clear();
                tree.costs.clear();
                None
            }
            Event::DocumentEnd => {
                let r = root.take().unwrap_or(Node {
                    kind: NodeKind::Scalar {
                        value: String::new(),
                        style: ScalarStyle::Plain,
                    },
                    span: s..s,
                    line: li.line(s),
                    anchor: 0,
                });
                docs.push(Doc {
                    root: r,
                    anchors: std::mem::take(&mut tree.anchors),
                });
                None
            }
            Event::Scalar(value, style, anchor, _) => Some((
                Node {
                    kind: NodeKind::Scalar {
                        value: value.into_owned(),
                        style,
                    },
                    span: s..e,
                    line: li.line(s),
                    anchor,
                },
                Cost { nodes: 1, depth: 0 },
            )),
            Event::Alias(id) => Some(tree.alias(id, s..e, stack.len())?),
            Event::SequenceStart(style, anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(LaunchError::syntax(
                        file,
                        li.line(s),
                        li.col(text, s),
                        format!("YAML nested more than {MAX_DEPTH} deep"),
                    ));
                }
                stack.push(Open::Seq {
                    items: Vec::new(),
                    flow: style == StructureStyle::Flow,
                    start: s,
                    line: li.line(s),
                    anchor,
                    cost: Cost::default(),
                });
                None
            }
            Event::MappingStart(style, anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(LaunchError::syntax(
                        file,
                        li.line(s),
                        li.col(text, s),
                        format!("YAML nested more than {MAX_DEPTH} deep"),
                    ));
                }
                stack.push(Open::Map {
                    entries: Vec::new(),
                    pending_key: None,
                    flow: style == StructureStyle::Flow,
                    start: s,
                    line: li.line(s),
                    anchor,
                    cost: Cost::default(),
                });
                None
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Open::Seq {
                    items,
                    flow,
                    start,
                    line,
                    anchor,
                    cost,
                }) => {
                    let end = if flow {
                        e
                    } else {
                        items.last().map_or(start, |n| n.span.end)
                    };
                    Some((
                        Node {
                            kind: NodeKind::Seq { items, flow },
                            span: start..end.max(start),
                            line,
                            anchor,
                        },
                        cost.wrapped(),
                    ))
                }
                _ => None,
            },
            Event::MappingEnd => match stack.pop() {
                Some(Open::Map {
                    entries,
                    flow,
                    start,
                    line,
                    anchor,
                    cost,
                    ..
                }) => {
                    let end = if flow {
                        e
                    } else {
                        entries
                            .last()
                            .map_or(start, |(k, v)| v.span.end.max(k.span.end))
                    };
                    Some((
                        Node {
                            kind: NodeKind::Map { entries, flow },
                            span: start..end.max(start),
                            line,
                            anchor,
                        },
                        cost.wrapped(),
                    ))
                }
                _ => None,
            },
            _ => None,
        };
        let Some((node, cost)) = finished else {
            continue;
        };
        tree.attach(&mut stack, &mut root, node, cost)?;
    }
    Ok(docs)
}

/// For a scalar written on one line: the raw byte offset of each value byte (and of its end).
/// `None` when the value cannot be mapped back (block scalars, line folding).
pub(crate) fn value_offsets(text: &str, n: &Node) -> Option<Vec<usize>> {
    let NodeKind::Scalar { value, style } = &n.kind else {
        return None;
    };
    let raw = &text[n.span.clone()];
    if raw.contains('\n') || matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
        return aligned_offsets(raw, n.span.start, value, style);
    }
    let base = n.span.start;
    let mut map = Vec::with_capacity(value.len() + 1);
    match style {
        ScalarStyle::Plain => {
            if raw != value {
                return None;
            }
            map.extend((0..=raw.len()).map(|i| base + i));
        }
        ScalarStyle::SingleQuoted => {
            let b = raw.as_bytes();
            let mut i = 1;
            while i + 1 < b.len() {
                if b[i] == b'\'' && b.get(i + 1) == Some(&b'\'') {
                    map.push(base + i);
                    i += 2;
                } else {
                    map.push(base + i);
                    i += 1;
                }
            }
            map.push(base + raw.len() - 1);
        }
        ScalarStyle::DoubleQuoted => {
            let b = raw.as_bytes();
            let mut i = 1;
            let mut produced = String::new();
            while i + 1 < b.len() {
                if b[i] == b'\\' {
                    let esc_start = i;
                    let (s, len) = unescape_at(&raw[i..])?;
                    for _ in 0..s.len() {
                        map.push(base + esc_start);
                    }
                    produced.push_str(&s);
                    i += len;
                } else {
                    let ch_len = raw[i..].chars().next().map_or(1, char::len_utf8);
                    for k in 0..ch_len {
                        map.push(base + i + k);
                    }
                    produced.push_str(&raw[i..i + ch_len]);
                    i += ch_len;
                }
            }
            map.push(base + raw.len() - 1);
            if &produced != value {
                return None;
            }
        }
        _ => return None,
    }
    (map.len() == value.len() + 1).then_some(map)
}

/// Offsets for a scalar that spans lines (a `|` / `>` block scalar, or a quoted or plain one
/// folded over lines): the value is aligned with its source text. Every character that is not
/// blank must be the same in both, in order (a double-quoted escape stands for what it
/// produces); a blank or line break the parser made of the line layout (folding, indentation)
/// maps to the first layout byte it came from, so a word's end is on the word's own line.
/// `None` when the two do not align.
fn aligned_offsets(raw: &str, base: usize, value: &str, style: &ScalarStyle) -> Option<Vec<usize>> {
    // A block scalar's span starts at its content (the line after `|` / `>-`).
    let (mut p, end) = if matches!(
        style,
        ScalarStyle::Literal | ScalarStyle::Folded | ScalarStyle::Plain
    ) {
        (0, raw.len())
    } else {
        (1, raw.len().checked_sub(1)?)
    };
    let rb = raw.as_bytes();
    let blank = |b: u8| b == b' ' || b == b'\t' || b == b'\n' || b == b'\r';
    let mut map = Vec::with_capacity(value.len() + 1);
    for c in value.chars() {
        let mut buf = [0u8; 4];
        let cb = c.encode_utf8(&mut buf).as_bytes();
        if c == ' ' || c == '\t' || c == '\n' {
            // A double-quoted line break escaped with `\` is not content: skip it.
            while matches!(style, ScalarStyle::DoubleQuoted)
                && rb.get(p) == Some(&b'\\')
                && rb.get(p + 1) == Some(&b'\n')
            {
                p += 2;
            }
            // The same blank, or one the parser folded from the layout (a line break, an
            // indentation): either maps to this byte; the rest of the layout is skipped before
            // the next content character.
            if p < end && blank(rb[p]) {
                map.push(base + p);
                p += 1;
                continue;
            }
            // A block scalar's final line break when the file ends without one.
            if p >= end {
                map.push(base + end);
                continue;
            }
            if matches!(style, ScalarStyle::DoubleQuoted) && rb.get(p) == Some(&b'\\') {
                let (s, len) = unescape_at(&raw[p..])?;
                if s != c.to_string() {
                    return None;
                }
                map.push(base + p);
                p += len;
                continue;
            }
            return None;
        }
        // Layout before a content character: indentation, folded line breaks.
        while p < end && blank(rb[p]) {
            p += 1;
        }
        if matches!(style, ScalarStyle::DoubleQuoted) && p < end && rb[p] == b'\\' {
            let (s, len) = unescape_at(&raw[p..])?;
            if !s.starts_with(c) || s.chars().count() != 1 {
                return None;
            }
            for _ in 0..cb.len() {
                map.push(base + p);
            }
            p += len;
            continue;
        }
        if matches!(style, ScalarStyle::SingleQuoted) && c == '\'' {
            if rb.get(p..p + 2) != Some(b"''") {
                return None;
            }
            map.push(base + p);
            p += 2;
            continue;
        }
        if rb.get(p..p + cb.len()) != Some(cb) {
            return None;
        }
        for k in 0..cb.len() {
            map.push(base + p + k);
        }
        p += cb.len();
    }
    map.push(base + p.min(end));
    (map.len() == value.len() + 1).then_some(map)
}

/// A double-quoted escape at the start of `s`: (its value, its raw length).
fn unescape_at(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    let c = *b.get(1)?;
    let simple = |v: &str| Some((v.to_string(), 2));
    match c {
        b'0' => simple("\0"),
        b'a' => simple("\x07"),
        b'b' => simple("\x08"),
        b't' | b'\t' => simple("\t"),
        b'n' => simple("\n"),
        b'v' => simple("\x0b"),
        b'f' => simple("\x0c"),
        b'r' => simple("\r"),
        b'e' => simple("\x1b"),
        b' ' => simple(" "),
        b'"' => simple("\""),
        b'/' => simple("/"),
        b'\\' => simple("\\"),
        b'N' => simple("\u{85}"),
        b'_' => simple("\u{a0}"),
        b'L' => simple("\u{2028}"),
        b'P' => simple("\u{2029}"),
        b'x' | b'u' | b'U' => {
            let n = match c {
                b'x' => 2,
                b'u' => 4,
                _ => 8,
            };
            let hex = s.get(2..2 + n)?;
            let code = u32::from_str_radix(hex, 16).ok()?;
            Some((char::from_u32(code)?.to_string(), 2 + n))
        }
        _ => None,
    }
}

/// Bytes to delete to remove a block-collection item or entry that starts at `start` (its `-`
/// or key) and ends at `end`: the newline before its line through the end of its last line.
pub(crate) fn block_removal(text: &str, start: usize, end: usize) -> Range<usize> {
    let ls = super::line_start(text, start);
    let le = super::line_end(text, end);
    if ls == 0 {
        ls..(le + 1).min(text.len())
    } else {
        ls - 1..le
    }
}

/// The `-` of the block-sequence item whose content starts at `item_start`.
pub(crate) fn dash_before(text: &str, item_start: usize) -> usize {
    let before = &text[..item_start];
    let trimmed = before.trim_end_matches([' ', '\t']);
    if trimmed.ends_with('-') {
        trimmed.len() - 1
    } else {
        item_start
    }
}

/// Removal ranges for the items of a flow collection (`[a, b]`, `{a: 1}`) given each item's
/// span: the item with the comma and blank that separate it from its neighbour.
pub(crate) fn flow_removals(spans: &[Range<usize>]) -> Vec<Range<usize>> {
    let n = spans.len();
    (0..n)
        .map(|i| {
            if n == 1 {
                spans[i].clone()
            } else if i == 0 {
                spans[0].start..spans[1].start
            } else {
                spans[i - 1].end..spans[i].end
            }
        })
        .collect()
}

/// Indentation (spaces) of the line holding `offset`.
pub(crate) fn indent_of(text: &str, offset: usize) -> String {
    super::indent_at(text, offset)
}

/// The indentation that puts a new line's text at `offset`'s column: the text before it on its
/// line with every character but a tab made a space (`    - name:` → six spaces for `name`).
pub(crate) fn column_indent(text: &str, offset: usize) -> String {
    text[super::line_start(text, offset)..offset]
        .chars()
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect()
}

/// A plain scalar some YAML reader may take for a number: YAML 1.1 (go-yaml, so kubectl and
/// compose) reads `1_0` as 10, `0x1F` and `017` as integers, `1:20` as 80 (base 60), `.5` and
/// `.inf` as floats. Anything that starts like a number is quoted, which is always safe.
fn numberish(v: &str) -> bool {
    let t = v.trim_start_matches(['+', '-']);
    let after_dot = t.strip_prefix('.');
    t.starts_with(|c: char| c.is_ascii_digit())
        || after_dot.is_some_and(|r| {
            r.starts_with(|c: char| c.is_ascii_digit())
                || matches!(r.to_ascii_lowercase().as_str(), "inf" | "nan")
        })
}

fn plain_ok(v: &str, flow: bool) -> bool {
    let keyword = matches!(
        v.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "~" | "y" | "n"
    );
    let flow_ok = !flow || !v.contains([',', '[', ']', '{', '}']);
    flow_ok
        && (!v.is_empty()
            && !keyword
            && v.parse::<f64>().is_err()
            && !numberish(v)
            && !v.ends_with(':')
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_./:=+,-@".contains(c))
            && !v.starts_with(['-', ':', ',', '@'])
            || (v.starts_with("--")
                && v[2..]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.=-".contains(c))))
}

/// A YAML scalar (`$` doubled: compose and Kubernetes expand it).
pub fn scalar(v: &str) -> String {
    scalar_in(v, false)
}

/// A YAML scalar, in a flow collection when `flow`.
pub(crate) fn scalar_in(v: &str, flow: bool) -> String {
    let v = v.replace('$', "$$");
    if plain_ok(&v, flow) {
        v
    } else if !v.contains('\'') && !v.contains('\n') && !v.contains('\\') {
        format!("'{v}'")
    } else {
        serde_json::to_string(&v).unwrap_or_default()
    }
}

/// A YAML map value: plain when safe, else double-quoted (`$` doubled).
pub fn value(v: &str, flow: bool) -> String {
    let v = v.replace('$', "$$");
    if plain_ok(&v, flow) {
        v
    } else {
        serde_json::to_string(&v).unwrap_or_default()
    }
}

/// A new `- NAME=value` block-list item.
pub(crate) fn env_block_item(indent: &str, name: &str, value: &str) -> String {
    format!("\n{indent}- {}", scalar(&format!("{name}={value}")))
}

/// A new `NAME: value` block-map entry.
pub(crate) fn map_entry(indent: &str, name: &str, v: &str) -> String {
    format!("\n{indent}{name}: {}", value(v, false))
}

/// A new `NAME=value` flow-list item (after a comma unless the list is `empty`).
pub(crate) fn env_flow_item(empty: bool, name: &str, value: &str) -> String {
    let item = scalar_in(&format!("{name}={value}"), true);
    if empty { item } else { format!(", {item}") }
}

/// A new `NAME: value` flow-map entry (after a comma unless the map is `empty`).
pub(crate) fn flow_map_entry(empty: bool, name: &str, v: &str) -> String {
    let entry = format!("{name}: {}", value(v, true));
    if empty { entry } else { format!(", {entry}") }
}

/// A block-list item per word.
pub(crate) fn block_items(indent: &str, words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("\n{indent}- {}", scalar(w)))
        .collect()
}

/// A new block list under a map: `KEY:` and an item per word.
pub(crate) fn new_list(indent: &str, key: &str, words: &[String]) -> String {
    let items: String = words
        .iter()
        .map(|w| format!("\n{indent}  - {}", scalar(w)))
        .collect();
    format!("\n{indent}{key}:{items}")
}

/// A double-quoted flow-list item per word (the first without a comma when the list is
/// `empty`).
pub(crate) fn flow_items(empty: bool, words: &[String]) -> String {
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let q = serde_json::to_string(&w.replace('$', "$$")).unwrap_or_default();
            if i == 0 && empty { q } else { format!(", {q}") }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_point_of_block_flow_and_non_lists() {
        let text = "a:\n  - x\n  -   y # c\nb: [p, q]\nc: []\nd: s\n";
        let docs = parse(text, 0).expect("yaml");
        let root = &docs[0].root;
        let at = |key: &str| root.get(key).expect(key).append_point(text);
        let after = |s: &str| text.find(s).expect(s) + s.len();
        assert_eq!(
            at("a"),
            AppendPoint::Block {
                offset: after("y # c"),
                indent: "  ".into()
            }
        );
        assert_eq!(
            at("b"),
            AppendPoint::Flow {
                offset: after("[p, q"),
                empty: false
            }
        );
        assert_eq!(
            at("c"),
            AppendPoint::Flow {
                offset: after("c: ["),
                empty: true
            }
        );
        assert_eq!(at("d"), AppendPoint::Empty);
    }

    #[test]
    fn yaml_scalars() {
        assert_eq!(
            scalar("A=expandable_segments:True"),
            "A=expandable_segments:True"
        );
        assert_eq!(scalar("0"), "'0'");
        // YAML 1.1 numbers that a Rust float parse does not see (kubectl's and compose's
        // readers take them for numbers): quoted.
        for v in [
            "1_0", "0x1F", "017", "1:20", ".5", "-.inf", ".NaN", "10.0.0.1", "+1_000",
        ] {
            assert_eq!(scalar(v), format!("'{v}'"), "{v}");
        }
        assert_eq!(scalar("v1_0"), "v1_0");
        assert_eq!(scalar("--enforce-eager"), "--enforce-eager");
        assert_eq!(scalar("a$b"), "'a$$b'");
        assert_eq!(scalar(r#"{"a": "b"}"#), r#"'{"a": "b"}'"#);
    }

    #[test]
    fn column_indent_looks_past_the_dash() {
        let text = "a:\n    - name: x\n      image: y\n";
        let at = text.find("name").expect("name");
        assert_eq!(column_indent(text, at), "      ");
        assert_eq!(indent_of(text, at), "    ");
        let at = text.find("image").expect("image");
        assert_eq!(column_indent(text, at), "      ");
    }

    #[test]
    fn scalars_over_several_lines_map_their_words_back() {
        let text = "a:\n  - |\n    vllm serve \\\n    --x 1\n  - >\n    --m q\n    --y 2\n  - \"p \\\"q\\\"\n     r\"\nb: x\n";
        let docs = parse(text, 0).expect("parses");
        let items = docs[0].root.get("a").expect("a").items().to_vec();
        // Literal: every value byte is its own source byte; the line break stays a line break.
        let lit = &items[0];
        let m = value_offsets(text, lit).expect("maps");
        let v = lit.as_str().expect("str");
        let x = v.find("--x").expect("--x");
        assert_eq!(&text[m[x]..m[x + 3]], "--x");
        assert_eq!(&text[m[v.len() - 1]..m[v.len() - 1] + 1], "\n");
        // Folded: the folded blank maps to the line break, so a word's end is on its own line.
        let fold = &items[1];
        let m = value_offsets(text, fold).expect("maps");
        let v = fold.as_str().expect("str");
        assert_eq!(v, "--m q --y 2\n");
        assert_eq!(&text[m[5]..m[5] + 1], "\n");
        assert_eq!(&text[m[6]..m[9]], "--y");
        // Double-quoted over two lines, with escapes.
        let dq = &items[2];
        let m = value_offsets(text, dq).expect("maps");
        let v = dq.as_str().expect("str");
        assert_eq!(v, "p \"q\" r");
        assert_eq!(&text[m[2]..m[3]], "\\\"");
        assert_eq!(&text[m[v.len() - 1]..m[v.len()]], "r");
        // A value that does not align with its text is not mapped.
        assert_eq!(
            aligned_offsets("a\n  b\n", 0, "a c\n", &ScalarStyle::Folded),
            None
        );
    }

    #[test]
    fn spans_of_block_flow_and_quoted_nodes() {
        let text = "a:\n  - x\n  - 'y''z'\nb: {c: \"d\\te\", f: [1, 2]}\n---\nk: v\n";
        let docs = parse(text, 0).expect("parses");
        assert_eq!(docs.len(), 2);
        let a = docs[0].root.get("a").expect("a");
        assert_eq!(&text[a.span.clone()], "- x\n  - 'y''z'");
        assert_eq!(a.items()[1].as_str(), Some("y'z"));
        let b = docs[0].root.get("b").expect("b");
        assert!(b.is_flow());
        assert_eq!(&text[b.span.clone()], "{c: \"d\\te\", f: [1, 2]}");
        let c = b.get("c").expect("c");
        let map = value_offsets(text, c).expect("maps");
        assert_eq!(map.len(), 4);
        assert_eq!(&text[map[1]..map[2]], "\\t");
        let y = &a.items()[1];
        let map = value_offsets(text, y).expect("maps");
        assert_eq!(&text[map[1]..map[2]], "''");
    }

    #[test]
    fn errors_have_line_and_column() {
        let e = parse("a: [1, 2\nb: 3\n", 0).expect_err("bad");
        assert!(matches!(e, LaunchError::Syntax { .. }), "{e:?}");
        let deep = format!("a: {}1{}", "[".repeat(300), "]".repeat(300));
        let e = parse(&deep, 0).expect_err("deep");
        assert!(matches!(e, LaunchError::Syntax { line: 1, .. }), "{e}");
    }

    #[test]
    fn merge_keys_and_aliases() {
        let text = "x: &e\n  environment:\n    - A=1\nservices:\n  s:\n    <<: *e\n    image: i\n";
        let docs = parse(text, 0).expect("parses");
        let d = &docs[0];
        let s = d.root.get("services").and_then(|s| s.get("s")).expect("s");
        let (env, merged) = d.get(s, "environment").expect("merged");
        assert!(merged);
        assert_eq!(env.items()[0].as_str(), Some("A=1"));
    }

    #[test]
    fn an_alias_inside_the_node_it_names_is_an_error_with_its_place() {
        let e = parse("a: &a [*a]\n", 0).expect_err("self-reference");
        assert!(
            matches!(&e, LaunchError::Syntax { line: 1, col: 8, message, .. }
                if message.contains("inside the node it names")),
            "{e:?}"
        );
        let list = "kind: List\nitems: &root\n  - kind: List\n    items: [*root]\n";
        let e = parse(list, 0).expect_err("self-reference");
        assert!(matches!(e, LaunchError::Syntax { line: 4, .. }), "{e:?}");
    }

    #[test]
    fn aliases_that_multiply_stop_at_the_expansion_budget() {
        let mut text = String::from("a0: &a0 x\n");
        for i in 1..=8 {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        let e = parse(&text, 0).expect_err("billion laughs");
        assert!(
            matches!(&e, LaunchError::Syntax { message, .. } if message.contains("expands")),
            "{e:?}"
        );
        // Doubling: each level holds the one before twice.
        let mut text = String::from("l0: &l0 [x]\n");
        for i in 1..=30 {
            text.push_str(&format!("l{i}: &l{i} [*l{0}, *l{0}]\n", i - 1));
        }
        assert!(parse(&text, 0).is_err());
    }

    #[test]
    fn aliases_deeper_than_the_limit_once_followed_are_an_error() {
        let inner = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let text = format!(
            "a: &a {inner}\nb: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[*a]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"
        );
        let e = parse(&text, 0).expect_err("deep");
        assert!(
            matches!(&e, LaunchError::Syntax { line: 2, message, .. } if message.contains("deep")),
            "{e:?}"
        );
    }

    #[test]
    fn nested_anchors_resolve_without_copies() {
        let text = "x: &o\n  y: &i [1, 2]\n  z: *i\nw: *o\nv: *i\n";
        let docs = parse(text, 0).expect("parses");
        let d = &docs[0];
        let w = d.resolve(d.root.get("w").expect("w"));
        assert_eq!(d.resolve(w.get("z").expect("z")).items().len(), 2);
        let v = d.resolve(d.root.get("v").expect("v"));
        assert_eq!(v.items()[1].as_str(), Some("2"));
        // An anchored key resolves too.
        let docs = parse("&k a: 1\nb: *k\n", 0).expect("parses");
        let d = &docs[0];
        assert_eq!(d.resolve(d.root.get("b").expect("b")).as_str(), Some("a"));
    }

    #[test]
    fn removals() {
        let t = "k:\n  - a\n  - b\n";
        assert_eq!(block_removal(t, 11, 14), 8..14);
        assert_eq!(dash_before(t, 13), 11);
        assert_eq!(flow_removals(&[1..2, 4..5, 7..8]), vec![1..4, 2..5, 5..8]);
    }
}
