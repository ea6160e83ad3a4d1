//! The module graph of the model library, read from its sources (issue 45): which
//! module refers to which through `crate::` and `super::` paths, outside test modules
//! and comments. Two rules hold and are checked here:
//! - the graph has no cycle (observation used to tie cell, cell_trace, kind, payload,
//!   series and wirecheck into one); a module's references to its own ancestors (a
//!   child using what its parent declares) are nesting, not edges;
//! - no module outside `observers` refers to an observer: models fire observations
//!   (`observe`), the scenario subscribes the observers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (`link::transmitter`; "" for the crate root) → its source, with test
/// modules and comments cut.
fn sources() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).expect("the source folder") {
            let p = e.expect("a folder entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&root, &mut files);
    let mut out = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&root).expect("under src").with_extension("");
        let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
        if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
            parts.pop();
        }
        let text = std::fs::read_to_string(&f).expect("a source file");
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        let code: String = code.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
        out.insert(parts.join("::"), code);
    }
    out
}

/// The module a path names: its longest prefix that is a module.
fn resolve(path: &[&str], modules: &BTreeMap<String, String>) -> Option<String> {
    (1..=path.len()).rev().map(|k| path[..k].join("::")).find(|m| modules.contains_key(m))
}

/// The paths after each occurrence of `prefix` in `code` (`a::b::c`).
fn paths_after<'a>(code: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
        out.push(rest[..end].split("::").filter(|s| !s.is_empty()).collect());
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let modules = sources();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, code) in &modules {
        let here: Vec<&str> = if m.is_empty() { Vec::new() } else { m.split("::").collect() };
        let mut to = BTreeSet::new();
        for p in paths_after(code, "crate::") {
            to.extend(resolve(&p, &modules));
        }
        // `super::x`: x in the module's parent (a sibling in its folder).
        let up = &here[..here.len().saturating_sub(1)];
        for p in paths_after(code, "super::") {
            let full: Vec<&str> = up.iter().copied().chain(p.iter().copied()).collect();
            to.extend(resolve(&full, &modules));
        }
        // A child using what its parent module declares is Rust's nesting, not a cycle.
        to.retain(|t| t != m && !t.is_empty() && !m.starts_with(&format!("{t}::")));
        g.insert(m.clone(), to);
    }
    g
}

#[test]
fn the_model_librarys_modules_form_no_cycle() {
    let g = graph();
    assert!(g.get("link::transmitter").is_some_and(|t| t.contains("cell") && t.contains("link::buffer")), "the reader finds references: {:?}", g.get("link::transmitter"));
    assert!(g.get("aal::sar").is_some_and(|t| t.contains("aal::aal5")), "super:: paths are followed: {:?}", g.get("aal::sar"));
    // Depth-first search for a back edge, reporting the cycle it closes.
    fn visit(v: &str, g: &BTreeMap<String, BTreeSet<String>>, state: &mut BTreeMap<String, u8>, stack: &mut Vec<String>) -> Option<Vec<String>> {
        state.insert(v.to_string(), 1);
        stack.push(v.to_string());
        for w in g.get(v).into_iter().flatten() {
            match state.get(w.as_str()).copied().unwrap_or(0) {
                0 => {
                    if let Some(c) = visit(w, g, state, stack) {
                        return Some(c);
                    }
                }
                1 => {
                    let at = stack.iter().position(|s| s == w).unwrap_or(0);
                    return Some(stack[at..].iter().cloned().chain([w.clone()]).collect());
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(v.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for v in g.keys() {
        if state.get(v.as_str()).copied().unwrap_or(0) == 0 {
            let cycle = visit(v, &g, &mut state, &mut Vec::new());
            assert!(cycle.is_none(), "an import cycle: {}", cycle.unwrap_or_default().join(" -> "));
        }
    }
}

#[test]
fn no_model_refers_to_an_observer() {
    let g = graph();
    assert!(g.contains_key("observers::cell_trace") && g.contains_key("observers::wire_check") && g.contains_key("observers::capture"));
    let users: Vec<&String> = g.iter().filter(|(m, to)| !m.starts_with("observers") && to.iter().any(|t| t.starts_with("observers"))).map(|(m, _)| m).collect();
    assert!(users.is_empty(), "modules outside observers that refer to one: {users:?}");
}
