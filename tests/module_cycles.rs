//! No cycles between sibling modules: at each level of the module tree (the top-level
//! modules of `oomlint-core`, the modules inside `estimate`, the leaf crate's `cli`, `lsp`,
//! …) the "uses" relation between siblings is acyclic, so each module can be read, tested
//! and moved with only the ones below it.
//!
//! The check reads the sources itself (no tool to install): a small tokenizer that drops
//! comments and literals, a walk of the module tree from each crate root following
//! `mod` declarations (`#[path]` included), and the paths the code names: `use` trees and
//! `crate::`, `self::`, `super::` and `child::` / `imported::` paths in code, resolved
//! through the modules and through the `use` imports (re-exports) of the module they pass.
//! A path from module `a::b::c` to `a::d::e` is an edge `b → d` at level `a`; a path
//! to an ancestor or a descendant is no edge between siblings.
//!
//! Names brought in by a glob import (`use x::*`) are not followed (the glob is an edge to
//! `x`); only test modules use globs today.
//!
//! Test-only code does not count: `#[cfg(test)]` items and modules, and the files they
//! declare, are skipped: unit tests may reach across the tree (the tests of `suppression`
//! look rules up in `rules`) without making the library's modules depend on each other.
//!
//! The crates checked are `oomlint-core` (`server/oomlint-core/src`) and the `oomlint` leaves
//! (`server/src`); every `.rs` file there must be reached from a crate root.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------
// Tokens: identifiers, `::`, single punctuation, string literals (kept for `#[path]`).
// Comments, numbers, chars and lifetimes are dropped.

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Ident,
    Punct,
    Str,
}

