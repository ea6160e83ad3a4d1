#![allow(unexpected_cfgs)] // pyo3 0.22 create_exception! checks a gil-refs feature this crate does not declare
//! Python bindings: `atmsim._atmsim`.
//!
//! Errors cross the boundary in one place ([`to_py`]): scenario errors become
//! `ScenarioError`/`ParamError`, run failures `SimulationError`. Runs release the GIL
//! and take it back every 65,536 events to call the progress callback and check for
//! Ctrl-C, so a long run can always be interrupted.

use std::collections::BTreeMap;
use std::sync::Arc;

use atmsim_kernel::{SimError, SimTime};
use atmsim_models::{kind, suggest::did_you_mean, KINDS};
use atmsim_scenario::sweep::Written;
use atmsim_scenario::{RunResult, Scenario, ScenarioError as CoreScenarioError, SweepSpec};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(_atmsim, AtmsimError, PyException, "Base of every atmsim error.");
create_exception!(_atmsim, ScenarioError, AtmsimError, "Bad scenario input (one line: FILE:LINE: KEY: message).");
create_exception!(_atmsim, ParamError, ScenarioError, "A parameter value is wrong (unit, range, consistency).");
create_exception!(_atmsim, SimulationError, AtmsimError, "A run failed (conservation, model invariant, interrupted).");

fn scenario_err(e: CoreScenarioError) -> PyErr {
    if e.is_param() {
        ParamError::new_err(e.to_string())
    } else {
        ScenarioError::new_err(e.to_string())
    }
}

fn sim_err(e: SimError) -> PyErr {
    SimulationError::new_err(e.to_string())
}

/// The one conversion of core errors into Python exceptions.
enum CoreError {
    Scenario(CoreScenarioError),
    Sim(SimError),
}

fn to_py(e: CoreError) -> PyErr {
    match e {
        CoreError::Scenario(e) => scenario_err(e),
        CoreError::Sim(e) => sim_err(e),
    }
}

#[pyclass(frozen, module = "atmsim._atmsim", name = "Scenario")]
struct PyScenario {
    inner: Arc<Scenario>,
    path: String,
}

