//! From TOML text to a validated [`Scenario`].
//!
//! Parsing keeps byte spans (toml_edit), so every error can name the line. The file's
//! shape:
//!
//! ```toml
//! connections = ["src.out -> mux.in", "mux -> sink"]   # before any table
//! [scenario]            # name, description, duration, warmup, seed, replications
//! [components.NAME]     # kind = "...", then that kind's parameters
//! [probes]              # keep = [patterns], series = ["COMP[/SUB].NAME"], interval
//! [trace]               # cells = true, flows, vcs, at, from, to, limit (crate::trace)
//! ```
//!
//! N components or list elements alike are written once (`copies = N`, `"for i in
//! A..B: …"`) and expanded right after parsing: [`crate::expand`].

use std::collections::{BTreeMap, BTreeSet};

use atmsim_kernel::{SimDuration, SimTime};
use atmsim_models::params::{parse_value, ParamType, Params, Raw, Value};
use atmsim_models::suggest::did_you_mean;
use atmsim_models::series::SeriesDecl;
use atmsim_models::{kind, KindSpec, Ports, KINDS};
use wildmatch::WildMatch;
use toml_edit::{ImDocument, Item, Table};

use crate::error::{Location, ScenarioError};

/// A value as written, with its line.
#[derive(Clone, Debug, PartialEq)]
pub struct RawEntry {
    pub key: String,
    pub raw: Raw,
    pub line: Option<usize>,
}

/// One `[components.NAME]` table as written.
#[derive(Clone, Debug, PartialEq)]
pub struct RawComponent {
    pub name: String,
    pub line: Option<usize>,
    pub entries: Vec<RawEntry>,
}

/// A whole file as written (kept so that overrides can be applied and re-validated).
#[derive(Clone, Debug, PartialEq)]
pub struct RawScenario {
    pub file: String,
    pub scenario: Vec<RawEntry>,
    pub components: Vec<RawComponent>,
    pub connections: Vec<(String, Option<usize>)>,
    /// The `[probes]` table.
    pub probes: Vec<RawEntry>,
    /// The `[trace]` table.
    pub trace: Vec<RawEntry>,
    /// The directory of the scenario file (`.` for text without one): relative file
    /// names in parameters are resolved against it.
    pub dir: std::path::PathBuf,
}

/// One requested time series, resolved to a component and the index it answers to.
#[derive(Clone, Debug)]
pub struct SeriesReq {
    /// As written: `COMPONENT[/SUB].NAME`.
    pub label: String,
    /// `COMPONENT[/SUB]`, the component column of the series rows.
    pub path: String,
    pub component: usize,
    pub index: u64,
    pub decl: SeriesDecl,
}

/// A validated component.
#[derive(Clone, Debug)]
pub struct ComponentDecl {
    pub name: String,
    pub kind: &'static KindSpec,
    pub params: Params,
    /// Parameter values as written or defaulted, for display.
    pub shown: BTreeMap<&'static str, String>,
    /// Flow number for sources.
    pub flow: Option<u32>,
    /// This instance's ports.
    pub ports: Ports,
}

/// One wire: output port `out` of component `from` to input port `inp` of `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wire {
    pub from: usize,
    pub out: u16,
    pub to: usize,
    pub inp: u16,
}

/// A validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub raw: RawScenario,
    pub name: String,
    pub description: String,
    pub duration: SimDuration,
    pub warmup: SimDuration,
    pub seed: u64,
    pub replications: u32,
    /// The byte-exact checking mode (`[scenario] check_wire`, `atmsim run --check-wire`).
    pub check_wire: bool,
    /// The fingerprint covers what each delivered message carries (`[scenario]
    /// fingerprint_content`, `atmsim run --fingerprint-content`; the golden tests).
    pub fingerprint_content: bool,
    /// Timed deliveries to passive components without an event each, and FIFOs that
    /// compute departures on arrival (`[scenario] fast_path`, on by default; off gives
    /// the event-per-departure path).
    pub fast_path: bool,
    /// FIFOs and links compute departures on arrival whatever they feed, not only when
    /// it is a passive component (`[scenario] fast_path = true`, the default;
    /// `fast_path = "sinks"` turns this part off, so that every statistic equals the
    /// event-per-departure path's; see docs/architecture.md, the ordering rules).
    pub deliver_ahead: bool,
    pub components: Vec<ComponentDecl>,
    pub wires: Vec<Wire>,
    /// `[probes] keep`: glob patterns on `COMPONENT.PROBE`; empty keeps every row.
    pub keep: Vec<String>,
    /// `[probes] series`, sampled every `interval`.
    pub series: Vec<SeriesReq>,
    pub interval: SimDuration,
    /// `[trace]`: a cell-by-cell trace of each run (None: none).
    pub trace: Option<crate::trace::TraceSpec>,
    /// What loading found suspicious but legal, one line each (a buffer offered more
    /// than its line rate: [`overloads`]).
    pub warnings: Vec<String>,
}

/// Where each line of the text starts, to turn byte offsets into line numbers in
/// O(log n) (counting newlines from the top for every key made loading a 10,000-VC
/// scenario quadratic: 23 s).
pub(crate) struct LineIndex(Vec<usize>);

impl LineIndex {
    pub(crate) fn new(text: &str) -> LineIndex {
        LineIndex(std::iter::once(0).chain(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1)).collect())
    }
}

pub(crate) fn line_of(lines: &LineIndex, span: Option<std::ops::Range<usize>>) -> Option<usize> {
    span.map(|s| lines.0.partition_point(|&start| start <= s.start))
}

pub(crate) fn invalid(file: &str, line: Option<usize>, key: &str, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::Invalid { at: Location { file: file.into(), line, key: key.into() }, msg: msg.into() }
}

fn param_err(file: &str, line: Option<usize>, key: &str, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::Param { at: Location { file: file.into(), line, key: key.into() }, msg: msg.into() }
}

fn raw_of(item: &Item) -> Option<Raw> {
    raw_of_value(item.as_value()?)
}