#[derive(Clone, Debug)]
struct Tok {
    kind: Kind,
    text: String,
    line: usize,
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where a string literal starts at `i` (`"`, `b"`, `c"`, `r#"`, `br"`, …): the index of
/// its opening quote and, for a raw string, its number of `#`.
fn string_start(c: &[char], i: usize) -> Option<(usize, Option<usize>)> {
    let mut j = i;
    if matches!(c.get(j), Some('b') | Some('c')) {
        j += 1;
    }
    if c.get(j) == Some(&'r') {
        let mut k = j + 1;
        while c.get(k) == Some(&'#') {
            k += 1;
        }
        return (c.get(k) == Some(&'"')).then_some((k, Some(k - j - 1)));
    }
    (c.get(j) == Some(&'"')).then_some((j, None))
}

fn tokenize(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let push = |out: &mut Vec<Tok>, kind, text: String, line| out.push(Tok { kind, text, line });
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if let Some((quote, raw)) = string_start(&c, i).filter(|_| ch == '"' || is_ident_start(ch)) {
            let start = line;
            let mut k = quote + 1;
            let mut text = String::new();
            while k < c.len() {
                match raw {
                    Some(hashes) if c[k] == '"' && (1..=hashes).all(|h| c.get(k + h) == Some(&'#')) => break,
                    None if c[k] == '"' => break,
                    None if c[k] == '\\' => {
                        text.push(c[k]);
                        k += 1;
                    }
                    _ => {}
                }
                if let Some(&x) = c.get(k) {
                    line += usize::from(x == '\n');
                    text.push(x);
                }
                k += 1;
            }
            push(&mut out, Kind::Str, text, start);
            i = k + 1 + raw.unwrap_or(0);
        } else if ch == '\'' || (ch == 'b' && next == Some('\'')) {
            // A char literal ('x', '\n', '\u{..}', b'x') or a lifetime ('a).
            let q = if ch == 'b' { i + 1 } else { i };
            if c.get(q + 1) == Some(&'\\') {
                let mut k = q + 3;
                while k < c.len() && c[k] != '\'' {
                    k += 1;
                }
                i = k + 1;
            } else if c.get(q + 2) == Some(&'\'') {
                i = q + 3;
            } else {
                i = q + 1;
                while i < c.len() && is_ident_char(c[i]) {
                    i += 1;
                }
            }
        } else if ch == 'r' && next == Some('#') && c.get(i + 2).is_some_and(|&x| is_ident_start(x)) {
            let start = i + 2;
            i = start;
            while i < c.len() && is_ident_char(c[i]) {
                i += 1;
            }
            push(&mut out, Kind::Ident, c[start..i].iter().collect(), line);
        } else if is_ident_start(ch) {
            let start = i;
            while i < c.len() && is_ident_char(c[i]) {
                i += 1;
            }
            push(&mut out, Kind::Ident, c[start..i].iter().collect(), line);
        } else if ch.is_ascii_digit() {
            while i < c.len()
                && (is_ident_char(c[i]) || (c[i] == '.' && c.get(i + 1).is_some_and(|x| x.is_ascii_digit())))
            {
                i += 1;
            }
        } else if ch == ':' && next == Some(':') {
            push(&mut out, Kind::Punct, "::".into(), line);
            i += 2;
        } else {
            push(&mut out, Kind::Punct, ch.to_string(), line);
            i += 1;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// The module tree, the imports of each module and the paths named in each.

type Module = Vec<String>;

struct Ref {
    from: Module,
    path: Vec<String>,
    site: String,
}

#[derive(Default)]
struct Tree {
    modules: BTreeSet<Module>,
    /// Per module, the names its `use` items bring in and the path each names (as written,
    /// relative to that module).
    imports: HashMap<Module, HashMap<String, Vec<String>>>,
    refs: Vec<Ref>,
    /// Files read, and files only declared under `#[cfg(test)]` (not read).
    files: BTreeSet<PathBuf>,
    test_files: BTreeSet<PathBuf>,
}

/// One file being read: where it is and its tokens.
struct File<'a> {
    src: &'a Source<'a>,
    path: &'a Path,
    /// The path shown in sites (relative to the source root).
    shown: String,
    toks: Vec<Tok>,
}

struct Source<'a> {
    /// Reads a file; `None` if there is none.
    read: &'a dyn Fn(&Path) -> Option<String>,
    /// Shown in place of the path prefix in sites.
    root: &'a Path,
}

fn punct(t: &[Tok], i: usize, p: &str) -> bool {
    t.get(i).is_some_and(|t| t.kind == Kind::Punct && t.text == p)
}

fn ident(t: &[Tok], i: usize, name: &str) -> bool {
    t.get(i).is_some_and(|t| t.kind == Kind::Ident && t.text == name)
}

/// The index past the group opened at `i` (`(`, `[` or `{`).
fn skip_group(t: &[Tok], i: usize) -> usize {
    let mut depth = 0usize;
    let mut k = i;
    while k < t.len() {
        if t[k].kind == Kind::Punct {
            match t[k].text.as_str() {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth -= 1;
                    if depth == 0 {
                        return k + 1;
                    }
                }
                _ => {}
            }
        }
        k += 1;
    }
    k
}

/// Skips what an attribute applies to: an item up to its `;` or its closing `}`, or a
/// field, argument or match arm up to its `,`, never past the end of the enclosing group.
fn skip_item(t: &[Tok], mut i: usize) -> usize {
    while i < t.len() {
        if t[i].kind == Kind::Punct {
            match t[i].text.as_str() {
                "(" | "[" => i = skip_group(t, i),
                "{" => return skip_group(t, i),
                ";" | "," => return i + 1,
                ")" | "]" | "}" => return i,
                "#" if punct(t, i + 1, "[") => i = skip_group(t, i + 1),
                _ => i += 1,
            }
        } else {
            i += 1;
        }
    }
    i
}

/// `cfg(test)`, `cfg(all(test, …))`: configured only for tests (and not `cfg(not(test))`).
fn is_cfg_test(attr: &[Tok]) -> bool {
    ident(attr, 0, "cfg")
        && attr.iter().any(|t| t.kind == Kind::Ident && t.text == "test")
        && !attr.iter().any(|t| t.kind == Kind::Ident && t.text == "not")
}

struct UseItem {
    path: Vec<String>,
    /// The name it brings into scope (`None` for a glob or `as _`).
    name: Option<String>,
    line: usize,
}

