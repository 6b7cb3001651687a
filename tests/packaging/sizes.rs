//! Sizes a newcomer can hold in their head: no non-test function over [`MAX_FN_LINES`] lines
//! and no file over [`MAX_FILE_LINES`] non-test lines, in src/ and every crates/*/src.
//!
//! A function's length runs from the line of its `fn` keyword to the line of its closing
//! brace. Non-test lines are a file's lines less those of its `#[cfg(test)]` items (attribute
//! to closing brace). Test code is left out: `#[cfg(test)]` / `#[test]` items, and the files of
//! a `#[cfg(test)] mod name;`.
//!
//! Why a hand lexer and not `syn`: `syn` is in Cargo.lock only under derive macros, not as a
//! dev-dependency of this package, and one size check is not worth a new one. Counting braces
//! is enough once strings, chars, raw strings, lifetimes and comments are stepped over, which
//! is all [`tokens`] does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Longest non-test function, in lines.
const MAX_FN_LINES: usize = 200;
/// Most non-test lines in one file.
const MAX_FILE_LINES: usize = 1_000;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
    /// A string, char or number: its inside never counts.
    Lit,
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq)]
struct Token {
    tok: Tok,
    line: usize,
}

/// Rust's tokens, as far as brace counting needs them: identifiers, one-character punctuation,
/// and literals (strings, raw strings, byte strings, chars) as one opaque token. Comments and
/// lifetimes are dropped.
fn tokens(text: &str) -> Vec<Token> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let start = i;
        let tok = if ch.is_whitespace() {
            i += 1;
            None
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            None
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            i = block_comment_end(&c, i);
            None
        } else if ch == '"' {
            i = string_end(&c, i + 1);
            Some(Tok::Lit)
        } else if ch == '\'' {
            i = quote_end(&c, i);
            // A char literal ends in a quote; a lifetime does not.
            (c[i - 1] == '\'' && i - start >= 3).then_some(Tok::Lit)
        } else if ch.is_alphanumeric() || ch == '_' {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            if let Some(end) = prefixed_literal_end(&c, &word, i) {
                i = end;
                Some(Tok::Lit)
            } else if ch.is_ascii_digit() {
                Some(Tok::Lit)
            } else {
                Some(Tok::Ident(word))
            }
        } else {
            i += 1;
            Some(Tok::Punct(ch))
        };
        if let Some(tok) = tok {
            out.push(Token { tok, line });
        }
        line += c[start..i.min(c.len())]
            .iter()
            .filter(|&&x| x == '\n')
            .count();
    }
    out
}