fn raw_of_value(v: &toml_edit::Value) -> Option<Raw> {
    Some(if let Some(a) = v.as_array() {
        Raw::List(a.iter().map(raw_of_value).collect::<Option<Vec<_>>>()?)
    } else if let Some(s) = v.as_str() {
        Raw::Str(s.to_string())
    } else if let Some(i) = v.as_integer() {
        Raw::Int(i)
    } else if let Some(x) = v.as_float() {
        Raw::Float(x)
    } else if let Some(b) = v.as_bool() {
        Raw::Bool(b)
    } else {
        return None;
    })
}

fn entries(lines: &LineIndex, file: &str, table: &Table, prefix: &str) -> Result<Vec<RawEntry>, ScenarioError> {
    let mut out = Vec::new();
    for (k, item) in table.iter() {
        let line = line_of(lines, table.key(k).and_then(|key| key.span()).or_else(|| item.span()));
        let raw = raw_of(item).ok_or_else(|| {
            invalid(file, line, &format!("{prefix}{k}"), "expected a string, number, boolean or array of strings (tables are not parameters)")
        })?;
        out.push(RawEntry { key: k.to_string(), raw, line });
    }
    Ok(out)
}

/// Parses TOML text into the raw structure; syntax and shape errors only.
pub fn parse_raw(text: &str, file: &str) -> Result<RawScenario, ScenarioError> {
    let doc = parse_doc(text, file)?;
    raw_from_doc(&doc, &LineIndex::new(text), file)
}

/// The TOML document with its spans (one parse, shared by the scenario and the
/// `[sweep]` reader, [`crate::sweep`]).
pub(crate) fn parse_doc<'t>(text: &'t str, file: &str) -> Result<ImDocument<&'t str>, ScenarioError> {
    ImDocument::parse(text).map_err(|e| {
        let msg = e.message().trim().replace('\n', " ");
        invalid(file, line_of(&LineIndex::new(text), e.span()), "", format!("TOML syntax: {msg}"))
    })
}

/// The raw scenario of a parsed document (`lines` indexes the document's text).
pub(crate) fn raw_from_doc(doc: &ImDocument<&str>, lines: &LineIndex, file: &str) -> Result<RawScenario, ScenarioError> {
    let root = doc.as_table();
    let dir = std::path::Path::new(file).parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new(".")).to_path_buf();
    let mut raw = RawScenario { file: file.into(), scenario: vec![], components: vec![], connections: vec![], probes: vec![], trace: vec![], dir };
    let top = ["connections", "scenario", "components", "probes", "trace", "sweep"];
    for (k, item) in root.iter() {
        let line = line_of(lines, root.key(k).and_then(|key| key.span()).or_else(|| item.span()));
        match k {
            "scenario" => {
                let t = item.as_table().ok_or_else(|| invalid(file, line, "scenario", "must be a table: [scenario]"))?;
                raw.scenario = entries(lines, file, t, "scenario.")?;
            }
            "probes" => {
                let t = item.as_table().ok_or_else(|| invalid(file, line, "probes", "must be a table: [probes]"))?;
                raw.probes = entries(lines, file, t, "probes.")?;
            }
            "trace" => {
                let t = item.as_table().ok_or_else(|| invalid(file, line, "trace", "must be a table: [trace]"))?;
                raw.trace = entries(lines, file, t, "trace.")?;
            }
            "components" => {
                let t = item.as_table().ok_or_else(|| invalid(file, line, "components", "must be tables: [components.NAME]"))?;
                for (name, c) in t.iter() {
                    let cline = line_of(lines, t.key(name).and_then(|key| key.span()).or_else(|| c.span()));
                    let ct = c.as_table().ok_or_else(|| {
                        invalid(file, cline, &format!("components.{name}"), "must be a table: [components.NAME] with kind = \"...\"")
                    })?;
                    let cline = line_of(lines, ct.span()).or(cline);
                    raw.components.push(RawComponent {
                        name: name.to_string(),
                        line: cline,
                        entries: entries(lines, file, ct, &format!("components.{name}."))?,
                    });
                }
            }
            "connections" => {
                let arr = item.as_array().ok_or_else(|| {
                    invalid(file, line, "connections", "must be an array of strings like \"src.out -> mux.in\" (before any [table])")
                })?;
                for v in arr.iter() {
                    let vline = line_of(lines, v.span()).or(line);
                    let s = v.as_str().ok_or_else(|| invalid(file, vline, "connections", "each connection is a string \"A.PORT -> B.PORT\""))?;
                    raw.connections.push((s.to_string(), vline));
                }
            }
            "sweep" => {
                // Parameter grids and replications: read and checked by
                // `crate::sweep` (from this same document); a single run ignores it.
                if !item.is_table() {
                    return Err(invalid(file, line, "sweep", "must be a table: [sweep]"));
                }
            }
            other => {
                let hint = did_you_mean(other, top);
                return Err(invalid(file, line, other, format!("unknown top-level key; valid: connections, [scenario], [components.NAME], [probes], [trace], [sweep]{hint}")));
            }
        }
    }
    crate::expand::expand(raw)
}

