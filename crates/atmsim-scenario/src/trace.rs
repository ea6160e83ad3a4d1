//! The `[trace]` table: a cell-by-cell trace of each run ([`atmsim_models::cell_trace`]).
//!
//! ```toml
//! [trace]
//! cells = true                # keep a trace (atmsim run --cell-trace FILE sets it)
//! flows = ["ping"]            # the cells of these sources, wherever they go (default: all)
//! vcs = ["92", "0/201"]       # or cells carrying these VC labels, at any hop
//! at = ["sw", "bag1"]         # only rows at these components (default: everywhere);
//!                             # "ring/s2": one station of an FDDI ring
//! from = "60 ms"              # only rows at instants in [from, to)
//! to = "100 ms"
//! limit = 100000              # at most this many rows (default 1,000,000)
//! frames = false              # leave out the frames' rows (default: kept)
//! ```

use atmsim_kernel::{SimDuration, SimTime};
use atmsim_models::cell::parse_vc_label;
use atmsim_models::observers::cell_trace::{TraceFilter, DEFAULT_LIMIT};
use atmsim_models::params::{parse_value, ParamSpec, ParamType, Raw, Value};
use atmsim_models::suggest::did_you_mean;

use crate::error::ScenarioError;
use crate::load::{invalid, ComponentDecl, RawEntry, RawScenario};

/// The keys `[trace]` takes.
pub const TRACE_KEYS: [&str; 8] = ["cells", "frames", "flows", "vcs", "at", "from", "to", "limit"];

/// A validated `[trace]` table: the filter with names resolved, and the names as
/// written (for `to_toml`).
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSpec {
    pub filter: TraceFilter,
    pub flows: Vec<String>,
    pub vcs: Vec<String>,
    pub at: Vec<String>,
}

fn strings(file: &str, e: &RawEntry, key: &str) -> Result<Vec<String>, ScenarioError> {
    let one = |r: &Raw| match r {
        Raw::Str(s) => Ok(s.clone()),
        Raw::Int(i) => Ok(i.to_string()),
        other => Err(invalid(file, e.line, key, format!("{other} is not valid; expected a list of strings"))),
    };
    match &e.raw {
        Raw::List(items) => items.iter().map(one).collect(),
        other => Ok(vec![one(other)?]),
    }
}