fn use_tree(t: &[Tok], i: &mut usize, prefix: &[String], out: &mut Vec<UseItem>) {
    let mut path = prefix.to_vec();
    let mut line = t.get(*i).map_or(0, |t| t.line);
    if punct(t, *i, "::") {
        path.push("::".into());
        *i += 1;
    }
    loop {
        match t.get(*i) {
            Some(tok) if tok.kind == Kind::Ident => {
                path.push(tok.text.clone());
                line = tok.line;
                *i += 1;
                if punct(t, *i, "::") {
                    *i += 1;
                } else {
                    break;
                }
            }
            Some(tok) if tok.kind == Kind::Punct && tok.text == "{" => {
                *i += 1;
                while *i < t.len() && !punct(t, *i, "}") {
                    if punct(t, *i, ",") {
                        *i += 1;
                    } else {
                        let before = *i;
                        use_tree(t, i, &path, out);
                        if *i == before {
                            *i += 1;
                        }
                    }
                }
                *i += 1;
                return;
            }
            Some(tok) if tok.kind == Kind::Punct && tok.text == "*" => {
                *i += 1;
                out.push(UseItem { path, name: None, line });
                return;
            }
            _ => return,
        }
    }
    if path.last().is_some_and(|s| s == "self") {
        path.pop();
    }
    let mut name = path.last().cloned();
    if ident(t, *i, "as") {
        name = t.get(*i + 1).map(|t| t.text.clone()).filter(|n| n != "_");
        *i += 2;
    }
    out.push(UseItem { path, name, line });
}

impl Tree {
    /// Reads the module `module` from `file`; its `mod x;` children are in `dir`.
    fn load(&mut self, src: &Source, file: &Path, module: Module, dir: &Path) {
        let text =
            (src.read)(file).unwrap_or_else(|| panic!("{} (module {}) not found", file.display(), module.join("::")));
        self.files.insert(file.to_path_buf());
        self.modules.insert(module.clone());
        let shown = file.strip_prefix(src.root).unwrap_or(file).display().to_string();
        let at = File { src, path: file, shown, toks: tokenize(&text) };
        self.block(&at, &mut 0, &module, dir, false);
    }