fn valid_name(n: &str) -> bool {
    !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

const SCENARIO_KEYS: [&str; 9] = ["name", "description", "duration", "warmup", "seed", "replications", "check_wire", "fingerprint_content", "fast_path"];
const PROBES_KEYS: [&str; 3] = ["keep", "series", "interval"];
/// At most this many sampled values per run (series × samples), to keep memory sane.
const MAX_SERIES_VALUES: u64 = 20_000_000;

type ProbesSection = (Vec<String>, Vec<SeriesReq>, SimDuration);

/// Reads `[probes]`: which rows to keep, which series to sample and how often
/// (default: a thousandth of the run).
fn probes_section(raw: &RawScenario, components: &[ComponentDecl], duration: SimDuration) -> Result<ProbesSection, ScenarioError> {
    let f = raw.file.as_str();
    let list_of = |e: &RawEntry, key: &str| -> Result<Vec<String>, ScenarioError> {
        match &e.raw {
            Raw::List(items) => items
                .iter()
                .map(|r| match r {
                    Raw::Str(s) => Ok(s.clone()),
                    other => Err(invalid(f, e.line, key, format!("{other} is not a string; expected a list of strings"))),
                })
                .collect(),
            Raw::Str(s) => Ok(vec![s.clone()]),
            other => Err(invalid(f, e.line, key, format!("{other} is not valid; expected a list of strings"))),
        }
    };
    let (mut keep, mut wanted, mut interval) = (Vec::new(), Vec::new(), None);
    for e in &raw.probes {
        let key = format!("probes.{}", e.key);
        match e.key.as_str() {
            "keep" => keep = list_of(e, &key)?,
            "series" => wanted = list_of(e, &key)?.into_iter().map(|s| (s, e.line)).collect(),
            "interval" => {
                let spec = atmsim_models::params::ParamSpec { name: "interval", ty: ParamType::Time, default: None, required: true, help: "", source: "" };
                match parse_value(&spec, &e.raw) {
                    Ok(Value::Time(t)) if t.ps() > 0 => interval = Some(t),
                    Ok(_) => return Err(param_err(f, e.line, &key, "the sampling interval must be a positive time")),
                    Err(m) => return Err(param_err(f, e.line, &key, m)),
                }
            }
            other => {
                let hint = did_you_mean(other, PROBES_KEYS);
                return Err(invalid(f, e.line, &key, format!("unknown key; valid: {}{hint}", PROBES_KEYS.join(", "))));
            }
        }
    }
    for (i, p) in keep.iter().enumerate() {
        if p.trim().is_empty() {
            let line = raw.probes.iter().find(|e| e.key == "keep").and_then(|e| e.line);
            return Err(invalid(f, line, &format!("probes.keep[{i}]"), "empty pattern; write e.g. \"q.*\" or \"*.sink_delay\""));
        }
    }
    let interval = interval.unwrap_or(SimDuration((duration.ps() / 1000).max(1)));
    let names: Vec<&str> = components.iter().map(|c| c.name.as_str()).collect();
    let mut series = Vec::new();
    // Each component is built once, however many of its series are asked for.
    let mut built: BTreeMap<usize, atmsim_models::Model> = BTreeMap::new();
    for (label, line) in wanted {
        let key = "probes.series";
        let Some((path, name)) = label.rsplit_once('.') else {
            return Err(invalid(f, line, key, format!("'{label}': write COMPONENT[/SUB].NAME, e.g. \"q.q_len\" or \"sw/p3.q_len\"")));
        };
        let (cname, sub) = path.split_once('/').unwrap_or((path, ""));
        let Some(ci) = names.iter().position(|&n| n == cname) else {
            let hint = did_you_mean(cname, names.iter().copied());
            return Err(invalid(f, line, key, format!("'{label}': no component '{cname}'{hint}")));
        };
        let c = &components[ci];
        let model = match built.entry(ci) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let info = atmsim_models::BuildInfo { path: &c.name, seed: 0, run: 0, flow: c.flow.unwrap_or(0), end: SimTime::ZERO.plus(duration), dir: &raw.dir };
                e.insert((c.kind.build)(&c.params, &info).map_err(|e| param_err(f, line, key, e.msg))?)
            }
        };
        let offered = || {
            let groups: Vec<String> = c
                .kind
                .series
                .iter()
                .map(|g| {
                    let names: Vec<&str> = g.series.iter().map(|d| d.name).collect();
                    let at = if g.at.is_empty() { c.name.clone() } else { format!("{}/{}", c.name, g.at) };
                    format!("{at}: {}", names.join(", "))
                })
                .collect();
            if groups.is_empty() { format!("kind {} has no series", c.kind.kind) } else { format!("valid: {}", groups.join("; ")) }
        };
        let Some(index) = model.series_index(sub, name) else {
            // declared by the kind, and the part exists (it gives the group's first
            // series), but this component does not keep it: a parameter turns it on
            let group = c.kind.series.iter().find(|g| g.at.is_empty() == sub.is_empty() && g.series.iter().any(|d| d.name == name));
            if let Some(g) = group.filter(|g| g.series.first().is_some_and(|first| model.series_index(sub, first.name).is_some())) {
                let help = g.series.iter().find(|d| d.name == name).map_or("", |d| d.help);
                return Err(invalid(f, line, key, format!("'{label}': this {} does not keep it as configured ({help}; `atmsim describe {}`)", c.kind.kind, c.kind.kind)));
            }
            let all: Vec<&str> = c.kind.series.iter().flat_map(|g| g.series.iter().map(|d| d.name)).collect();
            let hint = did_you_mean(name, all.iter().copied());
            return Err(invalid(f, line, key, format!("'{label}': no such series here; {}{hint}", offered())));
        };
        let decl = c
            .kind
            .series
            .iter()
            .filter(|g| g.at.is_empty() == sub.is_empty())
            .flat_map(|g| g.series.iter())
            .find(|d| d.name == name)
            .copied()
            .ok_or_else(|| invalid(f, line, key, format!("'{label}': {}", offered())))?;
        series.push(SeriesReq { label: label.clone(), path: path.to_string(), component: ci, index, decl });
    }
    let samples = duration.ps() / interval.ps();
    if samples.saturating_mul(series.len() as u64) > MAX_SERIES_VALUES {
        let line = raw.probes.iter().find(|e| e.key == "interval").and_then(|e| e.line);
        return Err(param_err(f, line, "probes.interval", format!("{} series × {samples} samples is more than {MAX_SERIES_VALUES} values; sample less often", series.len())));
    }
    Ok((keep, series, interval))
}

