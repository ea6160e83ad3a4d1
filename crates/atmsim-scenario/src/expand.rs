//! N of a kind without N copies: component `copies` and `for` list elements.
//!
//! A study of six identical sessions needs six sources, six edges, six VC entries in a
//! switch and a dozen connections that differ only by an index. Two forms say that
//! once (expanded right after parsing, so every later check, `--set`, `[sweep]` and
//! the golden fingerprints see the plain scenario they stand for):
//!
//! ```toml
//! connections = ["for i in 1..6: src{i} -> edge{i}.in"]   # 1 to 6, both included
//!
//! [components."edge{i}"]     # edge1 … edge6
//! copies = 6
//! kind = "abr_edge"
//! vc = "{i}"                 # a value that is one placeholder becomes a number: vc = 1 …
//! back_port = "p{i+6}"       # arithmetic: {i+K}, {i-K}
//!
//! [components.sw1]
//! vcs = ["for k in 1..6: p{k}:{k} -> p7:{k}"]
//! ```
//!
//! - `copies = N` (1..=10,000) makes N components; the table name must contain `{i}`
//!   and each copy gets `i` = 1..N in its name and in its string values.
//! - A string element of any list (connections, list parameters, `[probes]`) that
//!   starts with `for NAME in A..B:` becomes B − A + 1 elements (A ≤ B, both
//!   included), NAME = A..B substituted in the rest of the element.
//! - A placeholder is `{NAME}`, `{NAME+K}` or `{NAME-K}` (NAME lower-case letters and
//!   `_`, K a non-negative integer). A placeholder naming no variable in scope is an
//!   error (file, line, key), as is an index below 0 after arithmetic. Braces that do
//!   not form a placeholder are left as written.

use crate::error::ScenarioError;
use crate::load::{invalid, RawComponent, RawEntry, RawScenario};
use atmsim_models::params::Raw;

/// Most copies of one table (and elements of one `for`): a typo like `copies = 6000000`
/// should be an error, not an out-of-memory.
const MAX_COPIES: i64 = 10_000;

