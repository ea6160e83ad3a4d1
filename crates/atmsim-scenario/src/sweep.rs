//! The `[sweep]` table of a scenario file, and the per-point seed.
//!
//! ```toml
//! [sweep]
//! replications = 5            # per point (default: [scenario] replications)
//! quick_replications = 2      # with --quick (default 2)
//! target = { component = "mux", probe = "q_loss_ratio", statistic = "value",
//!            rel_half_width = 0.1, max_replications = 50 }   # optional; batch = N
//! # or, for several statistics at once (not with target):
//! precision = 0.05            # relative 95% CI half-width every named statistic must meet
//! statistics = ["mux.q_loss_ratio.value", "sink/vc1.sink_delay.mean"]   # COMPONENT[/PART].PROBE.STATISTIC
//! max_replications = 50       # the cap per point (default 10 x replications)
//!
//! [sweep.grid]                # cartesian product of these axes, in file order
//! "src.rate" = ["20 Mb/s", "40 Mb/s"]
//! "mux.capacity" = { from = 8, to = 64, step = 8, unit = "cells" }
//!
//! [sweep.zip]                 # varied together: one more axis, the last
//! "src.peak" = ["20 Mb/s", "40 Mb/s"]
//! "src.mean" = ["10 Mb/s", "20 Mb/s"]
//!
//! [sweep.quick]               # overrides applied only with --quick
//! "scenario.duration" = "0.1 s"
//! ```
//!
//! It is read from the same toml_edit document as the rest of the file
//! ([`SweepSpec::load`]), so errors are [`ScenarioError`]s naming the file, the line of
//! the offending key and the key (`FILE:LINE: sweep.grid."mux.capacity": ...`), with
//! did-you-mean hints for misspelt keys. Every value and every point is checked with
//! [`Scenario::with_overrides`] before anything runs.
//!
//! Points are the cartesian product of the grid axes (file order) and, last, the zip
//! axis; the last axis varies fastest. A point is the map of its overrides `{key:
//! value text}`; values are strings as written, numbers as their decimal text (a
//! float as Python's `repr` writes it: `0.1`, `1e-05`, `1.0`), ranges computed in
//! decimal (`"0.3 KiB"`, never `0.30000000000000004`).
//!
//! **Seeds** ([`point_seed`], stable across versions): the canonical form of a point is
//! the JSON of its overrides, keys sorted, separators `,` and `:`, non-ASCII kept,
//! UTF-8 ([`canonical_point`]); `seed = FNV-1a-64("atmsim-sweep-v1|<scenario
//! seed>|<canonical point>") & 0x7FFF_FFFF_FFFF_FFFF`, with the kernel's
//! [`atmsim_kernel::rng::fnv1a64`].

use std::collections::BTreeMap;
use std::ops::Range;

use atmsim_models::suggest::did_you_mean;
use toml_edit::{Item, TableLike, Value};

use crate::error::{Location, ScenarioError};
use crate::load::{invalid, line_of, parse_doc, raw_from_doc, LineIndex, Scenario};

/// The domain string that starts the hashed text of every point seed.
pub const SEED_DOMAIN: &str = "atmsim-sweep-v1";
/// Point seeds are masked to 63 bits (a signed 64-bit SQLite integer).
pub const SEED_MASK: u64 = 0x7FFF_FFFF_FFFF_FFFF;
/// `quick_replications` when not given.
pub const DEFAULT_QUICK_REPLICATIONS: u64 = 2;
/// At most this many values in one range.
pub const MAX_RANGE_POINTS: u64 = 10_000;
/// At most this many replications per point (`replications`, `quick_replications`,
/// `max_replications`, a target's `batch`): the bound of `[scenario] replications`
/// too. Far beyond any useful sweep, and small enough that a typo (`1000000000000`)
/// is one line at load instead of a sweep that plans for hours.
pub const MAX_REPLICATIONS: u64 = 1_000_000;
/// The keys of `[sweep]`.
pub const SWEEP_KEYS: [&str; 9] =
    ["replications", "quick_replications", "target", "precision", "statistics", "max_replications", "grid", "zip", "quick"];
/// `max_replications` with `precision` when not given: this many times `replications`.
pub const DEFAULT_PRECISION_CAP_FACTOR: u64 = 10;
/// The keys of `[sweep] target`.
pub const TARGET_KEYS: [&str; 6] = ["component", "probe", "statistic", "rel_half_width", "max_replications", "batch"];
/// The keys of a range `{ from, to, step, unit }`.
pub const RANGE_KEYS: [&str; 4] = ["from", "to", "step", "unit"];

const RANGE_EXAMPLE: &str = "a range is { from = 8, to = 64, step = 8, unit = \"cells\" }";
const KEY_FORM: &str = "a sweep key is COMPONENT.PARAM or scenario.KEY, as taken by --set (e.g. \"mux.capacity\" or \"scenario.duration\")";

// --------------------------------------------------------------------------- seeds

/// The canonical text of a point: JSON of `{key: value}`, keys sorted (by code point),
/// separators `,` and `:` without spaces, non-ASCII characters kept (what Python's
/// `json.dumps(point, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`
/// writes). A key given twice keeps its last value.
pub fn canonical_point<K: AsRef<str>, V: AsRef<str>>(point: impl IntoIterator<Item = (K, V)>) -> String {
    let sorted: BTreeMap<String, String> = point.into_iter().map(|(k, v)| (k.as_ref().to_string(), v.as_ref().to_string())).collect();
    let mut s = String::from("{");
    for (i, (k, v)) in sorted.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        json_string(&mut s, k);
        s.push(':');
        json_string(&mut s, v);
    }
    s.push('}');
    s
}

fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The master seed of every replication of `point` (replication r is run number r):
/// `FNV-1a-64("atmsim-sweep-v1|<scenario seed>|<canonical point>") & SEED_MASK`.
pub fn point_seed<K: AsRef<str>, V: AsRef<str>>(scenario_seed: u64, point: impl IntoIterator<Item = (K, V)>) -> u64 {
    let text = format!("{SEED_DOMAIN}|{scenario_seed}|{}", canonical_point(point));
    atmsim_kernel::rng::fnv1a64(text.as_bytes()) & SEED_MASK
}

// --------------------------------------------------------------------------- spec

/// A swept value as written in the file (for result tables): a list's value as is; a
/// range's value is `"<number> <unit>"`, or the number (integer or float) without unit.
#[derive(Clone, Debug, PartialEq)]
pub enum Written {
    Str(String),
    Int(i128),
    Float(f64),
    Bool(bool),
}

/// `[sweep] target`: relative-precision stopping.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub component: String,
    pub probe: String,
    pub statistic: String,
    pub rel_half_width: f64,
    pub max_replications: u64,
    /// More replications per round (default: `replications`).
    pub batch: u64,
    /// The line of `target` in the file, for errors found later (an unknown statistic).
    pub line: Option<usize>,
}

/// A scenario file's sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSpec {
    /// The swept keys, in axis order (grid keys, then zip keys).
    pub keys: Vec<String>,
    /// Each point's overrides `(key, value text)`, in the order of `keys`. Without a
    /// `[sweep]` grid or zip there is one point, with no overrides.
    pub points: Vec<Vec<(String, String)>>,
    /// The same values as written in the file.
    pub written: Vec<Vec<(String, Written)>>,
    pub replications: u64,
    pub quick_replications: u64,
    /// `[sweep.quick]`: overrides applied only with --quick, in file order.
    pub quick: Vec<(String, String)>,
    /// `[sweep.quick]` lists: with --quick only the points whose value of each such
    /// swept key is one of its listed values run (in file order; empty: every point).
    pub quick_select: Vec<(String, Vec<String>)>,
    pub target: Option<Target>,
    /// `precision` with `statistics` and `max_replications`: one target per named
    /// statistic, all with the same half-width and cap (empty without `precision`).
    pub precision: Vec<Target>,
    /// Whether the file has a `[sweep]` table at all.
    pub has_table: bool,
    /// The line of `[sweep]` (or of its first sub-table), when it has one.
    pub line: Option<usize>,
}

impl SweepSpec {
    /// Reads a scenario file's text: the scenario, with the extra `overrides` (`--set`,
    /// applied to every point) already applied, and its sweep. One TOML parse serves
    /// both.
    pub fn load(text: &str, file: &str, overrides: &[(String, String)]) -> Result<(Scenario, SweepSpec), ScenarioError> {
        let doc = parse_doc(text, file)?;
        let lines = LineIndex::new(text);
        let mut base = Scenario::from_raw(raw_from_doc(&doc, &lines, file)?)?;
        if !overrides.is_empty() {
            base = base.with_overrides(&sorted(overrides.iter().cloned()))?;
        }
        let spec = Reader { file, lines: &lines, base: &base, overrides }.spec(doc.as_table())?;
        Ok((base, spec))
    }

    /// The replications per point, with or without --quick.
    pub fn replications_for(&self, quick: bool) -> u64 {
        if quick { self.quick_replications } else { self.replications }
    }

    /// The indices of the points that run, with or without --quick (`quick_select`).
    pub fn point_indices(&self, quick: bool) -> Vec<usize> {
        (0..self.points.len()).filter(|&i| !quick || selected(&self.points[i], &self.quick_select)).collect()
    }

    /// The master seed of point `index` of a scenario whose seed is `scenario_seed`.
    pub fn seed_of(&self, scenario_seed: u64, index: usize) -> u64 {
        point_seed(scenario_seed, self.points[index].iter().map(|(k, v)| (k, v)))
    }
}

/// Whether `point` has, for each key of `select`, one of its values.
fn selected(point: &[(String, String)], select: &[(String, Vec<String>)]) -> bool {
    select.iter().all(|(key, values)| point.iter().any(|(k, v)| k == key && values.contains(v)))
}

/// Overrides as `with_overrides` gets them from Python (a dict: one value per key, the
/// last one given; applied in key order), so the first error reported is the same.
fn sorted(pairs: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    pairs.into_iter().collect::<BTreeMap<_, _>>().into_iter().collect()
}

/// `"key"` when the key has a dot or a space (as written in TOML), else `key`.
fn q(key: &str) -> String {
    if key.contains('.') || key.contains(' ') { format!("\"{key}\"") } else { key.to_string() }
}