fn result_dict<'py>(py: Python<'py>, sc: &Scenario, r: &RunResult, trace_file: Option<&std::path::Path>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    d.set_item("name", &r.name)?;
    d.set_item("seed", r.seed)?;
    d.set_item("run", r.run)?;
    d.set_item("fingerprint", format!("{:016x}", r.fingerprint))?;
    d.set_item("events", r.events)?;
    d.set_item("scheduled", r.scheduled)?;
    d.set_item("duration_s", sc.duration.as_secs_f64())?;
    d.set_item("warmup_s", sc.warmup.as_secs_f64())?;
    d.set_item("wall_s", r.wall_s)?;
    d.set_item("loop_s", r.loop_s)?;
    d.set_item("check_wire", sc.check_wire)?;
    d.set_item("wire_checked", r.ledger.wire_checked)?;
    let rows = PyList::empty_bound(py);
    for p in &r.probes {
        rows.append((p.component.as_str(), p.probe, p.statistic.as_str(), p.value, p.unit))?;
    }
    d.set_item("probes", rows)?;
    let (g, del, drop, inf) = r.ledger.totals();
    let ledger = PyDict::new_bound(py);
    ledger.set_item("generated", g)?;
    ledger.set_item("delivered", del)?;
    let by_cause = PyDict::new_bound(py);
    for (cause, n) in r.ledger.dropped_by_cause() {
        by_cause.set_item(cause, n)?;
    }
    ledger.set_item("dropped", by_cause)?;
    ledger.set_item("dropped_total", drop)?;
    ledger.set_item("in_flight", inf)?;
    // Point-to-multipoint copies: generated + replicated = delivered + dropped + in flight.
    ledger.set_item("replicated", r.ledger.replicated.iter().sum::<u64>())?;
    d.set_item("ledger", ledger)?;
    let flows = PyList::empty_bound(py);
    for f in &r.flows {
        let fd = PyDict::new_bound(py);
        fd.set_item("flow", f.flow)?;
        fd.set_item("source", &f.source)?;
        fd.set_item("vc", f.vc)?;
        fd.set_item("generated", f.generated)?;
        fd.set_item("delivered", f.delivered)?;
        fd.set_item("dropped", f.dropped)?;
        fd.set_item("in_flight", f.in_flight)?;
        fd.set_item("replicated", f.replicated)?;
        flows.append(fd)?;
    }
    d.set_item("flows", flows)?;
    let series = PyList::empty_bound(py);
    for s in &r.series {
        let sd = PyDict::new_bound(py);
        sd.set_item("component", &s.component)?;
        sd.set_item("probe", s.probe)?;
        sd.set_item("unit", s.unit)?;
        sd.set_item("kind", s.kind)?;
        sd.set_item("interval_s", s.interval_s)?;
        sd.set_item("values", s.values.clone())?;
        series.append(sd)?;
    }
    d.set_item("series", series)?;
    d.set_item("warnings", r.warnings.clone())?;
    d.set_item("trace_rows", r.trace_rows)?;
    if let Some(path) = trace_file {
        // Streamed to the file during the run; Python reads it back when asked.
        d.set_item("trace_file", path.to_string_lossy().into_owned())?;
    } else if sc.trace.is_some() {
        // Column by column (a DataFrame is built from it at once).
        let t = PyDict::new_bound(py);
        t.set_item("time_s", r.trace.iter().map(|x| x.time_s).collect::<Vec<_>>())?;
        t.set_item("event", r.trace.iter().map(|x| x.event).collect::<Vec<_>>())?;
        t.set_item("component", r.trace.iter().map(|x| x.component.as_str()).collect::<Vec<_>>())?;
        t.set_item("port", r.trace.iter().map(|x| x.port.as_str()).collect::<Vec<_>>())?;
        t.set_item("cause", r.trace.iter().map(|x| x.cause).collect::<Vec<_>>())?;
        t.set_item("unit", r.trace.iter().map(|x| x.unit).collect::<Vec<_>>())?;
        t.set_item("octets", r.trace.iter().map(|x| x.octets).collect::<Vec<_>>())?;
        t.set_item("vc", r.trace.iter().map(|x| x.vc.as_str()).collect::<Vec<_>>())?;
        t.set_item("source", r.trace.iter().map(|x| x.source.as_str()).collect::<Vec<_>>())?;
        t.set_item("seq", r.trace.iter().map(|x| x.seq).collect::<Vec<_>>())?;
        t.set_item("pdu_cell", r.trace.iter().map(|x| x.pdu_cell).collect::<Vec<_>>())?;
        t.set_item("born_s", r.trace.iter().map(|x| x.born_s).collect::<Vec<_>>())?;
        t.set_item("flags", r.trace.iter().map(|x| x.flags.as_str()).collect::<Vec<_>>())?;
        t.set_item("carries", r.trace.iter().map(|x| x.carries.as_str()).collect::<Vec<_>>())?;
        d.set_item("trace", t)?;
    }
    Ok(d)
}

