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
    pub fn key_node(&self, key: &str) -> Option<&Node> {
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

    pub fn is_flow(&self) -> bool {
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

/// One YAML document and its anchors.
#[derive(Debug, Clone)]
pub struct Doc {
    pub root: Node,
    anchors: HashMap<usize, Node>,
}

impl Doc {
    /// Follow an alias to its anchored node.
    pub fn resolve<'a>(&'a self, n: &'a Node) -> &'a Node {
        match &n.kind {
            NodeKind::Alias(id) => self.anchors.get(id).unwrap_or(n),
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

/// How deep collections may nest.
const MAX_DEPTH: usize = 256;

enum Open {
    Seq {
        items: Vec<Node>,
        flow: bool,
        start: usize,
        line: usize,
        anchor: usize,
    },
    Map {
        entries: Vec<(Node, Node)>,
        pending_key: Option<Node>,
        flow: bool,
        start: usize,
        line: usize,
        anchor: usize,
    },
}

/// The end of a node's content (for block collections: the end of their last child).
pub fn content_end(n: &Node) -> usize {
    n.span.end
}

/// Parse every document of `text` (`file` names the file in errors).
pub fn parse(text: &str, file: usize) -> Result<Vec<Doc>, LaunchError> {
    let mut docs = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut root: Option<Node> = None;
    let li = super::lex::LineIndex::new(text);
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
        let finished: Option<Node> = match ev {
            Event::DocumentStart(..) => {
                root = None;
                anchors.clear();
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
                    anchors: std::mem::take(&mut anchors),
                });
                None
            }
            Event::Scalar(value, style, anchor, _) => Some(Node {
                kind: NodeKind::Scalar {
                    value: value.into_owned(),
                    style,
                },
                span: s..e,
                line: li.line(s),
                anchor,
            }),
            Event::Alias(id) => Some(Node {
                kind: NodeKind::Alias(id),
                span: s..e,
                line: li.line(s),
                anchor: 0,
            }),
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
                }) => {
                    let end = if flow {
                        e
                    } else {
                        items.last().map_or(start, |n| n.span.end)
                    };
                    Some(Node {
                        kind: NodeKind::Seq { items, flow },
                        span: start..end.max(start),
                        line,
                        anchor,
                    })
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
                    ..
                }) => {
                    let end = if flow {
                        e
                    } else {
                        entries
                            .last()
                            .map_or(start, |(k, v)| v.span.end.max(k.span.end))
                    };
                    Some(Node {
                        kind: NodeKind::Map { entries, flow },
                        span: start..end.max(start),
                        line,
                        anchor,
                    })
                }
                _ => None,
            },
            _ => None,
        };
        let Some(node) = finished else {
            continue;
        };
        if node.anchor != 0 {
            anchors.insert(node.anchor, node.clone());
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
                            file,
                            node.line,
                            li.col(text, node.span.start),
                            "a YAML key that is not a plain string is not supported here",
                        ));
                    }
                    *pending_key = Some(node);
                }
            },
            None => root = Some(node),
        }
    }
    Ok(docs)
}

/// For a scalar written on one line: the raw byte offset of each value byte (and of its end).
/// `None` when the value cannot be mapped back (block scalars, line folding).
pub fn value_offsets(text: &str, n: &Node) -> Option<Vec<usize>> {
    let NodeKind::Scalar { value, style } = &n.kind else {
        return None;
    };
    let raw = &text[n.span.clone()];
    if raw.contains('\n') {
        return None;
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
pub fn block_removal(text: &str, start: usize, end: usize) -> Range<usize> {
    let ls = super::line_start(text, start);
    let le = super::line_end(text, end);
    if ls == 0 {
        ls..(le + 1).min(text.len())
    } else {
        ls - 1..le
    }
}

/// The `-` of the block-sequence item whose content starts at `item_start`.
pub fn dash_before(text: &str, item_start: usize) -> usize {
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
pub fn flow_removals(spans: &[Range<usize>]) -> Vec<Range<usize>> {
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
pub fn indent_of(text: &str, offset: usize) -> String {
    super::indent_at(text, offset)
}

/// The indentation that puts a new line's text at `offset`'s column: the text before it on its
/// line with every character but a tab made a space (`    - name:` → six spaces for `name`).
pub fn column_indent(text: &str, offset: usize) -> String {
    text[super::line_start(text, offset)..offset]
        .chars()
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn removals() {
        let t = "k:\n  - a\n  - b\n";
        assert_eq!(block_removal(t, 11, 14), 8..14);
        assert_eq!(dash_before(t, 13), 11);
        assert_eq!(flow_removals(&[1..2, 4..5, 7..8]), vec![1..4, 2..5, 5..8]);
    }
}