impl Scenario {
    /// Loads and validates a scenario file.
    pub fn load(path: &str) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::Io { file: path.into(), msg: format!("cannot read scenario file: {e}") })?;
        Scenario::from_text(&text, path)
    }

    /// Parses and validates scenario text; `file` names it in errors.
    pub fn from_text(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_raw(parse_raw(text, file)?)
    }

    /// Validates a raw scenario.
    pub fn from_raw(raw: RawScenario) -> Result<Scenario, ScenarioError> {
        let file = raw.file.clone();
        let f = file.as_str();
        let stem = std::path::Path::new(f).file_stem().and_then(|s| s.to_str()).unwrap_or("scenario").to_string();
        let mut name = stem;
        let mut description = String::new();
        let mut duration = None;
        let mut warmup = SimDuration::ZERO;
        let mut seed = 1u64;
        let mut replications = 1u32;
        let mut check_wire = false;
        let mut fingerprint_content = false;
        let mut fast_path = true;
        let mut deliver_ahead = true;
        for e in &raw.scenario {
            let key = format!("scenario.{}", e.key);
            let time = |e: &RawEntry| -> Result<SimDuration, ScenarioError> {
                let spec = atmsim_models::params::ParamSpec { name: "t", ty: ParamType::Time, default: None, required: true, help: "", source: "" };
                match parse_value(&spec, &e.raw) {
                    Ok(Value::Time(t)) => Ok(t),
                    Ok(_) => Err(param_err(f, e.line, &key, "expected a time")),
                    Err(m) => Err(param_err(f, e.line, &key, m)),
                }
            };
            match (e.key.as_str(), &e.raw) {
                ("name", Raw::Str(s)) => name = s.clone(),
                ("description", Raw::Str(s)) => description = s.clone(),
                ("duration", _) => {
                    let d = time(e)?;
                    if d.ps() == 0 {
                        return Err(param_err(f, e.line, &key, "duration must be positive"));
                    }
                    duration = Some(d);
                }
                ("warmup", _) => warmup = time(e)?,
                ("seed", Raw::Int(i)) if *i >= 0 => seed = *i as u64,
                ("seed", _) => return Err(param_err(f, e.line, &key, format!("{} is not valid; expected an integer >= 0", e.raw))),
                ("replications", Raw::Int(i)) if *i >= 1 && *i as u64 <= crate::sweep::MAX_REPLICATIONS => replications = *i as u32,
                ("replications", _) => return Err(param_err(f, e.line, &key, format!("{} is not valid; expected an integer 1..1000000", e.raw))),
                ("check_wire", Raw::Bool(b)) => check_wire = *b,
                ("fingerprint_content", Raw::Bool(b)) => fingerprint_content = *b,
                ("fingerprint_content", _) => return Err(param_err(f, e.line, &key, format!("{} is not valid; expected true or false", e.raw))),
                ("check_wire", _) => return Err(param_err(f, e.line, &key, format!("{} is not valid; expected true or false", e.raw))),
                ("fast_path", Raw::Bool(b)) => (fast_path, deliver_ahead) = (*b, *b),
                ("fast_path", Raw::Str(s)) if s == "sinks" => (fast_path, deliver_ahead) = (true, false),
                ("fast_path", _) => return Err(param_err(f, e.line, &key, format!("{} is not valid; expected true, false or \"sinks\"", e.raw))),
                ("name" | "description", _) => return Err(param_err(f, e.line, &key, "expected a string")),
                (other, _) => {
                    let hint = did_you_mean(other, SCENARIO_KEYS);
                    return Err(invalid(f, e.line, &key, format!("unknown key; valid: {}{hint}", SCENARIO_KEYS.join(", "))));
                }
            }
        }
        let duration = duration.ok_or_else(|| invalid(f, None, "scenario.duration", "missing: every scenario needs [scenario] duration = \"...\" (e.g. \"1 s\")"))?;
        if warmup >= duration {
            let line = raw.scenario.iter().find(|e| e.key == "warmup").and_then(|e| e.line);
            return Err(param_err(f, line, "scenario.warmup", "warm-up must be shorter than the duration"));
        }
        if raw.components.is_empty() {
            return Err(invalid(f, None, "components", "no components: add tables like [components.src] with kind = \"poisson\""));
        }

        // Components.
        let mut components = Vec::with_capacity(raw.components.len());
        let mut next_flow = 0u32;
        let kinds: Vec<&str> = KINDS.iter().map(|k| k.kind).collect();
        for c in &raw.components {
            let ckey = format!("components.{}", c.name);
            if !valid_name(&c.name) {
                return Err(invalid(f, c.line, &ckey, "component names use letters, digits, '_' and '-' only"));
            }
            let kind_entry = c.entries.iter().find(|e| e.key == "kind").ok_or_else(|| {
                invalid(f, c.line, &format!("{ckey}.kind"), format!("missing; valid kinds: {}", kinds.join(", ")))
            })?;
            let kspec = match &kind_entry.raw {
                Raw::Str(s) => kind(s).ok_or_else(|| {
                    let hint = did_you_mean(s, kinds.iter().copied());
                    invalid(f, kind_entry.line, &format!("{ckey}.kind"), format!("unknown kind '{s}'; valid: {}{hint}", kinds.join(", ")))
                })?,
                other => return Err(invalid(f, kind_entry.line, &format!("{ckey}.kind"), format!("{other} is not a kind; valid: {}", kinds.join(", ")))),
            };
            let mut params = Params::default();
            let mut shown = BTreeMap::new();
            let mut lines: BTreeMap<&str, Option<usize>> = BTreeMap::new();
            for e in c.entries.iter().filter(|e| e.key != "kind") {
                let pkey = format!("{ckey}.{}", e.key);
                let Some(spec) = kspec.param(&e.key) else {
                    let names: Vec<&str> = kspec.params().map(|p| p.name).collect();
                    let hint = did_you_mean(&e.key, names.iter().copied());
                    let valid = if names.is_empty() { "none".to_string() } else { names.join(", ") };
                    return Err(invalid(f, e.line, &pkey, format!("unknown parameter for kind {}; valid: {valid}{hint}", kspec.kind)));
                };
                let v = parse_value(spec, &e.raw).map_err(|m| param_err(f, e.line, &pkey, m))?;
                params.values.insert(spec.name, v);
                shown.insert(spec.name, match &e.raw {
                    Raw::Str(s) => s.clone(),
                    r => r.to_string(),
                });
                lines.insert(spec.name, e.line);
            }
            for spec in kspec.params() {
                if params.values.contains_key(spec.name) {
                    continue;
                }
                if let Some(d) = spec.default {
                    let raw = atmsim_models::params::default_raw(d);
                    let v = parse_value(spec, &raw).map_err(|m| param_err(f, c.line, &format!("{ckey}.{}", spec.name), format!("bad default: {m}")))?;
                    params.values.insert(spec.name, v);
                    shown.insert(spec.name, d.to_string());
                } else if spec.required {
                    return Err(param_err(f, c.line, &format!("{ckey}.{}", spec.name), format!("missing required parameter ({}: {})", spec.ty.unit(), spec.help)));
                }
            }
            let flow = if kspec.is_source {
                next_flow += 1;
                Some(next_flow - 1)
            } else {
                None
            };
            // Let the model check its own consistency now, so errors come at load time.
            let info = atmsim_models::BuildInfo { path: &c.name, seed: 0, run: 0, flow: flow.unwrap_or(0), end: SimTime::ZERO.plus(duration), dir: &raw.dir };
            if let Err(issue) = (kspec.build)(&params, &info) {
                let line = lines.get(issue.key.as_str()).copied().flatten().or(c.line);
                let key = if issue.key.is_empty() { ckey.clone() } else { format!("{ckey}.{}", issue.key) };
                return Err(param_err(f, line, &key, issue.msg));
            }
            let ports = kspec.ports_for(&params);
            components.push(ComponentDecl { name: c.name.clone(), kind: kspec, params, shown, flow, ports });
        }

        // Wiring.
        let index: BTreeMap<&str, usize> = components.iter().enumerate().map(|(i, c)| (c.name.as_str(), i)).collect();
        let names: Vec<&str> = components.iter().map(|c| c.name.as_str()).collect();
        let mut wires = Vec::new();
        let mut used_out: BTreeSet<(usize, u16)> = BTreeSet::new();
        let mut used_in: BTreeSet<(usize, u16)> = BTreeSet::new();
        for (text, line) in &raw.connections {
            let line = *line;
            let Some((a, b)) = text.split_once("->") else {
                return Err(invalid(f, line, "connections", format!("'{text}' is not a connection; write \"A.PORT -> B.PORT\" (ports optional when unique)")));
            };
            let end = |s: &str, outgoing: bool| -> Result<(usize, u16), ScenarioError> {
                let s = s.trim();
                let (cname, port) = match s.split_once('.') {
                    Some((c, p)) => (c.trim(), Some(p.trim())),
                    None => (s, None),
                };
                let &ci = index.get(cname).ok_or_else(|| {
                    let hint = did_you_mean(cname, names.iter().copied());
                    invalid(f, line, "connections", format!("'{text}': no component '{cname}'{hint}"))
                })?;
                let k = components[ci].kind;
                let decl_ports = &components[ci].ports;
                let ports: Vec<&str> = if outgoing { decl_ports.outputs.iter().map(|p| p.name.as_str()).collect() } else { decl_ports.inputs.iter().map(|p| p.name.as_str()).collect() };
                let dir = if outgoing { "output" } else { "input" };
                if ports.is_empty() {
                    return Err(invalid(f, line, "connections", format!("'{text}': {cname} (kind {}) has no {dir} port", k.kind)));
                }
                let pi = match port {
                    Some(p) => ports.iter().position(|&q| q == p).ok_or_else(|| {
                        let hint = did_you_mean(p, ports.iter().copied());
                        invalid(f, line, "connections", format!("'{text}': {cname} (kind {}) has no {dir} port '{p}'; valid: {}{hint}", k.kind, ports.join(", ")))
                    })?,
                    None if ports.len() == 1 => 0,
                    None => return Err(invalid(f, line, "connections", format!("'{text}': {cname} has several {dir} ports, name one: {}", ports.join(", ")))),
                };
                Ok((ci, pi as u16))
            };
            let (from, out) = end(a, true)?;
            let (to, inp) = end(b, false)?;
            if !used_out.insert((from, out)) {
                return Err(invalid(f, line, "connections", format!("'{text}': output {}.{} is already connected (an output goes to one input)", components[from].name, components[from].ports.outputs[out as usize].name)));
            }
            let ip = &components[to].ports.inputs[inp as usize];
            check_carries(&text, &components[from].name, &components[from].ports.outputs[out as usize], &components[to].name, ip).map_err(|m| invalid(f, line, "connections", m))?;
            if !used_in.insert((to, inp)) && !ip.multi {
                return Err(invalid(f, line, "connections", format!("'{text}': input {}.{} is already connected and takes one connection (use a fifo to multiplex)", components[to].name, ip.name)));
            }
            wires.push(Wire { from, out, to, inp });
        }
        for (ci, c) in components.iter().enumerate() {
            for (pi, p) in c.ports.outputs.iter().enumerate() {
                if p.required && !used_out.contains(&(ci, pi as u16)) {
                    let p = &p.name;
                    return Err(invalid(f, raw.components[ci].line, &format!("components.{}", c.name), format!("output port '{p}' is not connected: add \"{}.{p} -> ...\" to connections", c.name)));
                }
            }
            for (pi, p) in c.ports.inputs.iter().enumerate() {
                if p.required && !used_in.contains(&(ci, pi as u16)) {
                    return Err(invalid(f, raw.components[ci].line, &format!("components.{}", c.name), format!("input port '{}' is not connected: add \"... -> {}.{}\" to connections", p.name, c.name, p.name)));
                }
            }
        }
        closed_loop(&components, &wires).map_or(Ok(()), |at| {
            let names: Vec<&str> = at.iter().map(|&i| components[i].name.as_str()).collect();
            let line = raw.connections.iter().map(|(_, l)| *l).find(|l| l.is_some()).flatten();
            Err(invalid(
                f,
                line,
                "connections",
                format!("{} -> {}: a loop cells cannot leave (each of them only forwards cells, and none leads to a sink or any other kind): they would circulate until the run ends; connect one of them to a sink", names.join(" -> "), names[0]),
            ))
        })?;
        let (keep, series, interval) = probes_section(&raw, &components, duration)?;
        let trace = crate::trace::trace_section(&raw, &components, duration)?;
        let warnings = overloads(&components, &wires)
            .into_iter()
            .map(|o| {
                let at = Location { file: f.into(), line: raw.components[o.at].line, key: format!("components.{}", components[o.at].name) };
                format!("{at}: {}", o.message(&components))
            })
            .collect();
        Ok(Scenario { raw, name, description, duration, warmup, seed, replications, check_wire, fingerprint_content, fast_path, deliver_ahead, components, wires, keep, series, interval, trace, warnings })
    }

    /// Applies `KEY=VALUE` overrides (`COMPONENT.PARAM` or `scenario.KEY`) and
    /// re-validates. A value is read as a TOML value when it is one (`0.8`, `12`,
    /// `"text"`), else as a string (`256 cells`).
    pub fn with_overrides(&self, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        let mut raw = self.raw.clone();
        for (key, value) in overrides {
            let at = |msg: String| ScenarioError::Invalid { at: Location { file: "--set".into(), line: None, key: key.clone() }, msg };
            let (head, param) = key.split_once('.').ok_or_else(|| at("expected COMPONENT.PARAM=VALUE, scenario.KEY=VALUE, probes.KEY=VALUE or trace.KEY=VALUE".into()))?;
            let v = value.trim();
            // A TOML value when it is one (12, 0.8, true, "text", ["a", "b"]); else a bare string.
            let rawv = v.parse::<toml_edit::Value>().ok().and_then(|tv| raw_of_value(&tv)).unwrap_or_else(|| Raw::Str(v.to_string()));
            let entry = RawEntry { key: param.to_string(), raw: rawv, line: None };
            let list = if head == "scenario" {
                &mut raw.scenario
            } else if head == "probes" {
                &mut raw.probes
            } else if head == "trace" {
                &mut raw.trace
            } else {
                let names: Vec<String> = raw.components.iter().map(|c| c.name.clone()).collect();
                let comp = raw.components.iter_mut().find(|c| c.name == head).ok_or_else(|| {
                    let hint = did_you_mean(head, names.iter().map(|s| s.as_str()));
                    at(format!("no component '{head}'{hint}"))
                })?;
                &mut comp.entries
            };
            match list.iter_mut().find(|e| e.key == param) {
                Some(e) => *e = entry,
                None => list.push(entry),
            }
        }
        raw.file = format!("{} (with --set)", self.raw.file);
        Scenario::from_raw(raw).map_err(|e| match e {
            ScenarioError::Invalid { at, msg } if at.line.is_none() => ScenarioError::Invalid { at: Location { file: "--set".into(), ..at }, msg },
            ScenarioError::Param { at, msg } if at.line.is_none() => ScenarioError::Param { at: Location { file: "--set".into(), ..at }, msg },
            other => other,
        })
    }

    /// The scenario as TOML (values as written or defaulted).
    pub fn to_toml(&self) -> String {
        let mut s = String::new();
        s.push_str("connections = [\n");
        for w in &self.wires {
            let a = &self.components[w.from];
            let b = &self.components[w.to];
            s.push_str(&format!("  \"{}.{} -> {}.{}\",\n", a.name, a.ports.outputs[w.out as usize].name, b.name, b.ports.inputs[w.inp as usize].name));
        }
        s.push_str("]\n\n[scenario]\n");
        s.push_str(&format!("name = {:?}\n", self.name));
        if !self.description.is_empty() {
            s.push_str(&format!("description = {:?}\n", self.description));
        }
        s.push_str(&format!("duration = \"{} s\"\nwarmup = \"{} s\"\nseed = {}\nreplications = {}\n", self.duration.as_secs_f64(), self.warmup.as_secs_f64(), self.seed, self.replications));
        if self.check_wire {
            s.push_str("check_wire = true\n");
        }
        if self.fingerprint_content {
            s.push_str("fingerprint_content = true\n");
        }
        if !self.fast_path {
            s.push_str("fast_path = false\n");
        } else if !self.deliver_ahead {
            s.push_str("fast_path = \"sinks\"\n");
        }
        for c in &self.components {
            s.push_str(&format!("\n[components.{}]\nkind = \"{}\"\n", c.name, c.kind.kind));
            for (k, v) in &c.shown {
                let is_int = c.kind.param(k).map(|p| matches!(p.ty, ParamType::Int { .. } | ParamType::Float { .. } | ParamType::StrList | ParamType::Bool)).unwrap_or(false);
                if is_int {
                    s.push_str(&format!("{k} = {v}\n"));
                } else {
                    s.push_str(&format!("{k} = {v:?}\n"));
                }
            }
        }
        if !self.keep.is_empty() || !self.series.is_empty() {
            s.push_str("\n[probes]\n");
            if !self.keep.is_empty() {
                s.push_str(&format!("keep = {:?}\n", self.keep));
            }
            if !self.series.is_empty() {
                let labels: Vec<&str> = self.series.iter().map(|r| r.label.as_str()).collect();
                s.push_str(&format!("series = {labels:?}\ninterval = \"{} s\"\n", self.interval.as_secs_f64()));
            }
        }
        if let Some(t) = &self.trace {
            s.push_str(&crate::trace::to_toml(t));
        }
        s
    }

    /// One warning per `[probes] keep` pattern that matches none of `rows` (a misspelt
    /// pattern silently hides every row it was meant to keep).
    pub fn unmatched_keep(&self, rows: &[atmsim_kernel::ProbeRow]) -> Vec<String> {
        let line = self.raw.probes.iter().find(|e| e.key == "keep").and_then(|e| e.line);
        let at = match line {
            Some(l) => format!("{}:{l}", self.raw.file),
            None => self.raw.file.clone(),
        };
        let mut keys: Vec<String> = rows.iter().map(|r| format!("{}.{}", r.component, r.probe)).collect();
        keys.dedup();
        self.keep
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                let m = WildMatch::new(p);
                !keys.iter().any(|k| m.matches(k))
            })
            .map(|(i, p)| {
                let examples: Vec<&str> = keys.iter().take(3).map(String::as_str).collect();
                format!("{at}: probes.keep[{i}]: '{p}' matches no probe row, so it keeps nothing; rows are COMPONENT.PROBE, e.g. {}", examples.join(", "))
            })
            .collect()
    }

    /// Whether probe row `(component, probe)` is kept by `[probes] keep`.
    pub fn keeps(&self, component: &str, probe: &str) -> bool {
        self.keep.is_empty() || {
            let key = format!("{component}.{probe}");
            self.keep.iter().any(|p| WildMatch::new(p).matches(&key))
        }
    }
}