#[pymethods]
impl PyScenario {
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }
    #[getter]
    fn description(&self) -> String {
        self.inner.description.clone()
    }
    #[getter]
    fn path(&self) -> String {
        self.path.clone()
    }
    #[getter]
    fn duration_s(&self) -> f64 {
        self.inner.duration.as_secs_f64()
    }
    #[getter]
    fn warmup_s(&self) -> f64 {
        self.inner.warmup.as_secs_f64()
    }
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed
    }
    #[getter]
    fn replications(&self) -> u32 {
        self.inner.replications
    }
    /// What loading found suspicious but legal, one line each (a buffer offered more
    /// than its line rate).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings.clone()
    }
    /// Whether each run keeps a cell trace (`[trace] cells = true`).
    #[getter]
    fn traced(&self) -> bool {
        self.inner.trace.is_some()
    }

    fn components<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty_bound(py);
        for c in &self.inner.components {
            let d = PyDict::new_bound(py);
            d.set_item("name", &c.name)?;
            d.set_item("kind", c.kind.kind)?;
            let p = PyDict::new_bound(py);
            for (k, v) in &c.shown {
                p.set_item(*k, v)?;
            }
            d.set_item("params", p)?;
            out.append(d)?;
        }
        Ok(out)
    }

    fn with_overrides(&self, overrides: std::collections::BTreeMap<String, String>) -> PyResult<PyScenario> {
        let list: Vec<(String, String)> = overrides.into_iter().collect();
        let sc = self.inner.with_overrides(&list).map_err(|e| to_py(CoreError::Scenario(e)))?;
        Ok(PyScenario { inner: Arc::new(sc), path: self.path.clone() })
    }

    fn to_toml(&self) -> String {
        self.inner.to_toml()
    }

    #[pyo3(signature = (seed=None, run=0, progress=None, trace_file=None))]
    fn run<'py>(&self, py: Python<'py>, seed: Option<u64>, run: u64, progress: Option<PyObject>, trace_file: Option<std::path::PathBuf>) -> PyResult<Bound<'py, PyDict>> {
        let sc = self.inner.clone();
        let seed = seed.unwrap_or(sc.seed);
        let duration_s = sc.duration.as_secs_f64();
        let mut pending: Option<PyErr> = None;
        let result = py.allow_threads(|| {
            let mut cb = |now: SimTime, _events: u64| -> bool {
                Python::with_gil(|py| {
                    if let Err(e) = py.check_signals() {
                        pending = Some(e);
                        return false;
                    }
                    if let Some(f) = &progress {
                        if let Err(e) = f.call1(py, (now.as_secs_f64(), duration_s)) {
                            pending = Some(e);
                            return false;
                        }
                    }
                    true
                })
            };
            sc.run_to(seed, run, &mut cb, trace_file.as_deref())
        });
        if let Some(e) = pending {
            return Err(e);
        }
        let r = result.map_err(|e| to_py(CoreError::Sim(e)))?;
        result_dict(py, &sc, &r, trace_file.as_deref())
    }

    fn __repr__(&self) -> String {
        format!("<atmsim Scenario {:?} from {:?}: {} components>", self.inner.name, self.path, self.inner.components.len())
    }
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// How this native module was compiled: "pgo" when tools/pgo-build.sh built it from a
/// training profile (it sets ATMSIM_BUILD_PROFILE), else "plain".
#[pyfunction]
fn build_profile() -> &'static str {
    match option_env!("ATMSIM_BUILD_PROFILE") {
        Some("pgo") => "pgo",
        _ => "plain",
    }
}

#[pyfunction]
fn load(py: Python<'_>, path: String) -> PyResult<PyScenario> {
    let p = path.clone();
    let sc = py.allow_threads(move || Scenario::load(&p)).map_err(|e| to_py(CoreError::Scenario(e)))?;
    Ok(PyScenario { inner: Arc::new(sc), path })
}

#[pyfunction]
#[pyo3(signature = (text, path="<string>".to_string()))]
fn loads(text: &str, path: String) -> PyResult<PyScenario> {
    let sc = Scenario::from_text(text, &path).map_err(|e| to_py(CoreError::Scenario(e)))?;
    Ok(PyScenario { inner: Arc::new(sc), path })
}

#[pyfunction]
fn describe_kinds<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty_bound(py);
    for k in KINDS {
        let d = PyDict::new_bound(py);
        d.set_item("kind", k.kind)?;
        d.set_item("help", k.help)?;
        d.set_item("source", k.source)?;
        out.append(d)?;
    }
    Ok(out)
}