type Vars<'a> = &'a [(&'a str, i64)];

/// Expands `copies` tables and `for` list elements in place.
pub(crate) fn expand(mut raw: RawScenario) -> Result<RawScenario, ScenarioError> {
    let file = raw.file.clone();
    let f = file.as_str();
    let mut conns = Vec::with_capacity(raw.connections.len());
    for (text, line) in &raw.connections {
        for t in expand_for(f, *line, "connections", text, &[])? {
            conns.push((t, *line));
        }
    }
    raw.connections = conns;
    raw.probes = raw.probes.iter().map(|e| expand_entry(f, "probes", e, &[])).collect::<Result<_, _>>()?;
    raw.trace = raw.trace.iter().map(|e| expand_entry(f, "trace", e, &[])).collect::<Result<_, _>>()?;
    raw.scenario = raw.scenario.iter().map(|e| expand_entry(f, "scenario", e, &[])).collect::<Result<_, _>>()?;
    let mut comps = Vec::with_capacity(raw.components.len());
    for c in &raw.components {
        let ckey = format!("components.{}", c.name);
        let copies = c.entries.iter().find(|e| e.key == "copies");
        let Some(ce) = copies else {
            if c.name.contains("{i") {
                return Err(invalid(f, c.line, &ckey, "a name with {i} needs copies = N in its table (how many components it stands for)"));
            }
            let entries = c.entries.iter().map(|e| expand_entry(f, &ckey, e, &[])).collect::<Result<_, _>>()?;
            comps.push(RawComponent { name: c.name.clone(), line: c.line, entries });
            continue;
        };
        let n = match ce.raw {
            Raw::Int(n) if (1..=MAX_COPIES).contains(&n) => n,
            ref other => return Err(invalid(f, ce.line, &format!("{ckey}.copies"), format!("{other} is not valid; expected an integer 1..{MAX_COPIES}"))),
        };
        if !c.name.contains("{i}") && !c.name.contains("{i+") && !c.name.contains("{i-") {
            return Err(invalid(f, c.line, &ckey, format!("copies = {n} needs the index in the name, e.g. [components.\"{}{{i}}\"] for {0}1 … {0}{n}", c.name)));
        }
        for i in 1..=n {
            let vars = [("i", i)];
            let name = subst(f, c.line, &ckey, &c.name, &vars)?;
            let entries = c.entries.iter().filter(|e| e.key != "copies").map(|e| expand_entry(f, &ckey, e, &vars)).collect::<Result<_, _>>()?;
            comps.push(RawComponent { name, line: c.line, entries });
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for c in &comps {
        if !seen.insert(c.name.as_str()) {
            return Err(invalid(f, c.line, &format!("components.{}", c.name), "this name is used twice (a copy's name equals another component's)"));
        }
    }
    raw.components = comps;
    Ok(raw)
}

fn expand_entry(f: &str, table: &str, e: &RawEntry, vars: Vars) -> Result<RawEntry, ScenarioError> {
    let key = format!("{table}.{}", e.key);
    let raw = match &e.raw {
        Raw::Str(s) => {
            let t = subst(f, e.line, &key, s, vars)?;
            // A value that is one placeholder stands for a number (vc = "{i}").
            if is_one_placeholder(s) {
                match t.parse::<i64>() {
                    Ok(n) => Raw::Int(n),
                    Err(_) => Raw::Str(t),
                }
            } else {
                Raw::Str(t)
            }
        }
        Raw::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            for r in items {
                match r {
                    Raw::Str(s) => out.extend(expand_for(f, e.line, &key, s, vars)?.into_iter().map(Raw::Str)),
                    other => out.push(other.clone()),
                }
            }
            Raw::List(out)
        }
        other => other.clone(),
    };
    Ok(RawEntry { key: e.key.clone(), raw, line: e.line })
}

fn is_one_placeholder(s: &str) -> bool {
    s.starts_with('{') && s.ends_with('}') && s[1..].find('}') == Some(s.len() - 2) && parse_placeholder(&s[1..s.len() - 1]).is_some()
}

/// One list element: `for NAME in A..B: TEXT` becomes B − A + 1 elements; any other
/// element is substituted once.
fn expand_for(f: &str, line: Option<usize>, key: &str, text: &str, vars: Vars) -> Result<Vec<String>, ScenarioError> {
    let t = text.trim_start();
    let Some(rest) = t.strip_prefix("for ") else {
        return Ok(vec![subst(f, line, key, text, vars)?]);
    };
    let bad = |why: &str| invalid(f, line, key, format!("'{text}': {why}; write \"for i in 1..6: src{{i}} -> edge{{i}}.in\" (1 to 6, both included)"));
    let (head, body) = rest.split_once(':').ok_or_else(|| bad("no ':' after the range"))?;
    let (name, range) = head.split_once(" in ").ok_or_else(|| bad("expected 'for NAME in A..B:'"))?;
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
        return Err(bad(&format!("'{name}' is not a variable name (lower-case letters and '_')")));
    }
    if vars.iter().any(|(v, _)| *v == name) {
        return Err(bad(&format!("'{name}' is already the copy index here; name the loop variable otherwise")));
    }
    let (a, b) = range.trim().split_once("..").ok_or_else(|| bad("the range is written A..B"))?;
    let bound = |s: &str| -> Result<i64, ScenarioError> {
        let s = s.trim();
        match s.parse::<i64>() {
            Ok(n) => Ok(n),
            Err(_) => {
                // A bound may itself be a placeholder of an enclosing copy ({i}).
                let v = subst(f, line, key, s, vars)?;
                v.parse::<i64>().map_err(|_| bad(&format!("'{s}' is not an integer bound")))
            }
        }
    };
    let (a, b) = (bound(a)?, bound(b)?);
    if a > b || b - a >= MAX_COPIES {
        return Err(bad(&format!("{a}..{b} is not a range of 1..{MAX_COPIES} values (A ≤ B)")));
    }
    let body = body.trim();
    let mut out = Vec::with_capacity((b - a + 1) as usize);
    for k in a..=b {
        let mut scope: Vec<(&str, i64)> = vars.to_vec();
        scope.push((name, k));
        out.push(subst(f, line, key, body, &scope)?);
    }
    Ok(out)
}

/// `NAME`, `NAME+K`, `NAME-K` → (name, offset); anything else is not a placeholder.
fn parse_placeholder(s: &str) -> Option<(&str, i64)> {
    let end = s.find(|c: char| !(c.is_ascii_lowercase() || c == '_')).unwrap_or(s.len());
    let (name, rest) = s.split_at(end);
    if name.is_empty() {
        return None;
    }
    let off = if rest.is_empty() {
        0
    } else if let Some(k) = rest.strip_prefix('+') {
        k.parse::<i64>().ok().filter(|k| *k >= 0)?
    } else if let Some(k) = rest.strip_prefix('-') {
        -k.parse::<i64>().ok().filter(|k| *k >= 0)?
    } else {
        return None;
    };
    Some((name, off))
}

/// Replaces every placeholder by its value; one naming no variable in scope is an error.
fn subst(f: &str, line: Option<usize>, key: &str, s: &str, vars: Vars) -> Result<String, ScenarioError> {
    if !s.contains('{') {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return Ok(out);
        };
        match parse_placeholder(&after[..close]) {
            Some((name, off)) => {
                let Some(&(_, v)) = vars.iter().find(|(n, _)| *n == name) else {
                    let hint = if name == "i" { "inside a table with copies = N" } else { "inside a list element starting 'for NAME in A..B:'" };
                    return Err(invalid(f, line, key, format!("'{s}': placeholder {{{}}} has no value here; use it {hint}", &after[..close])));
                };
                let x = v + off;
                if x < 0 {
                    return Err(invalid(f, line, key, format!("'{s}': {{{}}} is {x} for {name} = {v}; indices are not negative", &after[..close])));
                }
                out.push_str(&x.to_string());
            }
            None => out.push_str(&rest[open..open + 1 + close + 1]),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_raw;

    fn err(text: &str) -> String {
        parse_raw(text, "t.toml").unwrap_err().to_string()
    }

    #[test]
    fn copies_and_for_elements_expand() {
        let text = r#"connections = ["for i in 1..3: src{i} -> sw.p{i}", "sw.p4 -> sink"]
[components."src{i}"]
copies = 3
kind = "cbr"
rate = "{i} Mb/s"
vc = "{i+10}"
[components.sw]
kind = "switch"
vcs = ["for k in 1..3: p{k}:{k} -> p4:{k}", "p9:1 -> p1:1"]
"#;
        let raw = parse_raw(text, "t.toml").unwrap();
        let names: Vec<&str> = raw.components.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["src1", "src2", "src3", "sw"]);
        let src2 = &raw.components[1];
        assert_eq!(src2.entries.iter().find(|e| e.key == "rate").unwrap().raw, Raw::Str("2 Mb/s".into()));
        assert_eq!(src2.entries.iter().find(|e| e.key == "vc").unwrap().raw, Raw::Int(12));
        assert!(src2.entries.iter().all(|e| e.key != "copies"));
        assert_eq!(src2.line, Some(2));
        let conns: Vec<&str> = raw.connections.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(conns, ["src1 -> sw.p1", "src2 -> sw.p2", "src3 -> sw.p3", "sw.p4 -> sink"]);
        let vcs = &raw.components[3].entries.iter().find(|e| e.key == "vcs").unwrap().raw;
        let want: Vec<Raw> = ["p1:1 -> p4:1", "p2:2 -> p4:2", "p3:3 -> p4:3", "p9:1 -> p1:1"].iter().map(|s| Raw::Str(s.to_string())).collect();
        assert_eq!(vcs, &Raw::List(want));
    }

    #[test]
    fn for_inside_a_copy_sees_the_copy_index_and_braces_that_are_not_placeholders_stay() {
        let text = r#"[components."d{i}"]
copies = 2
kind = "x"
l = ["for j in 1..{i}: a{i}b{j}", "{not one}", "{I}"]
"#;
        let raw = parse_raw(text, "t.toml").unwrap();
        let l = |c: usize| raw.components[c].entries.iter().find(|e| e.key == "l").unwrap().raw.clone();
        let s = |v: &[&str]| Raw::List(v.iter().map(|s| Raw::Str(s.to_string())).collect());
        assert_eq!(l(0), s(&["a1b1", "{not one}", "{I}"]));
        assert_eq!(l(1), s(&["a2b1", "a2b2", "{not one}", "{I}"]));
    }

    #[test]
    fn bad_forms_are_one_line_errors_with_file_line_and_key() {
        let e = err("[components.\"s{i}\"]\nkind = \"cbr\"\n");
        assert!(e.contains("t.toml:1") && e.contains("components.s{i}") && e.contains("needs copies = N"), "{e}");
        let e = err("[components.s]\ncopies = 3\nkind = \"cbr\"\n");
        assert!(e.contains("components.s") && e.contains("needs the index in the name") && e.contains("s1 … s3"), "{e}");
        let e = err("[components.\"s{i}\"]\ncopies = 0\nkind = \"cbr\"\n");
        assert!(e.contains("t.toml:2") && e.contains("components.s{i}.copies") && e.contains("1..10000"), "{e}");
        let e = err("[components.\"s{i}\"]\ncopies = \"3\"\nkind = \"cbr\"\n");
        assert!(e.contains("expected an integer 1..10000"), "{e}");
        let e = err("connections = [\"src{i} -> sink\"]\n");
        assert!(e.contains("t.toml:1") && e.contains("connections") && e.contains("placeholder {i} has no value here") && e.contains("copies = N"), "{e}");
        let e = err("connections = [\"for i in 3..1: s{i} -> k\"]\n");
        assert!(e.contains("3..1 is not a range"), "{e}");
        let e = err("connections = [\"for i in 1..3 s{i} -> k\"]\n");
        assert!(e.contains("no ':' after the range"), "{e}");
        let e = err("connections = [\"for i in 1..3: s{j} -> k\"]\n");
        assert!(e.contains("placeholder {j} has no value here") && e.contains("for NAME in A..B"), "{e}");
        let e = err("connections = [\"for i in 1..x: s{i} -> k\"]\n");
        assert!(e.contains("'x' is not an integer bound"), "{e}");
        let e = err("connections = [\"for i in 0..1: s{i-1} -> k\"]\n");
        assert!(e.contains("is -1 for i = 0"), "{e}");
        let e = err("[components.\"s{i}\"]\ncopies = 2\nkind = \"cbr\"\nl = [\"for i in 1..2: x\"]\n");
        assert!(e.contains("already the copy index"), "{e}");
        let e = err("[components.\"s{i}\"]\ncopies = 2\nkind = \"cbr\"\n[components.s2]\nkind = \"cbr\"\n");
        assert!(e.contains("components.s2") && e.contains("used twice"), "{e}");
    }
}
