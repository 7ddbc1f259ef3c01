//! The module tree of a crate, the references between its modules and the
//! cycles among them: what `cargo xtask modules` checks.
//!
//! A crate's modules are found as rustc finds them, from its root file
//! through `mod name;` (in `name.rs` or `name/mod.rs`) and inline
//! `mod name { .. }` blocks. A reference is any path written from `crate`,
//! `super` or `self` (in a `use`, an expression, a type, a macro's
//! arguments), resolved to the longest module it names. Tokens are read,
//! not a syntax tree: a path is a path wherever it is written.
//!
//! A module's references to its ancestors and descendants are its own
//! business (a child uses what its parent shares; a parent re-exports its
//! children). A cycle is between siblings: for a reference from `a::x` to
//! `b::y`, the subtree `a` depends on the subtree `b`, and subtrees that
//! depend on each other, directly or through others, form a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use petgraph::graph::DiGraph;
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};

/// A module's path from the crate root (the root is empty).
pub type ModPath = Vec<String>;

/// One path written in `file`, inside module `from`, naming `to`.
#[derive(Debug, Clone)]
pub struct Reference {
    pub from: ModPath,
    pub to: ModPath,
    pub file: PathBuf,
    /// The path as written from its `crate`/`super`/`self`, resolved.
    pub written: String,
}

/// A crate's modules and the references between them.
#[derive(Debug, Default)]
pub struct Crate {
    /// Every module and the file it is written in.
    pub modules: BTreeMap<ModPath, PathBuf>,
    pub references: Vec<Reference>,
}

/// Sibling modules (children of `parent`) that depend on each other, with
/// one reference for each dependency inside the cycle.
#[derive(Debug)]
pub struct Cycle {
    pub parent: ModPath,
    pub members: Vec<String>,
    pub evidence: Vec<Reference>,
}

/// Reads the crate whose root file (`src/lib.rs`, `src/main.rs`) is `root`.
pub fn read_crate(root: &Path) -> Result<Crate> {
    let mut krate = Crate::default();
    let mut raw = Vec::new();
    let mut queue = vec![(ModPath::new(), root.to_path_buf(), true)];
    while let Some((module, file, owns_dir)) = queue.pop() {
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        let tokens: TokenStream =
            text.parse().map_err(|e| anyhow::anyhow!("{} does not tokenize: {e:?}", file.display()))?;
        // Children declared here live in this file's directory when it owns
        // one (lib.rs, main.rs, mod.rs), else in a directory named after it.
        let dir =
            if owns_dir { file.parent().unwrap_or(Path::new(".")).to_path_buf() } else { file.with_extension("") };
        krate.modules.insert(module.clone(), file.clone());
        let mut scan = Scan { file: &file, raw: &mut raw, declared: Vec::new(), modules: &mut krate.modules };
        scan.tokens(tokens, &module, &dir);
        for (child, child_dir) in scan.declared {
            let name = child.last().expect("a declared module has a name");
            let flat = child_dir.join(format!("{name}.rs"));
            let nested = child_dir.join(name).join("mod.rs");
            match (flat.is_file(), nested.is_file()) {
                (true, false) => queue.push((child, flat, false)),
                (false, true) => queue.push((child, nested, true)),
                (true, true) => {
                    bail!("module {} is in both {} and {}", child.join("::"), flat.display(), nested.display())
                }
                (false, false) => {
                    bail!("module {} is in neither {} nor {}", child.join("::"), flat.display(), nested.display())
                }
            }
        }
    }
    for (from, path, file) in raw {
        let to = (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|prefix| krate.modules.contains_key(prefix))
            .unwrap_or_default();
        let written = format!("crate::{}", path.join("::"));
        krate.references.push(Reference { from, to, file, written });
    }
    Ok(krate)
}

/// Reading one file's tokens.
struct Scan<'a> {
    file: &'a Path,
    /// (from, absolute path, file) for every path written from crate/super/self.
    raw: &'a mut Vec<(ModPath, Vec<String>, PathBuf)>,
    /// `mod name;` declarations: the child's path and the directory its file is in.
    declared: Vec<(ModPath, PathBuf)>,
    modules: &'a mut BTreeMap<ModPath, PathBuf>,
}