/// A string as Python's `repr` writes it (the form the native messages use: '8 cells').
fn quoted(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::new();
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A float as Python's `repr` writes it (shortest round-trip digits; positional when
/// the decimal exponent is in -4..16, else `1e-05`, `1e+16`): the text of a number
/// value, which is part of the point and so of its seed.
pub fn py_float_text(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x == 0.0 {
        return format!("{sign}0.0");
    }
    let sci = format!("{:e}", x.abs()); // shortest round-trip digits: "1.2345e-5"
    // `{:e}` always writes "<mantissa>e<exponent>"; fall back to it as written otherwise.
    let Some((mantissa, exp)) = sci.split_once('e') else { return sci };
    let Ok(exp) = exp.parse::<i32>() else { return sci };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let n = digits.len() as i32;
    let decpt = exp + 1; // value = 0.DIGITS × 10^decpt
    let body = if decpt <= -4 || decpt > 16 {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        format!("{first}{frac}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    } else if decpt <= 0 {
        format!("0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt >= n {
        format!("{digits}{}.0", "0".repeat((decpt - n) as usize))
    } else {
        format!("{}.{}", &digits[..decpt as usize], &digits[decpt as usize..])
    };
    format!("{sign}{body}")
}

/// The TOML type of a value, for messages.
fn type_name(item: &Item) -> &'static str {
    match item {
        Item::None => "nothing",
        Item::Table(_) => "a table",
        Item::ArrayOfTables(_) => "an array of tables",
        Item::Value(v) => value_type_name(v),
    }
}

fn value_type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date-time",
        Value::Array(_) => "an array",
        Value::InlineTable(_) => "an inline table",
    }
}

/// A value as shown in messages: strings quoted, numbers as their text, anything else
/// as written in the file.
fn shown_value(v: &Value) -> String {
    match v {
        Value::String(s) => quoted(s.value()),
        Value::Integer(i) => i.value().to_string(),
        Value::Float(f) => py_float_text(*f.value()),
        Value::Boolean(b) => b.value().to_string(),
        other => other.to_string().trim().to_string(),
    }
}

fn shown(item: &Item) -> String {
    match item {
        Item::Value(v) => shown_value(v),
        Item::Table(_) => "a table".into(),
        Item::ArrayOfTables(_) => "an array of tables".into(),
        Item::None => "nothing".into(),
    }
}

/// The text of a point value (what `with_overrides` gets): strings as is, numbers as
/// Python writes them, booleans `true`/`false`; `None` for anything else.
fn value_text(v: &Value) -> Option<(String, Written)> {
    Some(match v {
        Value::String(s) => (s.value().clone(), Written::Str(s.value().clone())),
        Value::Integer(i) => (i.value().to_string(), Written::Int(i128::from(*i.value()))),
        Value::Float(f) => (py_float_text(*f.value()), Written::Float(*f.value())),
        Value::Boolean(b) => (b.value().to_string(), Written::Bool(*b.value())),
        _ => return None,
    })
}

/// An exact decimal: `m / 10^scale`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Dec {
    m: i128,
    scale: u32,
}

impl Dec {
    /// From the decimal text of a number (`8`, `-0.25`, `1e-05`, `1.5e+16`).
    fn parse(text: &str) -> Option<Dec> {
        let (mant, exp) = match text.split_once(['e', 'E']) {
            Some((m, e)) => (m, e.parse::<i32>().ok()?),
            None => (text, 0),
        };
        let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
        let neg = int.starts_with('-');
        let digits = format!("{}{frac}", int.trim_start_matches(['-', '+']));
        let mut m: i128 = digits.parse().ok()?;
        if neg {
            m = -m;
        }
        let scale = frac.len() as i32 - exp;
        if m == 0 {
            return Some(Dec { m: 0, scale: 0 });
        }
        if scale >= 0 {
            Some(Dec { m, scale: scale as u32 })
        } else {
            Some(Dec { m: m.checked_mul(10i128.checked_pow((-scale) as u32)?)?, scale: 0 })
        }
    }

    /// The mantissa at a larger scale.
    fn at(self, scale: u32) -> Option<i128> {
        self.m.checked_mul(10i128.checked_pow(scale - self.scale)?)
    }

    /// Positional text without trailing zeros (`0.3`, `8`, `-1.5`; never `-0`).
    fn text(self) -> String {
        let neg = self.m < 0;
        let digits = self.m.unsigned_abs().to_string();
        let scale = self.scale as usize;
        let (int, frac) = if digits.len() > scale {
            (digits[..digits.len() - scale].to_string(), digits[digits.len() - scale..].to_string())
        } else {
            ("0".to_string(), format!("{}{digits}", "0".repeat(scale - digits.len())))
        };
        let frac = frac.trim_end_matches('0');
        let body = if frac.is_empty() { int } else { format!("{int}.{frac}") };
        if neg && body != "0" { format!("-{body}") } else { body }
    }
}

/// Why a range has no values.
#[derive(Debug, PartialEq)]
enum RangeIssue {
    StepNotPositive,
    Reversed,
    TooMany(u128),
    TooPrecise,
}

/// `from, from + step, ...` up to and including `to`, exactly: each value's text (the
/// number without trailing zeros, then ` unit` if there is one) and the value as
/// written (that text with a unit, else the number: an integer when it is one).
fn range_points(lo: Dec, hi: Dec, step: Dec, unit: &str) -> Result<Vec<(String, Written)>, RangeIssue> {
    if step.m <= 0 {
        return Err(RangeIssue::StepNotPositive);
    }
    let scale = lo.scale.max(hi.scale).max(step.scale);
    let (l, h, s) = (lo.at(scale).ok_or(RangeIssue::TooPrecise)?, hi.at(scale).ok_or(RangeIssue::TooPrecise)?, step.at(scale).ok_or(RangeIssue::TooPrecise)?);
    if l > h {
        return Err(RangeIssue::Reversed);
    }
    let count = (h.checked_sub(l).ok_or(RangeIssue::TooPrecise)? / s) as u128 + 1;
    if count > u128::from(MAX_RANGE_POINTS) {
        return Err(RangeIssue::TooMany(count));
    }
    Ok((0..count as i128)
        .map(|i| {
            // l + i·s <= h: no overflow.
            let v = Dec { m: l + i * s, scale }.text();
            if unit.is_empty() {
                // The text is our own decimal rendering, so it parses; NaN otherwise.
                let w = match v.parse::<i128>() {
                    Ok(i) if !v.contains('.') => Written::Int(i),
                    _ => Written::Float(v.parse().unwrap_or(f64::NAN)),
                };
                (v, w)
            } else {
                let t = format!("{v} {unit}").trim().to_string();
                (t.clone(), Written::Str(t))
            }
        })
        .collect())
}

/// One axis: its keys and, per position, the value texts and the values as written.
struct Axis {
    keys: Vec<String>,
    texts: Vec<Vec<String>>,
    written: Vec<Vec<Written>>,
}

struct Reader<'a> {
    file: &'a str,
    lines: &'a LineIndex,
    base: &'a Scenario,
    /// The extra overrides (`--set`) already applied to `base`: none may name a swept key.
    overrides: &'a [(String, String)],
}