#[pyfunction]
fn describe_kind<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let k = kind(name).ok_or_else(|| {
        let names: Vec<&str> = KINDS.iter().map(|k| k.kind).collect();
        let hint = did_you_mean(name, names.iter().copied());
        ScenarioError::new_err(format!("unknown kind '{name}'; valid: {}{hint}", names.join(", ")))
    })?;
    let d = PyDict::new_bound(py);
    d.set_item("kind", k.kind)?;
    d.set_item("help", k.help)?;
    d.set_item("source", k.source)?;
    let params = PyList::empty_bound(py);
    for p in k.params() {
        let pd = PyDict::new_bound(py);
        pd.set_item("name", p.name)?;
        pd.set_item("unit", p.ty.unit())?;
        pd.set_item("default", p.default)?;
        pd.set_item("required", p.required)?;
        pd.set_item("help", p.help)?;
        pd.set_item("source", p.source)?;
        params.append(pd)?;
    }
    d.set_item("params", params)?;
    let inputs: Vec<&str> = k.inputs.iter().map(|p| p.name).collect();
    d.set_item("inputs", inputs)?;
    let outputs: Vec<&str> = k.outputs.iter().map(|p| p.name).collect();
    d.set_item("outputs", outputs)?;
    let carries = |ps: &[atmsim_models::PortSpec]| ps.iter().map(|p| (p.name, p.carries.name())).collect::<Vec<_>>();
    d.set_item("carries", (carries(k.inputs), carries(k.outputs)))?;
    let probes = PyList::empty_bound(py);
    for p in k.probes() {
        probes.append(declared(py, p.name, p.unit, p.kind.name(), p.help)?)?;
    }
    d.set_item("probes", probes)?;
    let series = PyList::empty_bound(py);
    for g in k.series {
        for s in g.series {
            let sd = declared(py, s.name, s.unit, s.kind.name(), s.help)?;
            sd.set_item("at", g.at)?;
            series.append(sd)?;
        }
    }
    d.set_item("series", series)?;
    Ok(d)
}

/// A declared probe or series, as `describe` shows it.
fn declared<'py>(py: Python<'py>, name: &str, unit: &str, kind: &str, help: &str) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    d.set_item("name", name)?;
    d.set_item("unit", unit)?;
    d.set_item("kind", kind)?;
    d.set_item("help", help)?;
    Ok(d)
}

/// A swept value as written, as a Python object.
fn written_obj(py: Python<'_>, w: &Written) -> PyObject {
    match w {
        Written::Str(s) => s.to_object(py),
        Written::Int(i) => i.to_object(py),
        Written::Float(x) => x.to_object(py),
        Written::Bool(b) => b.to_object(py),
    }
}

/// The scenario file's `[sweep]`, read by the core (atmsim_scenario::sweep): plain
/// dicts and lists for python/atmsim/sweep.py.
#[pyfunction]
#[pyo3(signature = (text, path="<string>".to_string(), overrides=None))]
fn loads_sweep<'py>(py: Python<'py>, text: &str, path: String, overrides: Option<BTreeMap<String, String>>) -> PyResult<Bound<'py, PyDict>> {
    let overrides: Vec<(String, String)> = overrides.unwrap_or_default().into_iter().collect();
    let (sc, spec) = py.allow_threads(|| SweepSpec::load(text, &path, &overrides)).map_err(|e| to_py(CoreError::Scenario(e)))?;
    let d = PyDict::new_bound(py);
    d.set_item("name", &sc.name)?;
    d.set_item("seed", sc.seed)?;
    d.set_item("keys", spec.keys.clone())?;
    let points = PyList::empty_bound(py);
    let written = PyList::empty_bound(py);
    for (p, w) in spec.points.iter().zip(&spec.written) {
        let pd = PyDict::new_bound(py);
        for (k, v) in p {
            pd.set_item(k, v)?;
        }
        points.append(pd)?;
        let wd = PyDict::new_bound(py);
        for (k, v) in w {
            wd.set_item(k, written_obj(py, v))?;
        }
        written.append(wd)?;
    }
    d.set_item("points", points)?;
    d.set_item("written", written)?;
    d.set_item("replications", spec.replications)?;
    d.set_item("quick_replications", spec.quick_replications)?;
    let quick = PyDict::new_bound(py);
    for (k, v) in &spec.quick {
        quick.set_item(k, v)?;
    }
    d.set_item("quick_overrides", quick)?;
    let select = PyDict::new_bound(py);
    for (k, values) in &spec.quick_select {
        select.set_item(k, values.clone())?;
    }
    d.set_item("quick_select", select)?;
    d.set_item("quick_points", spec.point_indices(true))?;
    let target_dict = |t: &atmsim_scenario::sweep::Target| -> PyResult<Bound<'_, PyDict>> {
        let td = PyDict::new_bound(py);
        td.set_item("component", &t.component)?;
        td.set_item("probe", &t.probe)?;
        td.set_item("statistic", &t.statistic)?;
        td.set_item("rel_half_width", t.rel_half_width)?;
        td.set_item("max_replications", t.max_replications)?;
        td.set_item("batch", t.batch)?;
        td.set_item("line", t.line)?;
        Ok(td)
    };
    match &spec.target {
        None => d.set_item("target", py.None())?,
        Some(t) => d.set_item("target", target_dict(t)?)?,
    }
    let precision = PyList::empty_bound(py);
    for t in &spec.precision {
        precision.append(target_dict(t)?)?;
    }
    d.set_item("precision", precision)?;
    d.set_item("has_sweep_table", spec.has_table)?;
    d.set_item("line", spec.line)?;
    Ok(d)
}