/// Reads `[trace]` (None: no trace, the table absent or `cells = false`).
pub fn trace_section(raw: &RawScenario, components: &[ComponentDecl], duration: SimDuration) -> Result<Option<TraceSpec>, ScenarioError> {
    let f = raw.file.as_str();
    let mut on = false;
    let mut spec = TraceSpec { filter: TraceFilter::default(), flows: Vec::new(), vcs: Vec::new(), at: Vec::new() };
    let names: Vec<&str> = components.iter().map(|c| c.name.as_str()).collect();
    let time = |e: &RawEntry, key: &str| -> Result<SimTime, ScenarioError> {
        let p = ParamSpec { name: "t", ty: ParamType::Time, default: None, required: true, help: "", source: "" };
        match parse_value(&p, &e.raw) {
            Ok(Value::Time(t)) => Ok(SimTime::ZERO.plus(t)),
            Ok(_) => Err(invalid(f, e.line, key, "expected a time, e.g. \"10 ms\"")),
            Err(m) => Err(invalid(f, e.line, key, m)),
        }
    };
    for e in &raw.trace {
        let key = format!("trace.{}", e.key);
        match e.key.as_str() {
            "cells" => match &e.raw {
                Raw::Bool(b) => on = *b,
                other => return Err(invalid(f, e.line, &key, format!("{other} is not valid; expected true or false"))),
            },
            "frames" => match &e.raw {
                Raw::Bool(b) => spec.filter.frames = *b,
                other => return Err(invalid(f, e.line, &key, format!("{other} is not valid; expected true or false (whether frames' rows are kept too)"))),
            },
            "flows" => {
                spec.flows = strings(f, e, &key)?;
                for name in &spec.flows {
                    let Some(c) = components.iter().find(|c| &c.name == name) else {
                        let hint = did_you_mean(name, names.iter().copied());
                        return Err(invalid(f, e.line, &key, format!("no component '{name}'{hint}")));
                    };
                    let Some(flow) = c.flow else {
                        let sources: Vec<&str> = components.iter().filter(|c| c.flow.is_some()).map(|c| c.name.as_str()).collect();
                        return Err(invalid(f, e.line, &key, format!("'{name}' is a {}, not a source of cells; sources here: {}", c.kind.kind, sources.join(", "))));
                    };
                    let i = flow as usize;
                    if spec.filter.flows.len() <= i {
                        spec.filter.flows.resize(i + 1, false);
                    }
                    spec.filter.flows[i] = true;
                }
            }
            "vcs" => {
                spec.vcs = strings(f, e, &key)?;
                spec.filter.vcs = spec
                    .vcs
                    .iter()
                    .map(|v| parse_vc_label(v).map_err(|m| invalid(f, e.line, &key, format!("'{v}': {m}; write VCI or VPI/VCI"))))
                    .collect::<Result<_, _>>()?;
            }
            "at" => {
                spec.at = strings(f, e, &key)?;
                spec.filter.at = vec![false; components.len()];
                for name in &spec.at {
                    if let Some(i) = names.iter().position(|n| n == name) {
                        spec.filter.at[i] = true;
                        continue;
                    }
                    if let Some((i, station)) = ring_station(components, name).map_err(|m| invalid(f, e.line, &key, m))? {
                        spec.filter.at_stations.push((i as u32, station));
                        continue;
                    }
                    let hint = did_you_mean(name, names.iter().copied());
                    return Err(invalid(f, e.line, &key, format!("no component '{name}'{hint}")));
                }
            }
            "from" => spec.filter.from = time(e, &key)?,
            "to" => spec.filter.to = time(e, &key)?,
            "limit" => match &e.raw {
                Raw::Int(n) if *n > 0 => spec.filter.limit = usize::try_from(*n).unwrap_or(usize::MAX),
                other => return Err(invalid(f, e.line, &key, format!("{other} is not valid; expected a positive number of rows (default {DEFAULT_LIMIT})"))),
            },
            other => {
                let hint = did_you_mean(other, TRACE_KEYS);
                return Err(invalid(f, e.line, &key, format!("unknown key; valid: {}{hint}", TRACE_KEYS.join(", "))));
            }
        }
    }
    let end = SimTime::ZERO.plus(duration);
    if spec.filter.from >= spec.filter.to.min(end) {
        let line = raw.trace.iter().find(|e| e.key == "from" || e.key == "to").and_then(|e| e.line);
        return Err(invalid(f, line, "trace.from", "the window [from, to) holds no instant of the run: from must come before to and before the end"));
    }
    Ok(on.then_some(spec))
}

/// `RING/sI`, station I of the component named RING whose kind holds stations (the
/// `fddi_ring`), as (component index, station); None when `name` is not of that form;
/// an error for a station the component does not have.
fn ring_station(components: &[ComponentDecl], name: &str) -> Result<Option<(usize, u16)>, String> {
    let Some((ring, station)) = name.rsplit_once("/s") else { return Ok(None) };
    let Some(i) = components.iter().position(|c| c.name == ring) else { return Ok(None) };
    let Some(count) = components[i].kind.observed.stations else { return Ok(None) };
    let stations = count(&components[i].params);
    match station.parse::<u16>() {
        Ok(s) if i64::from(s) < stations => Ok(Some((i, s))),
        _ => Err(format!("'{name}': ring '{ring}' has stations s0 … s{}", stations - 1)),
    }
}

/// The `[trace]` table as TOML (for `Scenario::to_toml`).
pub fn to_toml(spec: &TraceSpec) -> String {
    let mut s = String::from("\n[trace]\ncells = true\n");
    for (k, v) in [("flows", &spec.flows), ("vcs", &spec.vcs), ("at", &spec.at)] {
        if !v.is_empty() {
            s.push_str(&format!("{k} = {v:?}\n"));
        }
    }
    if spec.filter.from > SimTime::ZERO {
        s.push_str(&format!("from = \"{} s\"\n", spec.filter.from.as_secs_f64()));
    }
    if spec.filter.to < SimTime(u64::MAX) {
        s.push_str(&format!("to = \"{} s\"\n", spec.filter.to.as_secs_f64()));
    }
    if spec.filter.limit != DEFAULT_LIMIT {
        s.push_str(&format!("limit = {}\n", spec.filter.limit));
    }
    if !spec.filter.frames {
        s.push_str("frames = false\n");
    }
    s
}