    /// Reads the items of a block (the file, an inline module, a body) from token `i` to
    /// its closing brace (`nested`) or the end of the file.
    fn block(&mut self, at: &File, i: &mut usize, module: &Module, dir: &Path, nested: bool) {
        let (src, t, file, shown) = (at.src, &at.toks[..], at.path, at.shown.as_str());
        let mut cfg_test = false;
        let mut path_attr: Option<String> = None;
        while *i < t.len() {
            let tok = &t[*i];
            if tok.kind == Kind::Punct && tok.text == "#" {
                let inner = punct(t, *i + 1, "!");
                let open = *i + 1 + usize::from(inner);
                if punct(t, open, "[") {
                    let end = skip_group(t, open);
                    let attr = &t[open + 1..end.saturating_sub(1)];
                    if is_cfg_test(attr) {
                        if inner {
                            // The whole module (or block) is test-only.
                            while *i < t.len() && !(nested && punct(t, *i, "}")) {
                                *i = skip_item(t, *i).max(*i + 1);
                            }
                            *i += 1;
                            return;
                        }
                        cfg_test = true;
                    }
                    if ident(attr, 0, "path") && punct(attr, 1, "=") {
                        path_attr = attr.get(2).filter(|t| t.kind == Kind::Str).map(|t| t.text.clone());
                    }
                    *i = end;
                    continue;
                }
            }
            if tok.kind == Kind::Ident && tok.text == "pub" {
                *i += 1;
                if punct(t, *i, "(") {
                    *i = skip_group(t, *i);
                }
                continue;
            }
            let (test, path) = (std::mem::take(&mut cfg_test), path_attr.take());
            if tok.kind == Kind::Ident && tok.text == "mod" && t.get(*i + 1).is_some_and(|t| t.kind == Kind::Ident) {
                let name = t[*i + 1].text.clone();
                let child_file = match &path {
                    Some(p) => file.parent().unwrap().join(p),
                    None if (src.read)(&dir.join(format!("{name}.rs"))).is_some() => dir.join(format!("{name}.rs")),
                    None => dir.join(&name).join("mod.rs"),
                };
                if test {
                    if punct(t, *i + 2, ";") {
                        self.test_files.insert(child_file);
                    }
                    *i = skip_item(t, *i);
                    continue;
                }
                let mut child = module.clone();
                child.push(name.clone());
                if punct(t, *i + 2, ";") {
                    *i += 3;
                    // A file named by `#[path]` or `mod.rs` keeps its children beside it.
                    let child_dir = if path.is_some() || child_file.ends_with("mod.rs") {
                        child_file.parent().unwrap().to_path_buf()
                    } else {
                        dir.join(&name)
                    };
                    self.load(src, &child_file, child, &child_dir);
                } else if punct(t, *i + 2, "{") {
                    *i += 3;
                    self.modules.insert(child.clone());
                    self.block(at, i, &child, &dir.join(&name), true);
                } else {
                    *i += 2;
                }
                continue;
            }
            if test {
                *i = skip_item(t, *i);
                continue;
            }
            match tok.kind {
                Kind::Ident if tok.text == "use" => {
                    *i += 1;
                    let mut items = Vec::new();
                    use_tree(t, i, &[], &mut items);
                    for item in items {
                        if let Some(name) = item.name {
                            self.imports.entry(module.clone()).or_default().insert(name, item.path.clone());
                        }
                        let site = format!("{shown}:{}", item.line);
                        self.refs.push(Ref { from: module.clone(), path: item.path, site });
                    }
                }
                Kind::Ident if punct(t, *i + 1, "::") && !(*i > 0 && punct(t, *i - 1, "::")) => {
                    let mut path = vec![tok.text.clone()];
                    let mut line = tok.line;
                    *i += 1;
                    while punct(t, *i, "::") && t.get(*i + 1).is_some_and(|t| t.kind == Kind::Ident) {
                        path.push(t[*i + 1].text.clone());
                        line = t[*i + 1].line;
                        *i += 2;
                    }
                    self.refs.push(Ref { from: module.clone(), path, site: format!("{shown}:{line}") });
                }
                Kind::Punct if tok.text == "{" => {
                    *i += 1;
                    self.block(at, i, module, dir, true);
                }
                Kind::Punct if tok.text == "}" && nested => {
                    *i += 1;
                    return;
                }
                _ => *i += 1,
            }
        }
    }

    fn import(&self, module: &[String], name: &str) -> Option<&Vec<String>> {
        self.imports.get(module).and_then(|names| names.get(name))
    }

    /// The deepest module of this tree that `path`, written in module `from`, goes
    /// through; `None` for a path outside this tree (another crate, `std`, `Self::`…).
    fn resolve(&self, from: &[String], path: &[String], depth: u32) -> Option<Module> {
        if depth > 16 || path.is_empty() {
            return None;
        }
        let (mut cur, rest): (Module, &[String]) = match path[0].as_str() {
            "crate" => (from[..1].to_vec(), &path[1..]),
            "self" => (from.to_vec(), &path[1..]),
            "super" => {
                let mut cur = from.to_vec();
                let supers = path.iter().take_while(|s| *s == "super").count();
                for _ in 0..supers {
                    if cur.len() <= 1 {
                        return None;
                    }
                    cur.pop();
                }
                (cur, &path[supers..])
            }
            first => {
                let mut child = from.to_vec();
                child.push(first.to_string());
                if !self.modules.contains(&child) && self.import(from, first).is_none() {
                    return None;
                }
                (from.to_vec(), path)
            }
        };
        for (k, segment) in rest.iter().enumerate() {
            let mut child = cur.clone();
            child.push(segment.clone());
            if self.modules.contains(&child) {
                cur = child;
                continue;
            }
            if let Some(target) = self.import(&cur, segment) {
                let mut through: Vec<String> = target.clone();
                through.extend(rest[k + 1..].iter().cloned());
                return Some(self.resolve(&cur, &through, depth + 1).unwrap_or(cur));
            }
            break;
        }
        Some(cur)
    }