/// The master seed of a sweep point (atmsim_scenario::sweep::point_seed).
#[pyfunction]
fn point_seed(scenario_seed: u64, point: BTreeMap<String, String>) -> u64 {
    atmsim_scenario::sweep::point_seed(scenario_seed, point)
}

/// The canonical JSON text of a sweep point (sorted keys, no spaces, UTF-8).
#[pyfunction]
fn canonical_point(point: BTreeMap<String, String>) -> String {
    atmsim_scenario::sweep::canonical_point(point)
}

/// FNV-1a, 64-bit (atmsim_kernel::rng::fnv1a64).
#[pyfunction]
fn fnv1a64(data: &[u8]) -> u64 {
    atmsim_kernel::rng::fnv1a64(data)
}

/// A trace file as the `trace` source reads it (`format` packets, frames or pcap;
/// `direction` both, sent or received; `vc` one VC of a SunATM capture, "VPI/VCI" or
/// "VCI"; `filter` a tcpdump-style capture filter, as the source's `capture_filter`;
/// a relative `path` from the working directory,
/// `data:NAME` a shipped trace): the times in picoseconds from the first packet kept
/// (frame numbers for frame traces) as little-endian u64s, and the lengths in octets
/// as little-endian u32s. A file that cannot be read is a `ScenarioError`, one line.
#[pyfunction]
#[pyo3(signature = (path, format, direction, vc=None, filter=None))]
fn read_trace<'py>(py: Python<'py>, path: &str, format: &str, direction: &str, vc: Option<&str>, filter: Option<&str>) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    use atmsim_models::traffic::trace::{self, Format};
    use atmsim_models::traffic::trace_pcap::{Direction, Select};
    let format = match format {
        "packets" => Format::Packets,
        "frames" => Format::Frames,
        "pcap" => Format::Pcap,
        other => return Err(ParamError::new_err(format!("format '{other}': valid: packets, frames, pcap"))),
    };
    let direction = match direction {
        "both" => Direction::Both,
        "sent" => Direction::Sent,
        "received" => Direction::Received,
        other => return Err(ParamError::new_err(format!("direction '{other}': valid: both, sent, received"))),
    };
    if direction != Direction::Both && format != Format::Pcap {
        return Err(ParamError::new_err("only a capture records who sent a packet: direction needs format pcap (or both)"));
    }
    let vc = vc.map(|v| atmsim_models::cell::parse_vc_label(v).map_err(|m| ParamError::new_err(format!("vc '{v}': {m}")))).transpose()?;
    if vc.is_some() && format != Format::Pcap {
        return Err(ParamError::new_err("only a capture records a packet's VC: vc needs format pcap"));
    }
    let filter = filter
        .map(|f| atmsim_models::traffic::capture_filter::Filter::parse(f).map_err(|m| ParamError::new_err(format!("filter '{f}': {m}"))))
        .transpose()?;
    if filter.is_some() && format != Format::Pcap {
        return Err(ParamError::new_err("only a capture holds packet headers to filter on: filter needs format pcap"));
    }
    let file = trace::resolve(path, std::path::Path::new(".")).map_err(ScenarioError::new_err)?;
    let data = py.allow_threads(|| trace::load(&file, format, Select { direction, vc, filter })).map_err(ScenarioError::new_err)?;
    let times: Vec<u8> = data.times_ps.iter().flat_map(|t| t.to_le_bytes()).collect();
    let lengths: Vec<u8> = data.lengths.iter().flat_map(|l| l.to_le_bytes()).collect();
    Ok((PyBytes::new_bound(py, &times), PyBytes::new_bound(py, &lengths)))
}