/// A loop cells cannot leave: components that only forward cells
/// ([`atmsim_models::kind::KindInfo::forwards_only`]) from which no wire leads, however
/// far, to a component of another kind. Returns one such cycle, in wiring order.
fn closed_loop(components: &[ComponentDecl], wires: &[Wire]) -> Option<Vec<usize>> {
    let n = components.len();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut into: Vec<Vec<usize>> = vec![Vec::new(); n];
    for w in wires {
        out[w.from].push(w.to);
        into[w.to].push(w.from);
    }
    // Cells can leave every component from which one that is not a pure forwarder
    // (or has no output) is reachable: search backwards from those.
    let mut leaves: Vec<bool> = (0..n).map(|i| !components[i].kind.forwards_only || out[i].is_empty()).collect();
    let mut stack: Vec<usize> = (0..n).filter(|&i| leaves[i]).collect();
    while let Some(i) = stack.pop() {
        for &j in &into[i] {
            if !leaves[j] {
                leaves[j] = true;
                stack.push(j);
            }
        }
    }
    // Each component left has an output, and every output leads to another such
    // component: follow the first until one repeats.
    let start = (0..n).find(|&i| !leaves[i])?;
    let mut path = vec![start];
    let mut seen = vec![usize::MAX; n];
    seen[start] = 0;
    let mut at = start;
    loop {
        at = *out[at].iter().find(|&&j| !leaves[j])?;
        if seen[at] != usize::MAX {
            return Some(path.split_off(seen[at]));
        }
        seen[at] = path.len();
        path.push(at);
    }
}