    /// Edges between siblings, per parent module: (from, to) → sites.
    fn sibling_edges(&self) -> BTreeMap<Module, BTreeMap<(String, String), Vec<String>>> {
        let mut levels: BTreeMap<Module, BTreeMap<(String, String), Vec<String>>> = BTreeMap::new();
        for r in &self.refs {
            let Some(to) = self.resolve(&r.from, &r.path, 0) else { continue };
            let common = r.from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == r.from.len() || common == to.len() {
                continue;
            }
            let edge = (r.from[common].clone(), to[common].clone());
            let sites = levels.entry(r.from[..common].to_vec()).or_default().entry(edge).or_default();
            if !sites.contains(&r.site) {
                sites.push(r.site.clone());
            }
        }
        levels
    }
}

// ---------------------------------------------------------------------------------------
// Strongly connected components (Tarjan).

/// The components of more than one node, each sorted, in order.
fn cycles(edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    struct State<'a> {
        next: BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.next.get(v).cloned().unwrap_or_default() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        next: BTreeMap::new(),
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for (a, b) in edges {
        s.next.entry(a.as_str()).or_default().push(b.as_str());
        s.next.entry(b.as_str()).or_default();
    }
    let nodes: Vec<&str> = s.next.keys().copied().collect();
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found.sort();
    s.found
}

/// The cycles of a tree, one paragraph each: the component and the edges inside it.
fn report(tree: &Tree) -> Vec<String> {
    let mut out = Vec::new();
    for (level, edges) in tree.sibling_edges() {
        let pairs: BTreeSet<(String, String)> = edges.keys().cloned().collect();
        for component in cycles(&pairs) {
            let mut text = format!("in {}: {{{}}}\n", level.join("::"), component.join(", "));
            for ((a, b), sites) in &edges {
                if component.contains(a) && component.contains(b) {
                    let more = sites.len().saturating_sub(3);
                    let shown = sites[..sites.len().min(3)].join(", ");
                    let more = if more > 0 { format!(" (+{more} more)") } else { String::new() };
                    text += &format!("  {a} -> {b}: {shown}{more}\n");
                }
            }
            out.push(text);
        }
    }
    out
}

fn load_crate(tree: &mut Tree, src: &Source, name: &str, root_file: &Path) {
    let dir = root_file.parent().unwrap().to_path_buf();
    tree.load(src, root_file, vec![name.to_string()], &dir);
}

fn rust_files(dir: &Path, out: &mut BTreeSet<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.insert(path);
        }
    }
}

#[test]
fn sibling_modules_have_no_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let src = Source { read: &read, root };
    let mut tree = Tree::default();
    load_crate(&mut tree, &src, "oomlint_core", &root.join("server/oomlint-core/src/lib.rs"));
    load_crate(&mut tree, &src, "oomlint", &root.join("server/src/lib.rs"));
    load_crate(&mut tree, &src, "oomlint_main", &root.join("server/src/main.rs"));

    // Every source file is a module of a crate or a test-only one: none left unread.
    let mut on_disk = BTreeSet::new();
    rust_files(&root.join("server/oomlint-core/src"), &mut on_disk);
    rust_files(&root.join("server/src"), &mut on_disk);
    let reached: BTreeSet<PathBuf> = tree.files.union(&tree.test_files).cloned().collect();
    let unreached: Vec<_> = on_disk.difference(&reached).collect();
    assert!(unreached.is_empty(), "files outside the module tree: {unreached:?}");
    assert!(tree.modules.len() > 100, "only {} modules found", tree.modules.len());

    let found = report(&tree);
    assert!(
        found.is_empty(),
        "sibling modules that depend on each other (directly or through others):\n\n{}",
        found.join("\n")
    );
}