impl Reader<'_> {
    fn line(&self, span: Option<Range<usize>>) -> Option<usize> {
        line_of(self.lines, span)
    }

    /// The line of `key` in `table` (of its header for a sub-table).
    fn key_line(&self, table: &dyn TableLike, key: &str) -> Option<usize> {
        self.line(table.key(key).and_then(|k| k.span()).or_else(|| table.get(key).and_then(|i| i.span())))
    }

    /// `FILE:LINE: WHERE: msg`, WHERE being `table` or `table.KEY`.
    fn err(&self, line: Option<usize>, table: &str, key: Option<&str>, msg: impl Into<String>) -> ScenarioError {
        let at = match key {
            Some(k) => format!("{table}.{}", q(k)),
            None => table.to_string(),
        };
        invalid(self.file, line, &at, msg)
    }

    /// The base scenario with these overrides, or the native error as `KEY: message`.
    fn check(&self, overrides: impl IntoIterator<Item = (String, String)>) -> Result<(), String> {
        self.checked(overrides).map(|_| ())
    }

    fn checked(&self, overrides: impl IntoIterator<Item = (String, String)>) -> Result<Scenario, String> {
        self.base.with_overrides(&sorted(overrides)).map_err(|e| native_message(&e))
    }

    fn spec(&self, root: &toml_edit::Table) -> Result<SweepSpec, ScenarioError> {
        let has_table = root.contains_key("sweep");
        let sweep_line = self.key_line(root, "sweep");
        let empty = toml_edit::Table::new();
        let sweep: &dyn TableLike = match root.get("sweep") {
            None => &empty,
            Some(item) => item.as_table_like().ok_or_else(|| self.err(sweep_line, "sweep", None, "must be a table ([sweep])"))?,
        };
        for (k, _) in sweep.iter() {
            if !SWEEP_KEYS.contains(&k) {
                let hint = did_you_mean(k, SWEEP_KEYS);
                return Err(self.err(self.key_line(sweep, k), "sweep", Some(k), format!("unknown key{hint}; valid: {}", SWEEP_KEYS.join(", "))));
            }
        }
        let count = |key: &str, default: u64| -> Result<u64, ScenarioError> {
            let Some(item) = sweep.get(key) else { return Ok(default) };
            match item.as_integer() {
                Some(n) if n >= 1 && n as u64 <= MAX_REPLICATIONS => Ok(n as u64),
                _ => Err(self.err(self.key_line(sweep, key), "sweep", Some(key), format!("{}: must be a whole number from 1 to {MAX_REPLICATIONS}", shown(item)))),
            }
        };
        let replications = count("replications", u64::from(self.base.replications))?;
        let quick_replications = count("quick_replications", DEFAULT_QUICK_REPLICATIONS)?;

        let mut tables: Vec<Option<&dyn TableLike>> = Vec::new();
        for name in ["grid", "zip", "quick"] {
            tables.push(match sweep.get(name) {
                None => None,
                Some(item) => Some(item.as_table_like().ok_or_else(|| {
                    self.err(self.key_line(sweep, name), "sweep", Some(name), format!("must be a table ([sweep.{name}]) of \"KEY\" = values"))
                })?),
            });
        }
        let (grid, zip, quick) = (tables[0], tables[1], tables[2]);
        if grid.is_some_and(|g| g.is_empty()) {
            return Err(self.err(self.key_line(sweep, "grid"), "sweep.grid", None, "empty grid: give at least one axis, e.g. \"mux.capacity\" = [\"8 cells\", \"16 cells\"]"));
        }
        if zip.is_some_and(|z| z.is_empty()) {
            return Err(self.err(self.key_line(sweep, "zip"), "sweep.zip", None, "empty zip table: give at least one key with a list of values"));
        }
        if let (Some(g), Some(z)) = (grid, zip) {
            if let Some((k, _)) = g.iter().find(|(k, _)| z.contains_key(k)) {
                return Err(self.err(self.key_line(z, k), "sweep.zip", Some(k), "is in both [sweep.grid] and [sweep.zip]; vary a key in one of them"));
            }
        }

        let mut axes: Vec<Axis> = Vec::new();
        for (key, item) in grid.iter().flat_map(|g| g.iter()) {
            let Some(g) = grid else { break };
            let line = self.key_line(g, key);
            let (texts, written) = self.values("sweep.grid", g, key, item)?;
            if !key.contains('.') {
                return Err(self.err(line, "sweep.grid", Some(key), KEY_FORM));
            }
            let mut seen: Vec<(String, &String)> = Vec::with_capacity(texts.len());
            for t in &texts {
                let sc = self.checked([(key.to_string(), t.clone())]).map_err(|m| self.err(line, "sweep.grid", Some(key), format!("value {}: {m}", quoted(t))))?;
                let sig = effective_value(&sc, key);
                if let Some((_, first)) = seen.iter().find(|(s, _)| *s == sig) {
                    return Err(self.err(line, "sweep.grid", Some(key), format!("values {} and {} are equal after unit conversion; each value of an axis must be distinct", quoted(first), quoted(t))));
                }
                seen.push((sig, t));
            }
            axes.push(Axis { keys: vec![key.to_string()], texts: texts.into_iter().map(|t| vec![t]).collect(), written: written.into_iter().map(|w| vec![w]).collect() });
        }
        if let Some(z) = zip.filter(|z| !z.is_empty()) {
            let mut cols: Vec<(String, Vec<String>, Vec<Written>)> = Vec::new();
            for (key, item) in z.iter() {
                let (texts, written) = self.values("sweep.zip", z, key, item)?;
                if !key.contains('.') {
                    return Err(self.err(self.key_line(z, key), "sweep.zip", Some(key), KEY_FORM));
                }
                cols.push((key.to_string(), texts, written));
            }
            let n0 = cols.first().map_or(0, |c| c.1.len());
            if let Some((bad, _, _)) = cols.iter().find(|c| c.1.len() != n0) {
                let desc: Vec<String> = cols.iter().map(|(k, t, _)| format!("{}: {}", q(k), t.len())).collect();
                return Err(self.err(self.key_line(z, bad), "sweep.zip", Some(bad), format!("zipped lists must have equal lengths ({})", desc.join(", "))));
            }
            // Zipped keys vary together, so each row is checked as a whole (a peak and a
            // mean that are valid only together must not be rejected one by one).
            let keys: Vec<String> = cols.iter().map(|c| c.0.clone()).collect();
            let rows: Vec<Vec<String>> = (0..n0).map(|i| cols.iter().map(|c| c.1[i].clone()).collect()).collect();
            let first = keys.first().map_or("", String::as_str);
            let mut seen: Vec<String> = Vec::with_capacity(rows.len());
            for (i, row) in rows.iter().enumerate() {
                let pairs: Vec<(String, String)> = keys.iter().cloned().zip(row.iter().cloned()).collect();
                let sc = self.checked(pairs.clone()).map_err(|m| {
                    let shown: Vec<String> = pairs.iter().map(|(k, v)| format!("{}: {}", quoted(k), quoted(v))).collect();
                    self.err(self.key_line(z, first), "sweep.zip", Some(first), format!("row {} {{{}}}: {m}", i + 1, shown.join(", ")))
                })?;
                let sig: String = keys.iter().map(|k| effective_value(&sc, k)).collect::<Vec<_>>().join("\u{1f}");
                if let Some(j) = seen.iter().position(|s| *s == sig) {
                    return Err(self.err(self.key_line(z, first), "sweep.zip", Some(first),
                        format!("rows {} and {} are equal after unit conversion; each row of a zip must be distinct", j + 1, i + 1)));
                }
                seen.push(sig);
            }
            let written = (0..n0).map(|i| cols.iter().map(|c| c.2[i].clone()).collect()).collect();
            axes.push(Axis { keys, texts: rows, written });
        }

        // Each point sets its swept keys, so a --set of one would be silently overridden
        // at every point (while changing every run key, so that all would recompute).
        for key in axes.iter().flat_map(|a| a.keys.iter()) {
            if self.overrides.iter().any(|(k, _)| k == key) {
                let (table, t) = match grid.filter(|g| g.contains_key(key)) {
                    Some(g) => ("sweep.grid", g),
                    None => ("sweep.zip", zip.unwrap_or(sweep)),
                };
                let at = match self.key_line(t, key) {
                    Some(l) => format!("{}:{l}", self.file),
                    None => self.file.to_string(),
                };
                return Err(invalid("--set", None, key, format!(
                    "the sweep varies this key ({at}: {table}.{}), so the value --set gives it would be ignored at every point; \
                     drop it from --set, or change the sweep's values of it", q(key))));
            }
        }

        let mut quick_overrides = Vec::new();
        let mut quick_select: Vec<(String, Vec<String>)> = Vec::new();
        for (key, item) in quick.iter().flat_map(|t| t.iter()) {
            let Some(qt) = quick else { break };
            let line = self.key_line(qt, key);
            if item.is_array() || item.is_table_like() {
                // A list (or range) selects values of a swept key for --quick.
                let Some((axis, column)) = axes.iter().find_map(|a| a.keys.iter().position(|k| k == key).map(|c| (a, c))) else {
                    let swept: Vec<String> = axes.iter().flat_map(|a| a.keys.iter().map(|k| q(k))).collect();
                    let valid = if swept.is_empty() { "this sweep has none".to_string() } else { swept.join(", ") };
                    return Err(self.err(line, "sweep.quick", Some(key), format!("a list selects values of a key of [sweep.grid] or [sweep.zip] for --quick, and this key is not swept (swept: {valid}); give one value to override it")));
                };
                let on_axis: Vec<&String> = axis.texts.iter().map(|row| &row[column]).collect();
                let (texts, _) = self.values("sweep.quick", qt, key, item)?;
                if let Some(t) = texts.iter().find(|t| !on_axis.contains(t)) {
                    let shown: Vec<String> = on_axis.iter().map(|v| quoted(v)).collect();
                    return Err(self.err(line, "sweep.quick", Some(key), format!("value {} is not one of the swept values ({})", quoted(t), shown.join(", "))));
                }
                quick_select.push((key.to_string(), texts));
                continue;
            }
            let text = item.as_value().and_then(value_text).map(|(t, _)| t).ok_or_else(|| {
                self.err(line, "sweep.quick", Some(key), format!("value {} is {}; it must be a string with a unit or a number", shown(item), type_name(item)))
            })?;
            if !key.contains('.') {
                return Err(self.err(line, "sweep.quick", Some(key), KEY_FORM));
            }
            if axes.iter().any(|a| a.keys.iter().any(|k| k == key)) {
                return Err(self.err(line, "sweep.quick", Some(key), "is swept: each point sets it, so one value here would change nothing; give a list of its swept values to run only those with --quick"));
            }
            self.check([(key.to_string(), text.clone())]).map_err(|m| self.err(line, "sweep.quick", Some(key), format!("value {}: {m}", quoted(&text))))?;
            quick_overrides.push((key.to_string(), text));
        }

        // The cartesian product, last axis fastest.
        let keys: Vec<String> = axes.iter().flat_map(|a| a.keys.iter().cloned()).collect();
        let total: usize = axes.iter().map(|a| a.texts.len()).product();
        let mut points = Vec::with_capacity(total);
        let mut written = Vec::with_capacity(total);
        for mut n in 0..total {
            let mut idx = vec![0; axes.len()];
            for (a, axis) in axes.iter().enumerate().rev() {
                idx[a] = n % axis.texts.len();
                n /= axis.texts.len();
            }
            let mut p = Vec::with_capacity(keys.len());
            let mut w = Vec::with_capacity(keys.len());
            for (axis, &i) in axes.iter().zip(&idx) {
                p.extend(axis.keys.iter().cloned().zip(axis.texts[i].iter().cloned()));
                w.extend(axis.keys.iter().cloned().zip(axis.written[i].iter().cloned()));
            }
            points.push(p);
            written.push(w);
        }
        if !quick_select.is_empty() && !points.iter().any(|p| selected(p, &quick_select)) {
            let line = quick.and_then(|_| self.key_line(sweep, "quick"));
            return Err(self.err(line, "sweep.quick", None, "its lists select no point together (zipped keys vary together: list values of the same rows)"));
        }
        // Combinations can be invalid even when every value is (e.g. warmup >= duration).
        for p in &points {
            self.check(p.iter().cloned()).map_err(|m| self.err(sweep_line, "sweep", None, format!("point {}: {m}", canonical_point(p.iter().map(|(k, v)| (k, v))))))?;
            if !quick_overrides.is_empty() && selected(p, &quick_select) {
                self.check(p.iter().cloned().chain(quick_overrides.iter().cloned()))
                    .map_err(|m| self.err(sweep_line, "sweep", None, format!("point {} with [sweep.quick]: {m}", canonical_point(p.iter().map(|(k, v)| (k, v))))))?;
            }
        }

        let target = match sweep.get("target") {
            None => None,
            Some(item) => Some(self.target(sweep, item, replications)?),
        };
        let precision = self.precision(sweep, replications)?;
        Ok(SweepSpec { keys, points, written, replications, quick_replications, quick: quick_overrides, quick_select, target, precision, has_table, line: sweep_line })
    }

    /// The values of one axis `key = item` of `table` (`[sweep.grid]` or `[sweep.zip]`).
    fn values(&self, table: &str, parent: &dyn TableLike, key: &str, item: &Item) -> Result<(Vec<String>, Vec<Written>), ScenarioError> {
        let line = self.key_line(parent, key);
        if let Some(range) = item.as_table_like() {
            return self.range(table, key, line, range);
        }
        let Some(list) = item.as_array() else {
            return Err(self.err(line, table, Some(key), format!("expected a list of values (e.g. [\"8 cells\", \"16 cells\"]) or a range {{ from = 8, to = 64, step = 8, unit = \"cells\" }}, got {}", type_name(item))));
        };
        if list.is_empty() {
            return Err(self.err(line, table, Some(key), "empty list: a sweep axis needs at least one value"));
        }
        let mut texts = Vec::with_capacity(list.len());
        let mut written = Vec::with_capacity(list.len());
        for v in list.iter() {
            let (t, w) = value_text(v).ok_or_else(|| {
                let vline = self.line(v.span()).or(line);
                self.err(vline, table, Some(key), format!("value {} is {}; values are strings with units (\"20 Mb/s\") or numbers", shown_value(v), value_type_name(v)))
            })?;
            texts.push(t);
            written.push(w);
        }
        if let Some(dup) = texts.iter().find(|t| texts.iter().filter(|u| u == t).count() > 1) {
            return Err(self.err(line, table, Some(key), format!("value {} appears twice; each value of an axis must be distinct", quoted(dup))));
        }
        Ok((texts, written))
    }

    /// A range `{ from, to, step, unit }`: `from, from + step, ...` up to and including
    /// `to`, in decimal.
    fn range(&self, table: &str, key: &str, line: Option<usize>, spec: &dyn TableLike) -> Result<(Vec<String>, Vec<Written>), ScenarioError> {
        let at = |k: &str| self.key_line(spec, k).or(line);
        if let Some((k, _)) = spec.iter().find(|(k, _)| !RANGE_KEYS.contains(k)) {
            let hint = did_you_mean(k, RANGE_KEYS);
            return Err(self.err(at(k), table, Some(key), format!("unknown range key '{k}'{hint}; {RANGE_EXAMPLE}")));
        }
        if let Some(k) = ["from", "to", "step"].into_iter().find(|k| !spec.contains_key(k)) {
            return Err(self.err(line, table, Some(key), format!("range lacks '{k}'; {RANGE_EXAMPLE}")));
        }
        let mut nums = Vec::with_capacity(3);
        for k in ["from", "to", "step"] {
            let Some(item) = spec.get(k) else {
                return Err(self.err(at(k), table, Some(key), format!("range lacks '{k}'; {RANGE_EXAMPLE}")));
            };
            let text = match item.as_value() {
                Some(Value::Integer(i)) => i.value().to_string(),
                Some(Value::Float(f)) if f.value().is_finite() => py_float_text(*f.value()),
                _ => return Err(self.err(at(k), table, Some(key), format!("range '{k}' = {} must be a finite number; put the unit in unit = \"...\"", shown(item)))),
            };
            let d = Dec::parse(&text).ok_or_else(|| {
                self.err(at(k), table, Some(key), format!("range '{k}' = {text} is too large for a range (at most 38 digits)"))
            })?;
            nums.push((text, d));
        }
        let unit = match spec.get("unit") {
            None => String::new(),
            Some(item) => item.as_str().map(str::to_string).ok_or_else(|| {
                self.err(at("unit"), table, Some(key), format!("range unit = {} must be a string such as \"cells\" or \"Mb/s\"", shown(item)))
            })?,
        };
        let err = |k: &str, msg: String| self.err(at(k), table, Some(key), msg);
        match range_points(nums[0].1, nums[1].1, nums[2].1, &unit) {
            Ok(values) => Ok(values.into_iter().unzip()),
            Err(RangeIssue::StepNotPositive) => Err(err("step", format!("range step = {} must be > 0", nums[2].0))),
            Err(RangeIssue::Reversed) => Err(err("from", format!("range from = {} is greater than to = {}; a range runs upwards from 'from' to 'to' (inclusive)", nums[0].0, nums[1].0))),
            Err(RangeIssue::TooMany(count)) => Err(self.err(line, table, Some(key), format!("range has {count} values (more than {MAX_RANGE_POINTS}); use a larger step"))),
            Err(RangeIssue::TooPrecise) => Err(self.err(line, table, Some(key), "from, to and step together need more than 38 significant digits; use fewer")),
        }
    }

    /// Whether `component` is one of the scenario's components (the message says which are).
    fn check_component(&self, component: &str) -> Result<(), String> {
        if self.base.components.iter().any(|c| c.name == component) {
            return Ok(());
        }
        let mut names: Vec<&str> = self.base.components.iter().map(|c| c.name.as_str()).collect();
        let hint = did_you_mean(component, names.iter().copied());
        names.sort_unstable();
        Err(format!("no component '{component}'{hint}; components: {}", names.join(", ")))
    }

    /// Whether the (existing) `component`'s kind has the probe `probe`.
    fn check_probe(&self, component: &str, probe: &str) -> Result<(), String> {
        let Some(c) = self.base.components.iter().find(|c| c.name == component) else { return self.check_component(component) };
        let probes: Vec<&str> = c.kind.probes().map(|p| p.name).collect();
        if probes.contains(&probe) {
            return Ok(());
        }
        let hint = did_you_mean(probe, probes.iter().copied());
        Err(format!("component '{component}' ({}) has no probe '{probe}'{hint}; probes: {}", c.kind.kind, probes.join(", ")))
    }

    /// `precision`, `statistics` and `max_replications` of `[sweep]`: one [`Target`] per
    /// named statistic (none without `precision`).
    fn precision(&self, sweep: &dyn TableLike, replications: u64) -> Result<Vec<Target>, ScenarioError> {
        let Some(p_item) = sweep.get("precision") else {
            for k in ["statistics", "max_replications"] {
                if sweep.contains_key(k) {
                    return Err(self.err(self.key_line(sweep, k), "sweep", Some(k), "is used only with precision = <relative half-width, e.g. 0.05>"));
                }
            }
            return Ok(Vec::new());
        };
        let line = self.key_line(sweep, "precision");
        if sweep.contains_key("target") {
            return Err(self.err(line, "sweep", Some("precision"), "give either target or precision (with statistics), not both"));
        }
        let rel_half_width = match p_item.as_value() {
            Some(Value::Integer(i)) => *i.value() as f64,
            Some(Value::Float(f)) => *f.value(),
            _ => f64::NAN,
        };
        if !(rel_half_width > 0.0 && rel_half_width.is_finite()) {
            return Err(self.err(line, "sweep", Some("precision"), format!("{} must be a number > 0: the relative 95% CI half-width (e.g. 0.05 for ±5%)", shown(p_item))));
        }
        let example = "statistics = [\"mux.q_loss_ratio.value\", ...] (COMPONENT.PROBE.STATISTIC)";
        let Some(s_item) = sweep.get("statistics") else {
            return Err(self.err(line, "sweep", Some("precision"), format!("needs the statistics it applies to: {example}")));
        };
        let s_line = self.key_line(sweep, "statistics");
        let serr = |m: String| self.err(s_line, "sweep", Some("statistics"), m);
        let list = s_item.as_array().ok_or_else(|| serr(format!("{} must be a list: {example}", shown(s_item))))?;
        if list.is_empty() {
            return Err(serr(format!("empty list; {example}")));
        }
        let max_replications = match sweep.get("max_replications") {
            None => (replications * DEFAULT_PRECISION_CAP_FACTOR).clamp(2, MAX_REPLICATIONS.max(replications)),
            Some(m) => match m.as_integer() {
                Some(n) if n >= 0 && n as u64 >= replications.max(2) && n as u64 <= MAX_REPLICATIONS => n as u64,
                _ => return Err(self.err(self.key_line(sweep, "max_replications"), "sweep", Some("max_replications"),
                    format!("{} must be a whole number >= replications ({replications}) and >= 2, at most {MAX_REPLICATIONS}", shown(m)))),
            },
        };
        let mut out: Vec<Target> = Vec::with_capacity(list.len());
        for v in list.iter() {
            let text = v.as_str().ok_or_else(|| serr(format!("{} must be a string COMPONENT.PROBE.STATISTIC, e.g. \"mux.q_loss_ratio.value\"", shown_value(v))))?;
            let parts: Vec<&str> = text.rsplitn(3, '.').collect();
            if parts.len() != 3 || parts.iter().any(|x| x.is_empty()) {
                return Err(serr(format!("'{text}' is not COMPONENT.PROBE.STATISTIC, e.g. \"mux.q_loss_ratio.value\"")));
            }
            let (component, probe, statistic) = (parts[2], parts[1], parts[0]);
            // a part's rows (sink/vc1, sw/p3) belong to the component before the '/'
            let base = component.split('/').next().unwrap_or(component);
            self.check_probe(base, probe).map_err(|m| serr(format!("'{text}': {m}")))?;
            if out.iter().any(|t| t.component == component && t.probe == probe && t.statistic == statistic) {
                return Err(serr(format!("'{text}' is named twice")));
            }
            out.push(Target { component: component.into(), probe: probe.into(), statistic: statistic.into(), rel_half_width,
                              max_replications, batch: replications, line: s_line });
        }
        Ok(out)
    }

    fn target(&self, sweep: &dyn TableLike, item: &Item, replications: u64) -> Result<Target, ScenarioError> {
        let line = self.key_line(sweep, "target");
        let err = |l: Option<usize>, msg: String| self.err(l.or(line), "sweep", Some("target"), msg);
        let t = item.as_table_like().ok_or_else(|| {
            err(line, "must be a table { component = ..., probe = ..., statistic = ..., rel_half_width = 0.1, max_replications = 50 }".into())
        })?;
        let at = |k: &str| self.key_line(t, k);
        for (k, _) in t.iter() {
            if !TARGET_KEYS.contains(&k) {
                let hint = did_you_mean(k, TARGET_KEYS);
                return Err(err(at(k), format!("unknown key '{k}'{hint}; valid: {}", TARGET_KEYS.join(", "))));
            }
        }
        if let Some(k) = TARGET_KEYS[..5].iter().find(|k| !t.contains_key(k)) {
            return Err(err(line, format!("lacks '{k}'; valid keys: {}", TARGET_KEYS.join(", "))));
        }
        let mut strs = Vec::with_capacity(3);
        for k in ["component", "probe", "statistic"] {
            let Some(v) = t.get(k) else {
                return Err(err(at(k), format!("lacks '{k}'; valid keys: {}", TARGET_KEYS.join(", "))));
            };
            strs.push(v.as_str().map(str::to_string).ok_or_else(|| err(at(k), format!("{k} = {} must be a string", shown(v))))?);
        }
        let (component, probe, statistic) = (strs[0].clone(), strs[1].clone(), strs[2].clone());
        self.check_component(&component).map_err(|m| err(at("component"), m))?;
        self.check_probe(&component, &probe).map_err(|m| err(at("probe"), m))?;
        let Some(rhw_item) = t.get("rel_half_width") else {
            return Err(err(line, format!("lacks 'rel_half_width'; valid keys: {}", TARGET_KEYS.join(", "))));
        };
        let rel_half_width = match rhw_item.as_value() {
            Some(Value::Integer(i)) => *i.value() as f64,
            Some(Value::Float(f)) => *f.value(),
            _ => f64::NAN,
        };
        if !(rel_half_width > 0.0 && rel_half_width.is_finite()) {
            return Err(err(at("rel_half_width"), format!("rel_half_width = {} must be a number > 0 (e.g. 0.1 for ±10%)", shown(rhw_item))));
        }
        let Some(mx_item) = t.get("max_replications") else {
            return Err(err(line, format!("lacks 'max_replications'; valid keys: {}", TARGET_KEYS.join(", "))));
        };
        let max_replications = match mx_item.as_integer() {
            Some(n) if n >= 0 && n as u64 >= replications.max(2) && n as u64 <= MAX_REPLICATIONS => n as u64,
            _ => {
                return Err(err(at("max_replications"), format!("max_replications = {} must be a whole number >= replications ({replications}) and >= 2, at most {MAX_REPLICATIONS}", shown(mx_item))));
            }
        };
        let batch = match t.get("batch") {
            None => replications,
            Some(b) => match b.as_integer() {
                Some(n) if n >= 1 && n as u64 <= MAX_REPLICATIONS => n as u64,
                _ => return Err(err(at("batch"), format!("batch = {} must be a whole number from 1 to {MAX_REPLICATIONS}", shown(b)))),
            },
        };
        Ok(Target { component, probe, statistic, rel_half_width, max_replications, batch, line })
    }
}