/// A transmitter offered more than its line rate by the open-loop sources that feed it.
#[derive(Debug, PartialEq)]
struct Overload {
    /// The transmitter.
    at: usize,
    /// Its line rate, b/s of cells.
    line: f64,
    /// The largest sum of the mean rates of its sources active at one time, b/s of cells.
    offered: f64,
    /// Those sources.
    sources: Vec<usize>,
}

impl Overload {
    fn message(&self, components: &[ComponentDecl]) -> String {
        let mut names: Vec<&str> = self.sources.iter().take(3).map(|&i| components[i].name.as_str()).collect();
        if self.sources.len() > 3 {
            names.push("...");
        }
        format!(
            "offered {} Mb/s of cells ({} of {}: the mean rates of {}) against a line rate of {} Mb/s: at least {:.0}% of the cells are lost, or wait ever longer in an unlimited buffer; if that is not meant, check the units (MB/s is megabytes, 8 Mb/s each)",
            fmt_mbps(self.offered),
            if self.sources.len() == 1 { "one source" } else { "sources active together" },
            self.sources.len(),
            names.join(", "),
            fmt_mbps(self.line),
            100.0 * (1.0 - self.line / self.offered),
        )
    }
}

fn fmt_mbps(bps: f64) -> String {
    let v = bps / 1e6;
    let s = format!("{v:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Each transmitter ([`atmsim_models::kind::Rates::line`]) whose open-loop sources
/// ([`atmsim_models::kind::Rates::offered`]) offer more than its line rate at some
/// time: the mean rates of the sources active together (their `start`/`stop`) are
/// summed. A source feeds the transmitter its cells reach directly or through kinds
/// that pass each cell on as it comes ([`atmsim_models::kind::Rates::passes`]: a loss
/// model, a meter); anything else ends the search: a switch, which routes by VC, a
/// shaper or a policer, which change the rate, anything closed-loop.
fn overloads(components: &[ComponentDecl], wires: &[Wire]) -> Vec<Overload> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); components.len()];
    for w in wires {
        out[w.from].push(w.to);
    }
    // For each transmitter: (start, stop, rate) of each source that feeds it.
    let mut fed: BTreeMap<usize, Vec<(u64, u64, f64, usize)>> = Default::default();
    for (i, c) in components.iter().enumerate() {
        let Some(rate) = c.kind.rates.offered.and_then(|f| f(&c.params)) else { continue };
        let Ok(window) = atmsim_models::traffic::SourceParams::bind(&c.params) else { continue };
        let mut at = i;
        let mut hops = 0;
        let target = loop {
            let [next] = out[at][..] else { break None };
            let k = components[next].kind;
            if k.rates.line.is_some() {
                break Some(next);
            }
            if !k.rates.passes || hops > components.len() {
                break None;
            }
            at = next;
            hops += 1;
        };
        if let Some(t) = target {
            let stop = window.stop.map_or(u64::MAX, |d| d.ps());
            if stop > window.start.ps() {
                fed.entry(t).or_default().push((window.start.ps(), stop, rate, i));
            }
        }
    }
    let mut found = Vec::new();
    for (t, srcs) in fed {
        let Some(line) = components[t].kind.rates.line.and_then(|f| f(&components[t].params)) else { continue };
        // The most offered at once: sweep the starts and stops in time order (a stop
        // before a start at the same instant).
        let mut edges: Vec<(u64, bool, usize)> = srcs.iter().enumerate().flat_map(|(k, s)| [(s.0, true, k), (s.1, false, k)]).collect();
        edges.sort_by_key(|&(t, starts, _)| (t, starts));
        let (mut now, mut best) = (0.0f64, (0.0f64, Vec::new()));
        let mut active: Vec<usize> = Vec::new();
        for (_, starts, k) in edges {
            if starts {
                now += srcs[k].2;
                active.push(k);
                if now > best.0 {
                    best = (now, active.clone());
                }
            } else {
                now -= srcs[k].2;
                active.retain(|&a| a != k);
            }
        }
        // A rate exactly at the line rate (a cbr source at the cell rate) is not an overload.
        if best.0 > line * (1.0 + 1e-9) {
            let mut sources: Vec<usize> = best.1.iter().map(|&k| srcs[k].3).collect();
            sources.sort_unstable();
            found.push(Overload { at: t, line, offered: best.0, sources });
        }
    }
    found
}