/// Index past a `/* … */` comment starting at `i` (they nest).
fn block_comment_end(c: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// Index past the closing `"` of a string whose body starts at `i` (escapes honoured).
fn string_end(c: &[char], mut i: usize) -> usize {
    while i < c.len() {
        match c[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// Index past a char literal (`'x'`, `'\n'`, `'\u{..}'`) or a lifetime (`'a`) starting at `i`.
fn quote_end(c: &[char], i: usize) -> usize {
    if c.get(i + 1) == Some(&'\\') {
        let mut j = i + 3;
        while j < c.len() && c[j] != '\'' {
            j += 1;
        }
        return j + 1;
    }
    if c.get(i + 2) == Some(&'\'') {
        return i + 3;
    }
    // A lifetime or label: the quote and the identifier.
    let mut j = i + 1;
    while j < c.len() && (c[j].is_alphanumeric() || c[j] == '_') {
        j += 1;
    }
    j
}

/// Where a literal with a prefix word ends (`b"…"`, `b'x'`, `r"…"`, `r#"…"#`, `br#"…"#`,
/// `c"…"`, `cr"…"`), `i` being just past the word; `None` when the word is an identifier
/// (`r#type` included).
fn prefixed_literal_end(c: &[char], word: &str, i: usize) -> Option<usize> {
    let next = c.get(i).copied();
    match (word, next) {
        ("b" | "c", Some('"')) => Some(string_end(c, i + 1)),
        ("b", Some('\'')) => Some(quote_end(c, i)),
        ("r" | "br" | "cr", Some('"' | '#')) => {
            let hashes = c[i..].iter().take_while(|&&x| x == '#').count();
            if c.get(i + hashes) != Some(&'"') {
                return None;
            }
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let mut j = i + hashes + 1;
            while j < c.len() && !c[j..].starts_with(&close) {
                j += 1;
            }
            Some((j + close.len()).min(c.len()))
        }
        _ => None,
    }
}

/// One function with a body.
#[derive(Debug, Clone, PartialEq)]
struct Function {
    name: String,
    line: usize,
    lines: usize,
}

/// What one file holds, test code left out.
#[derive(Debug, Default)]
struct Sizes {
    functions: Vec<Function>,
    total_lines: usize,
    test_lines: usize,
    /// `#[cfg(test)] mod name;`: the files holding these are test files.
    test_modules: Vec<String>,
    /// The 1-based first and last line of each test item (attribute to end), in order.
    test_items: Vec<(usize, usize)>,
}

/// Index of the token closing the bracket opened at `open` (`{`/`(`/`[`), or the last index.
fn closing(toks: &[Token], open: usize) -> usize {
    let mut depth = 0i64;
    for (j, t) in toks.iter().enumerate().skip(open) {
        match t.tok {
            Tok::Punct('{' | '(' | '[') => depth += 1,
            Tok::Punct('}' | ')' | ']') => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    toks.len().saturating_sub(1)
}

/// Does the attribute `toks` (between `[` and `]`) keep its item out of non-test builds:
/// `test`, or a `cfg` naming `test` and no `not` (`cfg(test)`, `cfg(any(test, feature = …))`)?
fn is_test_attribute(toks: &[Token]) -> bool {
    let ident = |t: &Token, s: &str| t.tok == Tok::Ident(s.into());
    match toks.first() {
        Some(t) if ident(t, "test") => toks.len() == 1,
        Some(t) if ident(t, "cfg") => {
            toks.iter().any(|t| ident(t, "test")) && !toks.iter().any(|t| ident(t, "not"))
        }
        _ => false,
    }
}

/// The end of the item starting at `from`: its first `;` outside brackets, or the `}` closing
/// its first `{`.
fn item_end(toks: &[Token], from: usize) -> usize {
    let mut j = from;
    while j < toks.len() {
        match toks[j].tok {
            Tok::Punct(';') => return j,
            Tok::Punct('{') => return closing(toks, j),
            Tok::Punct('(' | '[') => j = closing(toks, j) + 1,
            _ => j += 1,
        }
    }
    toks.len().saturating_sub(1)
}

/// The functions, test lines and test module files of one file's text.
fn measure(text: &str) -> Sizes {
    let toks = tokens(text);
    let mut sizes = Sizes {
        total_lines: text.lines().count(),
        ..Sizes::default()
    };
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].tok {
            Tok::Punct('#') => {
                let inner = toks.get(i + 1).is_some_and(|t| t.tok == Tok::Punct('!'));
                let open = if inner { i + 2 } else { i + 1 };
                if toks.get(open).map(|t| &t.tok) != Some(&Tok::Punct('[')) {
                    i += 1;
                    continue;
                }
                let close = closing(&toks, open);
                if !is_test_attribute(&toks[open + 1..close]) {
                    i = close + 1;
                } else if inner {
                    sizes.functions.clear();
                    sizes.test_lines = sizes.total_lines;
                    sizes.test_items = vec![(1, sizes.total_lines)];
                    return sizes;
                } else {
                    i = skip_test_item(&toks, i, close + 1, &mut sizes);
                }
            }
            Tok::Ident(kw) if kw == "fn" => {
                if let Some(Tok::Ident(name)) = toks.get(i + 1).map(|t| &t.tok) {
                    let end = item_end(&toks, i + 2);
                    if toks[end].tok == Tok::Punct('}') {
                        sizes.functions.push(Function {
                            name: name.clone(),
                            line: toks[i].line,
                            lines: toks[end].line - toks[i].line + 1,
                        });
                    }
                }
                // Step into the body: functions nested in it are measured too.
                i += 1;
            }
            _ => i += 1,
        }
    }
    sizes
}

/// Skip the test item whose attribute starts at `attr` (its first other token at or after
/// `from`, past any further attributes); count its lines. Returns the index past it.
fn skip_test_item(toks: &[Token], attr: usize, mut from: usize, sizes: &mut Sizes) -> usize {
    while toks.get(from).is_some_and(|t| t.tok == Tok::Punct('#')) {
        let open = from + 1;
        from = closing(toks, open) + 1;
    }
    let end = item_end(toks, from);
    if let [a, b, c] = toks.get(from..from + 3).unwrap_or_default()
        && a.tok == Tok::Ident("mod".into())
        && c.tok == Tok::Punct(';')
        && let Tok::Ident(name) = &b.tok
    {
        sizes.test_modules.push(name.clone());
    }
    if let Some(last) = toks.get(end) {
        sizes.test_lines += last.line - toks[attr].line + 1;
        sizes.test_items.push((toks[attr].line, last.line));
    }
    end + 1
}

/// `text` with the lines of its test items (`#[cfg(test)]` / `#[test]` items, attribute to
/// end, wherever they are in the file) blanked, so line numbers stay. The scanners of this
/// binary read non-test code through this: cutting at the first `#[cfg(test)]` hid everything
/// after a `#[cfg(test)] use …;` near the top of a file.
pub(crate) fn non_test_text(text: &str) -> String {
    let items = measure(text).test_items;
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let n = i + 1;
            if items.iter().any(|&(a, b)| a <= n && n <= b) {
                ""
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// src/ and every crates/*/src.
fn roots() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![dir.join("src")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(dir.join("crates"))
        .expect("crates/")
        .map(|e| e.expect("dir entry").path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    roots.extend(crates);
    roots
}

/// The directory holding the child modules of `file` (`a/mod.rs`, `lib.rs` → its directory;
/// `a/b.rs` → `a/b/`).
fn child_dir(file: &Path) -> PathBuf {
    let dir = file.parent().unwrap_or(Path::new(""));
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib" | "main") => dir.to_path_buf(),
        Some(stem) => dir.join(stem),
        None => dir.to_path_buf(),
    }
}

/// Every limit broken by the files given (path, text), one line each; test module files (and
/// the modules below them) are skipped.
fn violations(files: &[(PathBuf, String)]) -> Vec<String> {
    let measured: Vec<(&PathBuf, Sizes)> = files.iter().map(|(p, t)| (p, measure(t))).collect();
    // `#[cfg(test)] mod name;` → name.rs and name/ beside the declaring file's children.
    let test_dirs: BTreeSet<PathBuf> = measured
        .iter()
        .flat_map(|(p, s)| s.test_modules.iter().map(|m| child_dir(p).join(m)))
        .collect();
    let is_test_file = |p: &Path| {
        test_dirs
            .iter()
            .any(|d| p.starts_with(d) || p == d.with_extension("rs"))
    };
    let mut out = Vec::new();
    for (path, sizes) in &measured {
        if is_test_file(path) {
            continue;
        }
        let shown = path.display();
        for f in sizes.functions.iter().filter(|f| f.lines > MAX_FN_LINES) {
            out.push(format!(
                "{shown}:{}: fn {} is {} lines (at most {MAX_FN_LINES})",
                f.line, f.name, f.lines
            ));
        }
        let non_test = sizes.total_lines - sizes.test_lines.min(sizes.total_lines);
        if non_test > MAX_FILE_LINES {
            out.push(format!(
                "{shown}: {non_test} non-test lines (at most {MAX_FILE_LINES})"
            ));
        }
    }
    out
}

#[test]
fn no_long_function_or_file() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for root in roots() {
        rust_files(&root, &mut paths);
    }
    assert!(paths.len() > 50, "too few sources found: {}", paths.len());
    let files: Vec<(PathBuf, String)> = paths
        .iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.strip_prefix(base).unwrap_or(p).to_path_buf(), text)
        })
        .collect();
    let found = violations(&files);
    assert!(
        found.is_empty(),
        "{} over the size limits (split them into named pieces):\n{}",
        found.len(),
        found.join("\n")
    );
}

/// `fn name() {` + `body` lines of `x += 1;` + `}`: a function of `body + 2` lines.
fn function_of(name: &str, body: usize) -> String {
    format!("fn {name}() {{\n{}}}\n", "    x += 1;\n".repeat(body))
}

#[test]
fn measures_from_fn_to_its_closing_brace() {
    let text = "\
/// doc with fn inside and a { brace
pub(crate) fn a(x: &str) -> Result<(), String>
where
    String: Clone,
{
    let s = \"}}} fn not_a_fn() {\";
    let r = r#\"\" }\"#;
    let b = br##\"}\"#\"##;
    let c = '}';
    let d = b'{';
    let e = '\\'';
    let f: &'static str = \"\\\"}\";
    /* } /* nested } */ } */
    // }
    'outer: loop { break 'outer; }
    let r#type = 1;
    fn inner() {
    }
}
trait T { fn decl(&self); }
";
    let s = measure(text);
    let got: Vec<(&str, usize, usize)> = s
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.line, f.lines))
        .collect();
    assert_eq!(got, [("a", 2, 18), ("inner", 17, 2)]);
    assert_eq!(s.total_lines, 20);
    assert_eq!(s.test_lines, 0);
}