/// What `key` (`COMPONENT.PARAM`, `scenario.KEY`, ...) is in `sc` after parsing, in
/// base units (a size in bytes, a rate in b/s, a time in ps), so that two texts of one
/// value (`"8 cells"`, `"424 B"`; `"1 ms"`, `"1000 us"`) compare equal. For a key that is
/// not a component's parameter, the scenario's settings as a whole.
fn effective_value(sc: &Scenario, key: &str) -> String {
    use atmsim_kernel::units::Size;
    use atmsim_models::params::Value as PV;
    let (head, param) = key.split_once('.').unwrap_or((key, ""));
    if let Some(c) = sc.components.iter().find(|c| c.name == head) {
        return match c.params.get(param) {
            Some(PV::Size(Size::Cells(n))) => format!("size {:?} B", n * atmsim_models::params::CELL_OCTETS as f64),
            Some(PV::Size(Size::Bytes(b))) => format!("size {b:?} B"),
            Some(v) => format!("{v:?}"),
            None => String::new(),
        };
    }
    let series: Vec<&str> = sc.series.iter().map(|r| r.label.as_str()).collect();
    format!("{:?}", ((&sc.name, &sc.description, sc.duration, sc.warmup, sc.seed, sc.replications),
                     (sc.check_wire, sc.fingerprint_content, sc.fast_path, sc.deliver_ahead),
                     (&sc.keep, series, sc.interval, &sc.trace)))
}