/// Seconds of a time written as in scenario files (`"10 ms"`, `"2 s"`): the core's unit
/// parser; a bad one is a `ParamError` saying what would be valid.
#[pyfunction]
fn parse_time_s(text: &str) -> PyResult<f64> {
    use atmsim_kernel::units::{parse_quantity, Dimension, Quantity};
    match parse_quantity(text, Dimension::Time) {
        Ok(Quantity::Time(s)) => Ok(s),
        Ok(_) => Err(ParamError::new_err(format!("'{text}' is not a time (e.g. \"10 ms\")"))),
        Err(m) => Err(ParamError::new_err(m)),
    }
}

/// The Hurst parameter of a series (counts per bin) by the two estimators the
/// self-similar source is tested with: aggregated variance and log-periodogram
/// regression (`atmsim_models::traffic::selfsimilar`).
#[pyfunction]
fn hurst(values: Vec<f64>) -> (f64, f64) {
    use atmsim_models::traffic::selfsimilar::{hurst_aggregated_variance, hurst_periodogram};
    (hurst_aggregated_variance(&values), hurst_periodogram(&values))
}

/// `" (did you mean 'x'?)"` for the closest candidate, else "" (the core's hint).
#[pyfunction]
#[pyo3(name = "did_you_mean")]
fn py_did_you_mean(word: &str, candidates: Vec<String>) -> String {
    did_you_mean(word, candidates.iter().map(String::as_str))
}

fn measurement<'py>(py: Python<'py>, m: atmsim_bench::Measurement) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    d.set_item("events", m.events)?;
    d.set_item("wall_s", m.wall_s)?;
    d.set_item("check", m.check)?;
    d.set_item("lost", m.lost)?;
    d.set_item("mean_wait_s", m.check)?;
    Ok(d)
}

fn bad_impl(name: &str, valid: &[&str]) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(format!("unknown implementation '{name}'; valid: {}", valid.join(", ")))
}

#[pyfunction]
fn bench_hold<'py>(py: Python<'py>, implementation: &str, pending: u64, events: u64, seed: u64) -> PyResult<Bound<'py, PyDict>> {
    if pending == 0 || events == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err("pending and events must be positive"));
    }
    let m = match implementation {
        "atmsim" => py.allow_threads(|| atmsim_bench::hold_atmsim(pending, events, seed)).map_err(SimulationError::new_err)?,
        "hand_heap" => py.allow_threads(|| atmsim_bench::hold_hand_heap(pending, events, seed)),
        other => return Err(bad_impl(other, &["atmsim", "hand_heap"])),
    };
    measurement(py, m)
}

#[pyfunction]
fn bench_cell_queue<'py>(py: Python<'py>, implementation: &str, cells: u64, load: f64, capacity: u64, seed: u64) -> PyResult<Bound<'py, PyDict>> {
    if cells == 0 || capacity == 0 || !(load > 0.0 && load < 10.0) {
        return Err(pyo3::exceptions::PyValueError::new_err("cells and capacity must be positive, load in (0, 10)"));
    }
    let m = match implementation {
        "atmsim" => py.allow_threads(|| atmsim_bench::cell_queue_atmsim(cells, load, capacity, seed)).map_err(SimulationError::new_err)?,
        "hand_heap" => py.allow_threads(|| atmsim_bench::cell_queue_hand_heap(cells, load, capacity, seed)).map_err(SimulationError::new_err)?,
        "lindley" => py.allow_threads(|| atmsim_bench::cell_queue_lindley(cells, load, capacity, seed)).map_err(SimulationError::new_err)?,
        other => return Err(bad_impl(other, &["atmsim", "hand_heap", "lindley"])),
    };
    measurement(py, m)
}