#[test]
fn the_cycle_finder_finds_each_component() {
    let edges: BTreeSet<(String, String)> =
        [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("e", "d"), ("e", "f"), ("g", "a")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
    assert_eq!(cycles(&edges), [vec!["a", "b", "c"], vec!["d", "e"]]);
    let acyclic: BTreeSet<(String, String)> =
        [("a", "b"), ("b", "c"), ("a", "c")].into_iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    assert!(cycles(&acyclic).is_empty());
}

#[test]
fn a_synthetic_crate_with_cycles_fails_and_test_code_does_not_count() {
    let files: HashMap<PathBuf, &str> = [
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n#[cfg(test)]\nmod tests;\n"),
        // a → b through a grouped `use`; b → a through a re-export of the parent (`super::A`).
        (
            "a.rs",
            "use crate::{b::{self, B}, c};\n// crate::d::D in a comment\nfn f() -> &'static str { \"crate::d::D\" }\n",
        ),
        ("b.rs", "pub struct B;\nuse super::A;\n#[cfg(test)]\nmod tests { use crate::d::D; }\n"),
        ("c.rs", "pub mod x;\npub mod y;\nfn f() { crate::d::g(); }\n"),
        // Inside c: x → y in code, y → x through `self::`-less child paths of the parent.
        ("c/x.rs", "pub fn f() { super::y::g(); }\n"),
        ("c/y.rs", "use super::x;\npub fn g() { x::f(); let _ = 'q'; let _ = '\\''; }\n"),
        // d → a only in a test item: no edge.
        ("d.rs", "pub struct D;\npub fn g() {}\n#[cfg(test)]\nfn t() { crate::a::f(); }\n"),
        ("tests.rs", "use crate::a::*;\n"),
    ]
    .into_iter()
    .map(|(p, t)| (Path::new("/x").join(p), t))
    .collect();
    let mut with_reexport = files.clone();
    let lib = "pub mod a;\npub mod b;\npub mod c;\npub mod d;\npub use a::A;\n#[cfg(test)]\nmod tests;\n";
    with_reexport.insert(Path::new("/x/lib.rs").to_path_buf(), lib);
    let a = "pub struct A;\nuse crate::{b::{self, B}, c};\n// crate::d::D in a comment\nfn f() -> &'static str { \"crate::d::D\" }\n";
    with_reexport.insert(Path::new("/x/a.rs").to_path_buf(), a);

    let read = |p: &Path| with_reexport.get(p).map(|t| t.to_string());
    let src = Source { read: &read, root: Path::new("/x") };
    let mut tree = Tree::default();
    load_crate(&mut tree, &src, "k", Path::new("/x/lib.rs"));
    assert!(tree.test_files.contains(Path::new("/x/tests.rs")));
    let edges = tree.sibling_edges();
    let top: Vec<_> = edges[&vec!["k".to_string()]].keys().cloned().collect();
    let pairs = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
    assert_eq!(top, pairs(&[("a", "b"), ("a", "c"), ("b", "a"), ("c", "d")]));
    let found = report(&tree);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("in k: {a, b}\n  a -> b: a.rs:2\n  b -> a: b.rs:2\n"), "{}", found[0]);
    assert!(found[1].starts_with("in k::c: {x, y}\n"), "{}", found[1]);

    // Without the re-export, `super::A` names nothing in `a`: no cycle at the top.
    let read = |p: &Path| files.get(p).map(|t| t.to_string());
    let src = Source { read: &read, root: Path::new("/x") };
    let mut tree = Tree::default();
    load_crate(&mut tree, &src, "k", Path::new("/x/lib.rs"));
    let found = report(&tree);
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn the_tokenizer_drops_comments_and_literals() {
    let src =
        "a /* b /* c */ d */ e // f\n\"g \\\" h\" r##\"i \"j\"# k\"## b'l' '\\'' 'm' <'n> br\"o\" x::y 1.5 r#type\n";
    let toks = tokenize(src);
    let idents: Vec<&str> = toks.iter().filter(|t| t.kind == Kind::Ident).map(|t| t.text.as_str()).collect();
    assert_eq!(idents, ["a", "e", "x", "y", "type"]);
    let strings: Vec<&str> = toks.iter().filter(|t| t.kind == Kind::Str).map(|t| t.text.as_str()).collect();
    assert_eq!(strings, ["g \\\" h", "i \"j\"# k", "o"]);
    assert_eq!(toks.iter().find(|t| t.text == "x").map(|t| t.line), Some(2));
}