/// A `with_overrides` error as `KEY: message` (without its `--set` or file prefix:
/// the sweep error around it names the file, line and sweep key).
fn native_message(e: &ScenarioError) -> String {
    let text = match e {
        ScenarioError::Invalid { at: Location { key, .. }, msg } | ScenarioError::Param { at: Location { key, .. }, msg } => {
            if key.is_empty() { msg.clone() } else { format!("{key}: {msg}") }
        }
        ScenarioError::Io { msg, .. } => msg.clone(),
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"connections = [
  "src -> mux",
  "mux -> sink",
]

[scenario]
name = "t"
duration = "5 ms"

[components.src]
kind = "poisson"
rate = "100 Mb/s"

[components.mux]
kind = "fifo"
phy = "OC-3c"
capacity = "64 cells"

[components.sink]
kind = "sink"
"#;

    fn load(sweep: &str) -> Result<SweepSpec, ScenarioError> {
        SweepSpec::load(&format!("{BASE}\n{sweep}"), "s.toml", &[]).map(|(_, s)| s)
    }

    /// The error's text, and a check that it names `s.toml`, the line holding `needle`
    /// and the key `key`.
    fn error_at(sweep: &str, needle: &str, key: &str) -> String {
        let text = format!("{BASE}\n{sweep}");
        let e = load(sweep).expect_err("a bad spec");
        let line = text.lines().position(|l| l.contains(needle)).expect("needle in the text") + 1;
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("s.toml:{line}: {key}: ")), "expected s.toml:{line}: {key}: ..., got {msg}");
        assert!(!msg.contains('\n'), "{msg}");
        msg
    }

    fn pts(spec: &SweepSpec) -> Vec<Vec<(&str, &str)>> {
        spec.points.iter().map(|p| p.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()).collect()
    }

    #[test]
    fn seeds_equal_the_python_implementation() {
        // Computed by python/atmsim/sweep.py's own FNV-1a copy (before it was removed):
        // every stored sweep depends on these numbers.
        let mux = [("mux.capacity", "8 cells"), ("src.rate", "100 Mb/s")];
        let desc = [("scenario.description", "café \"q\" \\ \n\t\u{1}\u{7f} ü€𝄞")];
        let mixed = [("b", "1"), ("a", "2"), ("A", "3"), ("é", "4")];
        let empty: [(&str, &str); 0] = [];
        let cases: [(u64, u64, u64, u64, u64); 6] = [
            // (scenario seed, {}, mux point, description point, mixed keys)
            (0, 4962121616592783089, 3358454804048614382, 2767524411029639025, 908837424485985263),
            (1, 4265759072307676596, 5997448379229580171, 4949888889662918214, 3331237599995083046),
            (7, 306435238371357702, 1205217360877831921, 8163200742274923664, 6987737298731036264),
            (42, 6302515776253497389, 7712398885234375906, 7802635252378698533, 538861882536310507),
            (9223372036854775807, 5081585901576864885, 2966732893084238922, 4740628076957424013, 4548965168851916755),
            (18446744073709551615, 6359753631233127916, 3694988005921609507, 6766966304874458494, 4487746300614220862),
        ];
        for (seed, e, m, d, x) in cases {
            assert_eq!(point_seed(seed, empty), e, "seed {seed}, {{}}");
            assert_eq!(point_seed(seed, mux), m, "seed {seed}, mux");
            assert_eq!(point_seed(seed, desc), d, "seed {seed}, description");
            assert_eq!(point_seed(seed, mixed), x, "seed {seed}, mixed");
        }
        // The key order of the point does not matter; the canonical text is documented.
        assert_eq!(point_seed(1, [("src.rate", "100 Mb/s"), ("mux.capacity", "8 cells")]), 5997448379229580171);
        assert_eq!(canonical_point(mux), r#"{"mux.capacity":"8 cells","src.rate":"100 Mb/s"}"#);
        assert_eq!(canonical_point(desc), "{\"scenario.description\":\"café \\\"q\\\" \\\\ \\n\\t\\u0001\u{7f} ü€𝄞\"}");
        assert_eq!(canonical_point(mixed), r#"{"A":"3","a":"2","b":"1","é":"4"}"#);
        assert_eq!(canonical_point(empty), "{}");
    }

    #[test]
    fn float_texts_are_pythons_repr() {
        // Literals from Python's repr(): a number's text is part of its point's seed.
        let cases = [
            (0.1_f64, "0.1"),
            (1e-05, "1e-05"),
            (2.5e-07, "2.5e-07"),
            (0.30000000000000004, "0.30000000000000004"),
            (1e-300, "1e-300"),
            (5e-324, "5e-324"),
            (0.0001, "0.0001"),
            (0.00012345678901234567, "0.00012345678901234567"),
            (1.0, "1.0"),
            (0.5, "0.5"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (9999999999999998.0, "9999999999999998.0"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-2.5, "-2.5"),
            (100.0, "100.0"),
            (1e22, "1e+22"),
            (1.5e-05, "1.5e-05"),
            (9007199254740992.0, "9007199254740992.0"),
            (1.0 / 3.0, "0.3333333333333333"),
            (-1e-07, "-1e-07"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ];
        for (x, want) in cases {
            assert_eq!(py_float_text(x), want, "{x:e}");
        }
    }

    #[test]
    fn ranges_are_decimal_as_before() {
        // Values from the Python implementation (Decimal arithmetic); numbers as TOML
        // gives them (a float's decimal text is Python's repr of it).
        let range = |from: f64, to: f64, step: f64, unit: &str| -> (Vec<String>, Vec<Written>) {
            let d = |x: f64| Dec::parse(&py_float_text(x)).unwrap();
            range_points(d(from), d(to), d(step), unit).unwrap().into_iter().unzip()
        };
        let (t, w) = range(0.1, 0.7, 0.1, "KiB");
        assert_eq!(t, ["0.1 KiB", "0.2 KiB", "0.3 KiB", "0.4 KiB", "0.5 KiB", "0.6 KiB", "0.7 KiB"]);
        assert_eq!(w[2], Written::Str("0.3 KiB".into()));
        let (t, w) = range(1e-5, 3e-5, 0.5e-5, "");
        assert_eq!(t, ["0.00001", "0.000015", "0.00002", "0.000025", "0.00003"]);
        assert_eq!(w, [1e-05, 1.5e-05, 2e-05, 2.5e-05, 3e-05].map(Written::Float));
        let (t, _) = range(0.0, 1.0, 0.3333, "");
        assert_eq!(t, ["0", "0.3333", "0.6666", "0.9999"]);
        let (t, w) = range(-1.5, 1.0, 0.5, "");
        assert_eq!(t, ["-1.5", "-1", "-0.5", "0", "0.5", "1"]);
        assert_eq!(w, [Written::Float(-1.5), Written::Int(-1), Written::Float(-0.5), Written::Int(0), Written::Float(0.5), Written::Int(1)]);
        let (t, _) = range(0.000001, 0.0000011, 0.00000005, "");
        assert_eq!(t, ["0.000001", "0.00000105", "0.0000011"]);
        let (t, w) = range(1e20, 1e20, 1.0, "");
        assert_eq!((t, w), (vec!["100000000000000000000".to_string()], vec![Written::Int(100_000_000_000_000_000_000)]));
        let (t, w) = range(8.0, 64.0, 8.0, "cells");
        assert_eq!(t, ["8 cells", "16 cells", "24 cells", "32 cells", "40 cells", "48 cells", "56 cells", "64 cells"]);
        assert_eq!(w[0], Written::Str("8 cells".into()));
        let ints = |a: i64, b: i64, s: i64| range_points(Dec::parse(&a.to_string()).unwrap(), Dec::parse(&b.to_string()).unwrap(), Dec::parse(&s.to_string()).unwrap(), "");
        assert_eq!(ints(-3, -1, 1).unwrap(), [("-3".to_string(), Written::Int(-3)), ("-2".into(), Written::Int(-2)), ("-1".into(), Written::Int(-1))]);
        assert_eq!(ints(5, 5, 100).unwrap(), [("5".to_string(), Written::Int(5))]);
        assert_eq!(ints(0, 10_000, 1), Err(RangeIssue::TooMany(10_001)));
        assert_eq!(ints(1, 0, 1), Err(RangeIssue::Reversed));
        assert_eq!(ints(1, 2, 0), Err(RangeIssue::StepNotPositive));
        let tiny = Dec::parse("1e-300").unwrap();
        assert_eq!(range_points(Dec::parse("1").unwrap(), Dec::parse("2").unwrap(), tiny, ""), Err(RangeIssue::TooPrecise));
    }

    #[test]
    fn grid_zip_quick_and_target() {
        let spec = load(
            r#"[sweep]
replications = 3
quick_replications = 1
target = { component = "mux", probe = "q_loss_ratio", statistic = "value", rel_half_width = 0.1, max_replications = 5 }
[sweep.grid]
"src.rate" = ["80 Mb/s", "100 Mb/s"]
"mux.capacity" = { from = 8, to = 24, step = 8, unit = "cells" }
[sweep.zip]
"src.start" = ["0 s", "1 ms"]
"scenario.warmup" = ["0 s", "1 ms"]
[sweep.quick]
"scenario.duration" = "2 ms"
"scenario.seed" = 5
"#,
        )
        .unwrap();
        assert_eq!(spec.keys, ["src.rate", "mux.capacity", "src.start", "scenario.warmup"]);
        assert_eq!(spec.points.len(), 12);
        let p = pts(&spec);
        assert_eq!(p[0], [("src.rate", "80 Mb/s"), ("mux.capacity", "8 cells"), ("src.start", "0 s"), ("scenario.warmup", "0 s")]);
        assert_eq!(p[1], [("src.rate", "80 Mb/s"), ("mux.capacity", "8 cells"), ("src.start", "1 ms"), ("scenario.warmup", "1 ms")]);
        assert_eq!(p[11], [("src.rate", "100 Mb/s"), ("mux.capacity", "24 cells"), ("src.start", "1 ms"), ("scenario.warmup", "1 ms")]);
        assert_eq!((spec.replications, spec.replications_for(true)), (3, 1));
        assert_eq!(spec.quick, [("scenario.duration".to_string(), "2 ms".to_string()), ("scenario.seed".into(), "5".into())]);
        let t = spec.target.clone().unwrap();
        assert_eq!((t.component.as_str(), t.probe.as_str(), t.rel_half_width, t.max_replications, t.batch, t.line), ("mux", "q_loss_ratio", 0.1, 5, 3, Some(25)));
        assert!(spec.has_table);
        assert_eq!(spec.seed_of(1, 0), point_seed(1, spec.points[0].clone()));
    }

    #[test]
    fn no_sweep_table_is_one_point_and_defaults_follow_the_scenario() {
        let spec = load("").unwrap();
        assert_eq!((spec.points.len(), spec.points[0].len(), spec.keys.len()), (1, 0, 0));
        assert_eq!((spec.replications, spec.quick_replications, spec.has_table), (1, 2, false));
        let text = BASE.replace("duration = \"5 ms\"", "duration = \"5 ms\"\nreplications = 4\nseed = 3");
        let (sc, spec) = SweepSpec::load(&text, "s.toml", &[("scenario.seed".into(), "9".into())]).unwrap();
        assert_eq!((spec.replications, sc.seed), (4, 9));
    }

    #[test]
    fn empty_tables_are_an_error_or_no_axis_never_a_panic() {
        for t in ["[sweep.zip]\n", "[sweep.grid]\n", "[sweep]\nzip = {}\ngrid = {}\n", "[sweep.quick]\n", "[sweep.target]\n"] {
            match load(t) {
                Ok(spec) => assert_eq!((spec.points.len(), spec.keys.len()), (1, 0), "{t:?}"),
                Err(e) => assert!(e.to_string().starts_with("s.toml:"), "{t:?}: {e}"),
            }
        }
    }

    #[test]
    fn sub_tables_dotted_keys_and_numbers() {
        let spec = load("[sweep]\ngrid.\"scenario.seed\" = [1, 2.5e-7, true]\n[sweep.grid.\"mux.capacity\"]\nfrom = 8\nto = 16\nstep = 8\nunit = \"cells\"\n");
        // 2.5e-07 and true are not seeds: the error quotes the value as Python wrote it.
        let msg = spec.unwrap_err().to_string();
        assert!(msg.contains("sweep.grid.\"scenario.seed\": value '2.5e-07': scenario.seed:"), "{msg}");
        let spec = load("[sweep]\ngrid.\"scenario.seed\" = [1, 2]\n[sweep.grid.\"mux.capacity\"]\nfrom = 8\nto = 16\nstep = 8\nunit = \"cells\"\n").unwrap();
        assert_eq!(spec.keys, ["scenario.seed", "mux.capacity"]);
        assert_eq!(spec.written[3], [("scenario.seed".to_string(), Written::Int(2)), ("mux.capacity".into(), Written::Str("16 cells".into()))]);
    }

    #[test]
    fn errors_name_the_line_and_key() {
        let m = error_at("[sweep]\nreplication = 3\n", "replication = 3", "sweep.replication");
        assert!(m.contains("unknown key (did you mean 'replications'?); valid: replications, quick_replications"), "{m}");
        let m = error_at("[sweep]\nreplications = 0\n", "replications = 0", "sweep.replications");
        assert!(m.ends_with("0: must be a whole number from 1 to 1000000"), "{m}");
        error_at("[sweep]\n\nquick_replications = true\n", "quick_replications", "sweep.quick_replications");
        error_at("[sweep]\ngrid = 3\n", "grid = 3", "sweep.grid");
        let m = error_at("[sweep.grid]\n", "[sweep.grid]", "sweep.grid");
        assert!(m.contains("empty grid"), "{m}");
        error_at("[sweep.zip]\n", "[sweep.zip]", "sweep.zip");
        let m = error_at("[sweep.grid]\n\"mux.capacity\" = []\n", "\"mux.capacity\" = []", "sweep.grid.\"mux.capacity\"");
        assert!(m.contains("empty list"), "{m}");
        let m = error_at("[sweep.grid]\n\"src.rate\" = [\"20 Mb/s\", \"3 ms\"]\n", "\"src.rate\"", "sweep.grid.\"src.rate\"");
        assert!(m.contains("value '3 ms': components.src.rate: '3 ms' is a time, but a rate is needed"), "{m}");
        let m = error_at("[sweep.grid]\n\"mux.capacty\" = [\"8 cells\"]\n", "capacty", "sweep.grid.\"mux.capacty\"");
        assert!(m.contains("did you mean 'capacity'"), "{m}");
        let m = error_at("[sweep.grid]\n\"src.rate\" = [\"80 Mb/s\"]\n[sweep.zip]\n\"src.rate\" = [\"90 Mb/s\"]\n", "[\"90", "sweep.zip.\"src.rate\"");
        assert!(m.contains("both"), "{m}");
        let m = error_at("[sweep.zip]\n\"src.rate\" = [\"80 Mb/s\", \"90 Mb/s\"]\n\"src.start\" = [\"0 s\"]\n", "\"src.start\"", "sweep.zip.\"src.start\"");
        assert!(m.ends_with("zipped lists must have equal lengths (\"src.rate\": 2, \"src.start\": 1)"), "{m}");
        let m = error_at("[sweep.zip]\n\"mux.capacity\" = [\"8 cells\", \"8 s\"]\n\"src.rate\" = [\"80 Mb/s\", \"90 Mb/s\"]\n", "\"mux.capacity\"", "sweep.zip.\"mux.capacity\"");
        assert!(m.contains("row 2 {'mux.capacity': '8 s', 'src.rate': '90 Mb/s'}: components.mux.capacity: '8 s' is a time"), "{m}");
        let m = error_at("[sweep.grid]\ncapacity = [\"8 cells\"]\n", "capacity = [", "sweep.grid.capacity");
        assert!(m.contains("COMPONENT.PARAM"), "{m}");
        let m = error_at("[sweep.grid]\n\"mux.capacity\" = [\"8 cells\", \"8 cells\"]\n", "\"mux.capacity\"", "sweep.grid.\"mux.capacity\"");
        assert!(m.contains("value '8 cells' appears twice"), "{m}");
        let m = error_at("[sweep.grid]\n\"scenario.seed\" = [1, \"1\"]\n", "\"scenario.seed\"", "sweep.grid.\"scenario.seed\"");
        assert!(m.contains("value '1' appears twice"), "{m}");
        let m = error_at("[sweep.grid]\n\"mux.capacity\" = [\n  \"8 cells\",\n  1979-05-27,\n]\n", "1979", "sweep.grid.\"mux.capacity\"");
        assert!(m.contains("value 1979-05-27 is a date-time"), "{m}");
        let m = error_at("[sweep.grid]\n\"mux.capacity\" = \"8 cells\"\n", "\"mux.capacity\"", "sweep.grid.\"mux.capacity\"");
        assert!(m.contains("got a string"), "{m}");
        let m = error_at("[sweep.quick]\n\"scenario.duration\" = \"5 cells\"\n", "\"scenario.duration\"", "sweep.quick.\"scenario.duration\"");
        assert!(m.contains("a time is needed"), "{m}");
        let m = error_at("[sweep.quick]\n\"scenario.duration\" = [\"1 ms\"]\n", "\"scenario.duration\"", "sweep.quick.\"scenario.duration\"");
        assert!(m.contains("this key is not swept (swept: this sweep has none)"), "{m}");
        let m = error_at("[sweep.grid]\n\"scenario.duration\" = [\"2 ms\", \"20 ms\"]\n\"scenario.warmup\" = [\"1 ms\", \"4 ms\"]\n", "[sweep.grid]", "sweep");
        assert!(m.contains("point {\"scenario.duration\":\"2 ms\",\"scenario.warmup\":\"4 ms\"}: scenario.warmup: warm-up must be shorter"), "{m}");
        let m = error_at("[sweep]\nreplications = 2\n[sweep.grid]\n\"scenario.warmup\" = [\"1 ms\", \"2 ms\"]\n[sweep.quick]\n\"scenario.duration\" = \"1.5 ms\"\n", "[sweep]", "sweep");
        assert!(m.contains("point {\"scenario.warmup\":\"2 ms\"} with [sweep.quick]: scenario.warmup"), "{m}");
    }

    /// `[sweep.quick]` lists pick, for --quick, the points whose swept value is listed;
    /// the points keep their indices and seeds, and the full sweep is unchanged.
    #[test]
    fn quick_lists_select_points_of_the_sweep() {
        let text = "[sweep.grid]\n\"mux.capacity\" = [\"8 cells\", \"16 cells\", \"32 cells\"]\n\"scenario.seed\" = [1, 2]\n\
                    [sweep.zip]\n\"src.rate\" = [\"80 Mb/s\", \"90 Mb/s\"]\n\"src.start\" = [\"0 s\", \"1 ms\"]\n\
                    [sweep.quick]\n\"mux.capacity\" = [\"32 cells\", \"8 cells\"]\n\"src.start\" = [\"1 ms\"]\n\"scenario.duration\" = \"2 ms\"\n";
        let spec = load(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec.points.len(), 12);
        assert_eq!(spec.point_indices(false), (0..12).collect::<Vec<_>>());
        // capacity (slowest), seed, then the zip row (fastest): capacity 8 or 32, row 2.
        assert_eq!(spec.point_indices(true), [1, 3, 9, 11]);
        for &i in &spec.point_indices(true) {
            let p = &spec.points[i];
            assert!(p.contains(&("src.start".to_string(), "1 ms".to_string())), "{p:?}");
            assert!(!p.contains(&("mux.capacity".to_string(), "16 cells".to_string())), "{p:?}");
        }
        assert_eq!(spec.quick_select, [("mux.capacity".to_string(), vec!["32 cells".to_string(), "8 cells".to_string()]),
                                       ("src.start".to_string(), vec!["1 ms".to_string()])]);
        assert_eq!(spec.quick, [("scenario.duration".to_string(), "2 ms".to_string())]);
        let plain = load(&text.replace("\"mux.capacity\" = [\"32 cells\", \"8 cells\"]\n\"src.start\" = [\"1 ms\"]\n", "")).unwrap();
        assert_eq!((plain.points.clone(), plain.written.clone()), (spec.points.clone(), spec.written.clone()));
        assert_eq!(plain.point_indices(true), (0..12).collect::<Vec<_>>());
        // A range selects too, written as the axis writes its values.
        let ranged = load("[sweep.grid]\n\"mux.capacity\" = { from = 8, to = 64, step = 8, unit = \"cells\" }\n[sweep.quick]\n\"mux.capacity\" = { from = 16, to = 64, step = 16, unit = \"cells\" }\n").unwrap();
        assert_eq!(ranged.point_indices(true), [1, 3, 5, 7]);
        // A point left out by the selection is not checked with the quick overrides.
        let spec = load("[sweep.grid]\n\"scenario.warmup\" = [\"1 ms\", \"2 ms\"]\n[sweep.quick]\n\"scenario.warmup\" = [\"1 ms\"]\n\"scenario.duration\" = \"1.5 ms\"\n").unwrap();
        assert_eq!(spec.point_indices(true), [0]);
    }

    #[test]
    fn quick_lists_and_values_are_checked_against_the_swept_keys() {
        let grid = "[sweep.grid]\n\"mux.capacity\" = [\"8 cells\", \"16 cells\"]\n";
        let key = "sweep.quick.\"mux.capacity\"";
        let m = error_at(&format!("{grid}[sweep.quick]\n\"mux.capacity\" = [\"8 cells\", \"24 cells\"]\n"), "\"mux.capacity\" = [\"8 cells\", \"24", key);
        assert!(m.ends_with("value '24 cells' is not one of the swept values ('8 cells', '16 cells')"), "{m}");
        let m = error_at(&format!("{grid}[sweep.quick]\n\"mux.capacity\" = \"8 cells\"\n"), "\"mux.capacity\" = \"8", key);
        assert!(m.contains("is swept: each point sets it"), "{m}");
        let m = error_at(&format!("{grid}[sweep.quick]\n\"mux.capacity\" = []\n"), "\"mux.capacity\" = []", key);
        assert!(m.contains("empty list"), "{m}");
        let zip = "[sweep.zip]\n\"src.rate\" = [\"80 Mb/s\", \"90 Mb/s\"]\n\"src.start\" = [\"0 s\", \"1 ms\"]\n";
        let m = error_at(&format!("{zip}[sweep.quick]\n\"src.rate\" = [\"80 Mb/s\"]\n\"src.start\" = [\"1 ms\"]\n"), "[sweep.quick]", "sweep.quick");
        assert!(m.contains("select no point together"), "{m}");
        let m = error_at(&format!("{grid}[sweep.quick]\n\"src.rate\" = [\"80 Mb/s\"]\n"), "\"src.rate\"", "sweep.quick.\"src.rate\"");
        assert!(m.contains("this key is not swept (swept: \"mux.capacity\"); give one value to override it"), "{m}");
    }

    /// A huge count is one line at load, not a sweep that plans for hours (issue 44).
    #[test]
    fn replication_counts_are_capped() {
        for key in ["replications", "quick_replications"] {
            let m = error_at(&format!("[sweep]\n{key} = 1000000000000\n"), key, &format!("sweep.{key}"));
            assert!(m.ends_with("1000000000000: must be a whole number from 1 to 1000000"), "{m}");
        }
        assert_eq!(load("[sweep]\nreplications = 1000000\n").unwrap().replications, MAX_REPLICATIONS);
        let t = "component = \"mux\", probe = \"q_loss_ratio\", statistic = \"value\", rel_half_width = 0.1";
        let m = error_at(&format!("[sweep]\ntarget = {{ {t}, max_replications = 1000001 }}\n"), "target", "sweep.target");
        assert!(m.contains("max_replications = 1000001 must be a whole number >= replications (1) and >= 2, at most 1000000"), "{m}");
        let m = error_at(&format!("[sweep]\ntarget = {{ {t}, max_replications = 5, batch = 10000000 }}\n"), "target", "sweep.target");
        assert!(m.contains("batch = 10000000 must be a whole number from 1 to 1000000"), "{m}");
        let p = "precision = 0.1\nstatistics = [\"mux.q_loss_ratio.value\"]\n";
        let m = error_at(&format!("[sweep]\n{p}max_replications = 99999999999\n"), "max_replications", "sweep.max_replications");
        assert!(m.contains("at most 1000000"), "{m}");
        // The default cap (10 x replications) stays within the bound.
        assert_eq!(load(&format!("[sweep]\nreplications = 500000\n{p}")).unwrap().precision[0].max_replications, MAX_REPLICATIONS);
    }

    /// Two texts of one value make two points that run the same thing (issue 44).
    #[test]
    fn values_equal_after_unit_conversion_are_refused() {
        let key = "sweep.grid.\"mux.capacity\"";
        let m = error_at("[sweep.grid]\n\"mux.capacity\" = [\"8 cells\", \"16 cells\", \"424 B\"]\n", "\"mux.capacity\"", key);
        assert!(m.ends_with("values '8 cells' and '424 B' are equal after unit conversion; each value of an axis must be distinct"), "{m}");
        let m = error_at("[sweep.grid]\n\"src.rate\" = [\"1 Mb/s\", \"1000 kb/s\"]\n", "\"src.rate\"", "sweep.grid.\"src.rate\"");
        assert!(m.contains("values '1 Mb/s' and '1000 kb/s' are equal after unit conversion"), "{m}");
        let m = error_at("[sweep.grid]\n\"scenario.duration\" = [\"1 ms\", \"1000 us\"]\n", "\"scenario.duration\"", "sweep.grid.\"scenario.duration\"");
        assert!(m.contains("values '1 ms' and '1000 us' are equal"), "{m}");
        let m = error_at("[sweep.zip]\n\"mux.capacity\" = [\"8 cells\", \"424 B\"]\n\"src.rate\" = [\"1 Mb/s\", \"1000 kb/s\"]\n", "\"mux.capacity\"", "sweep.zip.\"mux.capacity\"");
        assert!(m.ends_with("rows 1 and 2 are equal after unit conversion; each row of a zip must be distinct"), "{m}");
        // Different values in different units are fine; so are zip rows equal in one key only.
        assert_eq!(load("[sweep.grid]\n\"mux.capacity\" = [\"8 cells\", \"425 B\"]\n").unwrap().points.len(), 2);
        assert_eq!(load("[sweep.zip]\n\"mux.capacity\" = [\"8 cells\", \"424 B\"]\n\"src.rate\" = [\"1 Mb/s\", \"2 Mb/s\"]\n").unwrap().points.len(), 2);
    }

    #[test]
    fn range_errors() {
        let key = "sweep.grid.\"mux.capacity\"";
        let m = error_at("[sweep.grid]\n\"mux.capacity\" = { from = 8, to = 9, stp = 1 }\n", "stp", key);
        assert!(m.contains("unknown range key 'stp' (did you mean 'step'?)"), "{m}");
        let m = error_at("[sweep.grid]\n\"mux.capacity\" = { from = 8, step = 1 }\n", "from = 8", key);
        assert!(m.contains("range lacks 'to'"), "{m}");
        let m = error_at("[sweep.grid]\n\"mux.capacity\" = { from = 8, to = 64, step = 0, unit = \"cells\" }\n", "step = 0", key);
        assert!(m.ends_with("range step = 0 must be > 0"), "{m}");
        let m = error_at("[sweep.grid]\n\"mux.capacity\" = { from = 8.5, to = 1e-5, step = 1 }\n", "from = 8.5", key);
        assert!(m.contains("range from = 8.5 is greater than to = 1e-05"), "{m}");
        let m = error_at("[sweep.grid]\n\"mux.capacity\" = { from = \"8 cells\", to = 9, step = 1 }\n", "from", key);
        assert!(m.contains("range 'from' = '8 cells' must be a finite number"), "{m}");
        error_at("[sweep.grid]\n\"mux.capacity\" = { from = 8, to = nan, step = 1 }\n", "nan", key);
        error_at("[sweep.grid]\n\"mux.capacity\" = { from = 8, to = 9, step = true }\n", "true", key);
        error_at("[sweep.grid]\n\"mux.capacity\" = { from = 8, to = 9, step = 1, unit = 3 }\n", "unit", key);
        let m = error_at("[sweep.grid]\n\"scenario.seed\" = { from = 0, to = 10000, step = 1 }\n", "from = 0", "sweep.grid.\"scenario.seed\"");
        assert!(m.contains("range has 10001 values (more than 10000)"), "{m}");
        // In a sub-table the line is the offending key's.
        let m = error_at("[sweep.grid.\"mux.capacity\"]\nfrom = 8\nto = 16\n\nstep = 0\nunit = \"cells\"\n", "step = 0", key);
        assert!(m.ends_with("range step = 0 must be > 0"), "{m}");
        assert_eq!(load("[sweep.grid]\n\"scenario.seed\" = { from = 1, to = 10000, step = 1 }\n").unwrap().points.len(), 10_000);
    }

    #[test]
    fn target_errors() {
        let t = "component = \"mux\", probe = \"q_loss_ratio\", statistic = \"value\"";
        let m = error_at("[sweep]\ntarget = 3\n", "target = 3", "sweep.target");
        assert!(m.contains("must be a table"), "{m}");
        let m = error_at(&format!("[sweep]\ntarget = {{ {t}, rel_half_width = 0.1, max_replications = 5, bach = 2 }}\n"), "target", "sweep.target");
        assert!(m.contains("unknown key 'bach' (did you mean 'batch'?)"), "{m}");
        let m = error_at(&format!("[sweep]\ntarget = {{ {t}, rel_half_width = 0.1 }}\n"), "target", "sweep.target");
        assert!(m.contains("lacks 'max_replications'"), "{m}");
        let m = error_at("[sweep]\ntarget = { component = \"mux\", probe = \"q_loss_rato\", statistic = \"value\", rel_half_width = 0.1, max_replications = 5 }\n", "target", "sweep.target");
        assert!(m.contains("has no probe 'q_loss_rato' (did you mean 'q_loss_ratio'?)"), "{m}");
        let m = error_at("[sweep]\ntarget = { component = \"mxu\", probe = \"q\", statistic = \"value\", rel_half_width = 0.1, max_replications = 5 }\n", "target", "sweep.target");
        assert!(m.contains("no component 'mxu' (did you mean 'mux'?); components: mux, sink, src"), "{m}");
        let m = error_at(&format!("[sweep]\ntarget = {{ {t}, rel_half_width = 0, max_replications = 5 }}\n"), "target", "sweep.target");
        assert!(m.contains("rel_half_width = 0 must be a number > 0"), "{m}");
        let m = error_at(&format!("[sweep]\nreplications = 6\ntarget = {{ {t}, rel_half_width = 0.1, max_replications = 5 }}\n"), "target", "sweep.target");
        assert!(m.contains("max_replications = 5 must be a whole number >= replications (6) and >= 2"), "{m}");
        let m = error_at(&format!("[sweep]\ntarget = {{ {t}, rel_half_width = 0.1, max_replications = 5, batch = 0 }}\n"), "target", "sweep.target");
        assert!(m.contains("batch = 0 must be a whole number from 1 to 1000000"), "{m}");
        // A [sweep.target] table: the line of the offending key.
        let m = error_at("[sweep.target]\ncomponent = \"mux\"\nprobe = \"q_loss_ratio\"\nstatistic = \"value\"\nrel_half_width = -1\nmax_replications = 5\n", "rel_half_width = -1", "sweep.target");
        assert!(m.contains("rel_half_width = -1 must be a number > 0"), "{m}");
    }

    #[test]
    fn precision_names_statistics_and_a_cap() {
        let spec = load("[sweep]\nreplications = 3\nprecision = 0.05\nstatistics = [\"mux.q_loss_ratio.value\", \"sink/vc1.sink_delay.mean\"]\n").unwrap();
        let names: Vec<String> = spec.precision.iter().map(|t| format!("{}.{}.{}", t.component, t.probe, t.statistic)).collect();
        assert_eq!(names, ["mux.q_loss_ratio.value", "sink/vc1.sink_delay.mean"]);
        assert!(spec.precision.iter().all(|t| t.rel_half_width == 0.05 && t.max_replications == 30 && t.batch == 3));
        let spec = load("[sweep]\nprecision = 0.1\nstatistics = [\"mux.q_loss_ratio.value\"]\nmax_replications = 7\n").unwrap();
        assert_eq!(spec.precision[0].max_replications, 7);
        assert!(load("[sweep]\nreplications = 2\n").unwrap().precision.is_empty());
    }

    #[test]
    fn precision_errors() {
        let m = error_at("[sweep]\nprecision = 0\nstatistics = [\"mux.q_loss_ratio.value\"]\n", "precision", "sweep.precision");
        assert!(m.contains("0 must be a number > 0"), "{m}");
        let m = error_at("[sweep]\nprecision = 0.05\n", "precision", "sweep.precision");
        assert!(m.contains("needs the statistics"), "{m}");
        let m = error_at("[sweep]\nprecision = 0.05\nstatistics = [\"mux.q_loss_rato.value\"]\n", "statistics", "sweep.statistics");
        assert!(m.contains("has no probe 'q_loss_rato' (did you mean 'q_loss_ratio'?)"), "{m}");
        let m = error_at("[sweep]\nprecision = 0.05\nstatistics = [\"mxu.q.value\"]\n", "statistics", "sweep.statistics");
        assert!(m.contains("no component 'mxu' (did you mean 'mux'?)"), "{m}");
        let m = error_at("[sweep]\nprecision = 0.05\nstatistics = [\"q_loss_ratio\"]\n", "statistics", "sweep.statistics");
        assert!(m.contains("is not COMPONENT.PROBE.STATISTIC"), "{m}");
        let m = error_at("[sweep]\nprecision = 0.05\nstatistics = []\n", "statistics", "sweep.statistics");
        assert!(m.contains("empty list"), "{m}");
        let m = error_at("[sweep]\nreplications = 6\nprecision = 0.05\nstatistics = [\"mux.q_loss_ratio.value\"]\nmax_replications = 5\n", "max_replications", "sweep.max_replications");
        assert!(m.contains("must be a whole number >= replications (6)"), "{m}");
        let m = error_at("[sweep]\nmax_replications = 5\n", "max_replications", "sweep.max_replications");
        assert!(m.contains("only with precision"), "{m}");
        let t = "target = { component = \"mux\", probe = \"q_loss_ratio\", statistic = \"value\", rel_half_width = 0.1, max_replications = 5 }";
        let m = error_at(&format!("[sweep]\n{t}\nprecision = 0.05\nstatistics = [\"mux.q_loss_ratio.value\"]\n"), "precision", "sweep.precision");
        assert!(m.contains("not both"), "{m}");
    }

    /// `--set` of a swept key is refused, naming the key and where the sweep varies it
    /// (issue 44); `--set` of any other key applies to every point.
    #[test]
    fn overrides_of_swept_keys_are_refused() {
        let text = format!("{BASE}\n[sweep.grid]\n\"mux.capacity\" = [\"8 cells\", \"16 cells\"]\n[sweep.zip]\n\"src.rate\" = [\"1 Mb/s\", \"2 Mb/s\"]\n");
        let line = |needle: &str| text.lines().position(|l| l.starts_with(needle)).unwrap() + 1;
        let set = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        let e = SweepSpec::load(&text, "s.toml", &set("mux.capacity", "32 cells")).unwrap_err().to_string();
        assert_eq!(e, format!("--set: mux.capacity: the sweep varies this key (s.toml:{}: sweep.grid.\"mux.capacity\"), so the value --set gives it would be ignored at every point; drop it from --set, or change the sweep's values of it", line("\"mux.capacity\"")));
        let e = SweepSpec::load(&text, "s.toml", &set("src.rate", "3 Mb/s")).unwrap_err().to_string();
        assert!(e.starts_with(&format!("--set: src.rate: the sweep varies this key (s.toml:{}: sweep.zip.\"src.rate\")", line("\"src.rate\""))), "{e}");
        let (sc, spec) = SweepSpec::load(&text, "s.toml", &set("src.vc", "3")).unwrap();
        assert_eq!((spec.points.len(), sc.components.iter().any(|c| c.name == "src")), (4, true));
    }

    #[test]
    fn overrides_errors_keep_their_form() {
        let e = SweepSpec::load(BASE, "s.toml", &[("src.rat".into(), "1".into())]).unwrap_err().to_string();
        assert!(e.starts_with("--set: components.src.rat: unknown parameter") && e.contains("did you mean 'rate'"), "{e}");
    }
}