/// The mux workload (issue 14) for `seconds` simulated seconds: cells switched, wall
/// time, and the FIFO's loss count.
#[pyfunction]
fn bench_mux<'py>(py: Python<'py>, implementation: &str, seconds: f64, seed: u64) -> PyResult<Bound<'py, PyDict>> {
    if !(seconds > 0.0 && seconds <= 1e4) {
        return Err(pyo3::exceptions::PyValueError::new_err("seconds must be in (0, 10000]"));
    }
    let r = match implementation {
        "atmsim" => py.allow_threads(|| atmsim_bench::mux::mux_atmsim(seconds, seed)),
        "hand_heap" => py.allow_threads(|| atmsim_bench::mux::mux_hand_heap(seconds, seed)),
        other => return Err(bad_impl(other, &["atmsim", "hand_heap"])),
    }
    .map_err(SimulationError::new_err)?;
    let d = PyDict::new_bound(py);
    d.set_item("events", r.cells)?;
    d.set_item("cells", r.cells)?;
    d.set_item("wall_s", r.wall_s)?;
    d.set_item("lost", r.stats.lost)?;
    Ok(d)
}

#[pymodule]
fn _atmsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("AtmsimError", py.get_type_bound::<AtmsimError>())?;
    m.add("ScenarioError", py.get_type_bound::<ScenarioError>())?;
    m.add("ParamError", py.get_type_bound::<ParamError>())?;
    m.add("SimulationError", py.get_type_bound::<SimulationError>())?;
    m.add_class::<PyScenario>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build_profile, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(loads, m)?)?;
    m.add_function(wrap_pyfunction!(describe_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(describe_kind, m)?)?;
    m.add_function(wrap_pyfunction!(loads_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(bench_mux, m)?)?;
    m.add_function(wrap_pyfunction!(point_seed, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_point, m)?)?;
    m.add_function(wrap_pyfunction!(fnv1a64, m)?)?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(hurst, m)?)?;
    m.add_function(wrap_pyfunction!(parse_time_s, m)?)?;
    m.add_function(wrap_pyfunction!(py_did_you_mean, m)?)?;
    m.add("SWEEP_SEED_DOMAIN", atmsim_scenario::sweep::SEED_DOMAIN)?;
    m.add("SWEEP_SEED_MASK", atmsim_scenario::sweep::SEED_MASK)?;
    m.add("SWEEP_KEYS", pyo3::types::PyTuple::new_bound(py, atmsim_scenario::sweep::SWEEP_KEYS))?;
    m.add("SWEEP_TARGET_KEYS", pyo3::types::PyTuple::new_bound(py, atmsim_scenario::sweep::TARGET_KEYS))?;
    m.add("SWEEP_RANGE_KEYS", pyo3::types::PyTuple::new_bound(py, atmsim_scenario::sweep::RANGE_KEYS))?;
    m.add("SWEEP_MAX_RANGE_POINTS", atmsim_scenario::sweep::MAX_RANGE_POINTS)?;
    m.add("SWEEP_MAX_REPLICATIONS", atmsim_scenario::sweep::MAX_REPLICATIONS)?;
    m.add("SWEEP_DEFAULT_QUICK_REPLICATIONS", atmsim_scenario::sweep::DEFAULT_QUICK_REPLICATIONS)?;
    m.add_function(wrap_pyfunction!(bench_hold, m)?)?;
    m.add_function(wrap_pyfunction!(bench_cell_queue, m)?)?;
    Ok(())
}