/// An output may only feed an input that carries the same messages (cells or frames).
fn check_carries(text: &str, from: &str, op: &atmsim_models::PortDecl, to: &str, ip: &atmsim_models::PortDecl) -> Result<(), String> {
    if op.carries == ip.carries {
        return Ok(());
    }
    Err(format!(
        "'{text}': {from}.{} sends {} but {to}.{} takes {}; connect ports that carry the same (a gateway or adapter converts between cells and frames)",
        op.name,
        op.carries.name(),
        ip.name,
        ip.carries.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_output_cannot_feed_a_cell_input() {
        use atmsim_models::{Carries, PortDecl};
        let frames = PortDecl::new("out", false, true).carrying(Carries::Frames);
        let cells = PortDecl::new("in", false, true);
        let e = check_carries("ring.out -> mux.in", "ring", &frames, "mux", &cells).unwrap_err();
        assert!(e.contains("ring.out sends frames but mux.in takes cells"), "{e}");
        assert!(check_carries("a.out -> b.in", "a", &cells, "b", &cells).is_ok());
        assert!(check_carries("a.out -> b.in", "a", &frames, "b", &frames.clone()).is_ok());
    }

    /// Issue 44 item 9: `MB/s` typed for `Mb/s` offers eight times the rate.
    #[test]
    fn an_open_loop_load_above_the_line_rate_warns_once_per_transmitter() {
        let sc = |srcs: &str, via: &str| {
            let text = format!(
                "connections = [{via}]\n[scenario]\nduration = \"1 ms\"\n{srcs}[components.mux]\nkind = \"fifo\"\nphy = \"OC-3c\"\n[components.meter]\nkind = \"loss\"\np = 0\n[components.sink]\nkind = \"sink\"\n"
            );
            Scenario::from_text(&text, "over.toml").unwrap_or_else(|e| panic!("{e}")).warnings
        };
        let src = |n: &str, kind: &str, rate: &str, extra: &str| format!("[components.{n}]\nkind = \"{kind}\"\n{rate}\n{extra}");
        let direct = "\"a -> mux\", \"b -> mux\", \"mux -> meter\", \"meter -> sink\"";
        // 100 MB/s is 800 Mb/s: one line naming the fifo, both rates and the sources.
        let w = sc(&(src("a", "cbr", "rate = \"100 MB/s\"", "") + &src("b", "poisson", "rate = \"10 Mb/s\"", "")), direct);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("over.toml:"), "{}", w[0]);
        assert!(w[0].contains("components.mux: offered 810 Mb/s of cells (sources active together of 2: the mean rates of a, b) against a line rate of 149.76 Mb/s"), "{}", w[0]);
        assert!(w[0].contains("MB/s is megabytes"), "{}", w[0]);
        // Below the line rate, or exactly at it: nothing.
        assert!(sc(&(src("a", "cbr", "rate = \"100 Mb/s\"", "") + &src("b", "poisson", "rate = \"49.76 Mb/s\"", "")), direct).is_empty());
        // An on-off source counts its mean, not its peak.
        assert!(sc(&(src("a", "onoff", "peak = \"149.76 Mb/s\"\nmean = \"50 Mb/s\"\nburst_factor = \"100 cells\"", "") + &src("b", "cbr", "rate = \"90 Mb/s\"", "")), direct).is_empty());
        // Sources that are never active together do not add up.
        let apart = src("a", "cbr", "rate = \"100 Mb/s\"", "stop = \"0.5 ms\"\n") + &src("b", "cbr", "rate = \"100 Mb/s\"", "start = \"0.5 ms\"\n");
        assert!(sc(&apart, direct).is_empty());
        let overlap = src("a", "cbr", "rate = \"100 Mb/s\"", "stop = \"0.6 ms\"\n") + &src("b", "cbr", "rate = \"100 Mb/s\"", "start = \"0.5 ms\"\n");
        assert_eq!(sc(&overlap, direct).len(), 1);
        // Through a component that only forwards cells on one wire (the loss model), the
        // fifo behind it is the one offered.
        let behind = "\"a -> meter\", \"meter -> mux\", \"b -> sink\", \"mux -> sink\"";
        let w = sc(&(src("a", "cbr", "rate = \"200 Mb/s\"", "") + &src("b", "cbr", "rate = \"1 Mb/s\"", "")), behind);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("components.mux: offered 200 Mb/s of cells (one source of 1: the mean rates of a)"), "{}", w[0]);
        // A shaper in between changes the rate: the fifo behind it is not judged by the
        // source's rate.
        let paced = "\"a -> shaper\", \"shaper -> mux\", \"mux -> meter\", \"meter -> sink\", \"b -> sink\"";
        let shaper = "[components.shaper]\nkind = \"pacer\"\nrate = \"100 Mb/s\"\n";
        assert!(sc(&(src("a", "cbr", "rate = \"200 Mb/s\"", "") + &src("b", "cbr", "rate = \"1 Mb/s\"", "") + shaper), paced).is_empty());
    }

    #[test]
    fn a_loop_cells_cannot_leave_is_refused_and_one_with_a_way_out_is_not() {
        let head = "[scenario]\nduration = \"1 ms\"\n[components.src]\nkind = \"cbr\"\nrate = \"1 Mb/s\"\n";
        let fifo = |n: &str| format!("[components.{n}]\nkind = \"fifo\"\nrate = \"10 Mb/s\"\n");
        let closed = format!("connections = [\"src -> a\", \"a -> b\", \"b -> a\"]\n{head}{}{}", fifo("a"), fifo("b"));
        let e = Scenario::from_text(&closed, "loop.toml").unwrap_err().to_string();
        assert!(e.starts_with("loop.toml:1: connections: a -> b -> a: a loop cells cannot leave"), "{e}");
        // The same loop with a switch that can send its cells on to a sink loads.
        let out = "connections = [\"src -> sw.p1\", \"sw.p2 -> a\", \"a -> sw.p2\", \"sw.p1 -> sink\"]\n";
        let sw = "[components.sw]\nkind = \"switch\"\nports = 2\nvcs = [\"p1:0/1 -> p2:0/1\", \"p2:0/1 -> p1:0/1\"]\n[components.sink]\nkind = \"sink\"\n";
        let open = format!("{out}{head}vc = 1\n{}{sw}", fifo("a"));
        Scenario::from_text(&open, "open.toml").unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn line_numbers_match_counting_newlines() {
        let text = "a = 1\n\nb = 2\nc\n";
        let idx = LineIndex::new(text);
        for offset in 0..text.len() {
            let counted = text[..offset].bytes().filter(|&b| b == b'\n').count() + 1;
            assert_eq!(line_of(&idx, Some(offset..offset + 1)), Some(counted), "offset {offset}");
        }
        assert_eq!(line_of(&idx, None), None);
    }
}