impl Scan<'_> {
    fn tokens(&mut self, tokens: TokenStream, module: &ModPath, dir: &Path) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Ident(ident) if ident == "mod" => {
                    if let Some(TokenTree::Ident(name)) = trees.get(i + 1) {
                        let child = [module.as_slice(), &[name.to_string()]].concat();
                        match trees.get(i + 2) {
                            Some(TokenTree::Punct(p)) if p.as_char() == ';' => {
                                self.declared.push((child, dir.to_path_buf()));
                                i += 3;
                                continue;
                            }
                            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                                self.modules.insert(child.clone(), self.file.to_path_buf());
                                self.tokens(g.stream(), &child, &dir.join(name.to_string()));
                                i += 3;
                                continue;
                            }
                            _ => {}
                        }
                    }
                }
                TokenTree::Ident(ident) if ["crate", "super", "self"].iter().any(|k| ident == k) => {
                    let after_dollar = i > 0 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
                    let after_in = i > 0 && matches!(&trees[i - 1], TokenTree::Ident(p) if p == "in");
                    if !after_dollar && !after_in && is_path_sep(&trees, i + 1) {
                        let base = match ident.to_string().as_str() {
                            "crate" => Vec::new(),
                            "self" => module.clone(),
                            _ => module[..module.len().saturating_sub(1)].to_vec(),
                        };
                        i = self.path(&trees, i + 3, base, module);
                        continue;
                    }
                }
                TokenTree::Group(g) => self.tokens(g.stream(), module, dir),
                _ => {}
            }
            i += 1;
        }
    }

    /// Reads the rest of a path from `trees[i]` (just after a `::`) onto
    /// `prefix`, records every path it names (a `use` group names several),
    /// and returns the index after it.
    fn path(&mut self, trees: &[TokenTree], mut i: usize, mut prefix: Vec<String>, module: &ModPath) -> usize {
        loop {
            match trees.get(i) {
                Some(TokenTree::Ident(seg)) if seg == "super" => {
                    prefix.pop();
                }
                Some(TokenTree::Ident(seg)) => prefix.push(seg.to_string()),
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                    self.use_group(g.stream(), &prefix, module);
                    return i + 1;
                }
                // A glob, or something else: the path so far.
                _ => break,
            }
            if !is_path_sep(trees, i + 1) {
                i += 1;
                break;
            }
            i += 3;
        }
        self.raw.push((module.clone(), prefix, self.file.to_path_buf()));
        i
    }

    /// `{a::b, c, self}` after `prefix::`.
    fn use_group(&mut self, stream: TokenStream, prefix: &[String], module: &ModPath) {
        let trees: Vec<TokenTree> = stream.into_iter().collect();
        for item in trees.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')) {
            match item.first() {
                Some(TokenTree::Ident(seg)) if seg == "self" => {
                    self.raw.push((module.clone(), prefix.to_vec(), self.file.to_path_buf()));
                }
                Some(_) => {
                    self.path(item, 0, prefix.to_vec(), module);
                }
                None => {}
            }
        }
    }
}

/// Whether `trees[i..]` starts with `::`.
fn is_path_sep(trees: &[TokenTree], i: usize) -> bool {
    matches!((trees.get(i), trees.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
}

/// Every cycle among sibling modules of `krate`.
pub fn cycles(krate: &Crate) -> Vec<Cycle> {
    // parent -> (dependent child, dependency child) -> one reference
    let mut edges: BTreeMap<ModPath, BTreeMap<(String, String), Reference>> = BTreeMap::new();
    for r in &krate.references {
        let common = r.from.iter().zip(&r.to).take_while(|(a, b)| a == b).count();
        if common == r.from.len() || common == r.to.len() {
            continue; // an ancestor or a descendant
        }
        let key = (r.from[common].clone(), r.to[common].clone());
        edges.entry(r.from[..common].to_vec()).or_default().entry(key).or_insert_with(|| r.clone());
    }
    let mut found = Vec::new();
    for (parent, deps) in edges {
        let names: BTreeSet<&String> = deps.keys().flat_map(|(a, b)| [a, b]).collect();
        let mut graph = DiGraph::<&String, ()>::new();
        let index: BTreeMap<&String, _> = names.iter().map(|n| (*n, graph.add_node(*n))).collect();
        for (a, b) in deps.keys() {
            graph.add_edge(index[a], index[b], ());
        }
        for scc in petgraph::algo::tarjan_scc(&graph) {
            if scc.len() < 2 {
                continue;
            }
            let mut members: Vec<String> = scc.iter().map(|n| graph[*n].clone()).collect();
            members.sort();
            let evidence = deps
                .iter()
                .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                .map(|(_, r)| r.clone())
                .collect();
            found.push(Cycle { parent: parent.clone(), members, evidence });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    fn tempdir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-modules-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn siblings_that_import_each_other_are_a_cycle_and_ancestors_are_not() {
        let dir = tempdir("cycle");
        write(
            &dir,
            &[
                ("lib.rs", "mod a; pub mod b; mod c { use crate::Root; } pub struct Root;"),
                ("a.rs", "use crate::Root; pub struct X; fn f() { super::b::inner::g() }"),
                ("b/mod.rs", "pub mod inner; use super::{c, a::{self, X}};"),
                ("b/inner.rs", "pub fn g() { let _ = super::super::Root; }"),
            ],
        );
        let krate = read_crate(&dir.join("lib.rs")).unwrap();
        let names: Vec<String> = krate.modules.keys().map(|m| m.join("::")).collect();
        assert_eq!(names, ["", "a", "b", "b::inner", "c"]);
        let found = cycles(&krate);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].members, ["a", "b"]);
        assert!(found[0].parent.is_empty());
        let written: BTreeSet<&str> = found[0].evidence.iter().map(|r| r.written.as_str()).collect();
        assert_eq!(written, BTreeSet::from(["crate::b::inner::g", "crate::a"]));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_cycle_through_three_modules_is_one_cycle() {
        let dir = tempdir("three");
        write(
            &dir,
            &[
                ("lib.rs", "mod a; mod b; mod c;"),
                ("a.rs", "use crate::b::Y;"),
                ("b.rs", "pub struct Y(crate::c::Z);"),
                ("c.rs", "pub struct Z; macro_rules! m { () => { $crate::a::f() } } fn g() { format!(\"{}\", crate::a::N); }"),
            ],
        );
        let found = cycles(&read_crate(&dir.join("lib.rs")).unwrap());
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].members, ["a", "b", "c"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_missing_module_file_is_an_error_that_names_both_places() {
        let dir = tempdir("missing");
        write(&dir, &[("lib.rs", "mod gone;")]);
        let error = read_crate(&dir.join("lib.rs")).unwrap_err().to_string();
        assert!(error.contains("gone.rs") && error.contains("mod.rs"), "{error}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