#[test]
fn test_items_and_test_files_are_left_out() {
    let text = format!(
        "fn kept() {{\n}}\n#[cfg(test)]\n#[allow(dead_code)]\nmod tests {{\n{}}}\n#[cfg(test)]\nmod more;\n\
         #[cfg(any(test, feature = \"x\"))]\nfn helper() {{}}\n#[cfg(not(test))]\nfn real() {{}}\n",
        function_of("long", 300)
    );
    let s = measure(&text);
    let names: Vec<&str> = s.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["kept", "real"]);
    // The mod (attributes + 304 lines), `mod more;` (2) and `helper` (2).
    assert_eq!(s.test_lines, 306 + 2 + 2);
    assert_eq!(s.test_modules, ["more"]);

    let files = vec![
        (PathBuf::from("src/a.rs"), text.clone()),
        (PathBuf::from("src/a/more.rs"), function_of("long", 300)),
        (
            PathBuf::from("src/a/more/deep.rs"),
            function_of("long", 300),
        ),
    ];
    assert_eq!(violations(&files), Vec::<String>::new());
}

#[test]
fn one_line_over_either_limit_fails() {
    let at_limit = function_of("fits", MAX_FN_LINES - 2);
    let over = function_of("too_long", MAX_FN_LINES - 1);
    let files = vec![
        (PathBuf::from("src/ok.rs"), at_limit),
        (PathBuf::from("src/long.rs"), over),
        (
            PathBuf::from("src/big.rs"),
            "//\n".repeat(MAX_FILE_LINES + 1),
        ),
        (PathBuf::from("src/full.rs"), "//\n".repeat(MAX_FILE_LINES)),
    ];
    assert_eq!(
        violations(&files),
        [
            "src/long.rs:1: fn too_long is 201 lines (at most 200)".to_string(),
            "src/big.rs: 1001 non-test lines (at most 1000)".to_string(),
        ]
    );
}
