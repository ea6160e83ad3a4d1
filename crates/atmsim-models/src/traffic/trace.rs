//! Trace-driven cell source: replays a real trace as AAL5 PDUs.
//!
//! Three trace formats (SPEC section 3, "trace-driven ... including real packet
//! captures"):
//!
//! - `packets`: one packet per line, `TIME LENGTH` — arrival time in seconds and length
//!   in octets, as in the Bellcore Ethernet traces (Leland & Wilson 1989, the trace
//!   behind Leland et al., SIGCOMM 1993, which evans96 feeds to its adaptive shaper);
//! - `frames`: one frame size in octets per line, frames at `frame_rate` — as in the
//!   MPEG-1 *Star Wars* trace (Garrett & Willinger, SIGCOMM 1994: 24 frames/s);
//! - `pcap`: a libpcap or pcapng capture, each packet's time stamp and the length of
//!   the datagram its link layer carries ([`super::trace_pcap`]), optionally only the
//!   packets a host sent or received (`direction`).
//!
//! Each packet or frame of `L` octets becomes one AAL5 PDU of `ceil((L + overhead)/48)`
//! cells (`overhead` 16 octets by default: RFC 1483 LLC/SNAP 8 + AAL5 trailer 8), whose
//! last cell carries the end-of-PDU mark. With `spacing = "peak"` a PDU's cells leave
//! back to back at the `peak` cell rate (a host adapter: OC-3c by default), starting at
//! the packet's time, or after the previous PDU's cells if those are still leaving; with
//! `spacing = "even"` (frames only) a frame's cells are spread evenly over its frame
//! interval (cell j of frame k at `k·Δ + floor(j·Δ / n)`). The trace's first time is the
//! source's `start`; `time_scale` multiplies trace times (0.5 plays it twice as fast);
//! with `loop` the trace repeats (packets: after its span plus one mean gap), else the
//! source falls silent at its end. Relative file names are resolved against the
//! scenario file's directory; `data:NAME` names a trace shipped with atmsim (see
//! [`resolve`]), so a scenario finds it wherever it is copied; a file is read and
//! checked once per process.

use crate::kind::{BuildInfo, Cx};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Rate, SimDuration, SimTime, PS_PER_S};

use super::capture_filter::Filter;
use super::trace_pcap::{self, Direction, Select, TraceData};
use super::{Source, SourceCore, SourceParams};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};

pub const FORMATS: [&str; 3] = ["packets", "frames", "pcap"];
pub const SPACINGS: [&str; 2] = ["peak", "even"];

pub const PARAMS: [ParamSpec; 11] = [
    ParamSpec { name: "file", ty: ParamType::Text, default: None, required: true, help: "the trace file: a path relative to the scenario file's directory, or data:NAME for a trace shipped with atmsim (data:BC-pAug89-small.TL, data:starwars.frames.old)", source: "required" },
    ParamSpec { name: "format", ty: ParamType::Choice(&FORMATS), default: Some("packets"), required: false, help: "packets: 'TIME LENGTH' per line (s, octets); frames: octets per line at frame_rate; pcap: a libpcap or pcapng capture (time stamps, datagram lengths without the link-layer header)", source: "Bellcore .TL traces; Garrett & Willinger frame-size traces; tcpdump/Wireshark captures" },
    ParamSpec { name: "direction", ty: ParamType::Choice(&super::trace_pcap::DIRECTIONS), default: Some("both"), required: false, help: "format = pcap: keep every packet, or only those the capturing host sent or received (SunATM and Linux cooked captures record it)", source: "atmsim convention: a capture's whole content" },
    ParamSpec { name: "capture_vc", ty: ParamType::Text, default: None, required: false, help: "format = pcap, SunATM captures: keep only this VC's packets, \"VPI/VCI\" or \"VCI\" (default: every VC)", source: "atmsim convention: a capture's whole content" },
    ParamSpec { name: "capture_filter", ty: ParamType::Text, default: None, required: false, help: "format = pcap: keep only the packets this tcpdump-style filter passes, e.g. \"tcp port 5001 and src host 10.0.0.1\" ([src|dst] host/net/port/portrange, ip, ip6, tcp, udp, icmp, proto N; not, and, or, parentheses; docs/models/traffic.md)", source: "atmsim convention: a capture's whole content; the primitives of tcpdump's pcap-filter language" },
    ParamSpec { name: "frame_rate", ty: ParamType::Float { min: 1e-3, max: 1e6 }, default: Some("24"), required: false, help: "frames per second (format = frames)", source: "Star Wars MPEG-1 trace: 24 frames/s (Garrett & Willinger 1994)" },
    ParamSpec { name: "peak", ty: ParamType::Rate, default: Some("149.76 Mb/s"), required: false, help: "cell rate a PDU's cells leave at (spacing = peak)", source: "OC-3c cell rate (an OC-3c adapter)" },
    ParamSpec { name: "spacing", ty: ParamType::Choice(&SPACINGS), default: Some("peak"), required: false, help: "peak: each PDU's cells back to back at peak; even: a frame's cells spread over its frame interval (frames only)", source: "atmsim convention" },
    ParamSpec { name: "overhead", ty: ParamType::Int { min: 0, max: 65_535 }, default: Some("16"), required: false, help: "octets added to each packet or frame before AAL5 segmentation", source: "RFC 1483 LLC/SNAP (8) + AAL5 trailer (8)" },
    ParamSpec { name: "time_scale", ty: ParamType::Float { min: 1e-6, max: 1e6 }, default: Some("1"), required: false, help: "multiplies the trace's times (0.5: twice as fast)", source: "1: the trace as recorded" },
    ParamSpec { name: "loop", ty: ParamType::Bool, default: Some("false"), required: false, help: "repeat the trace when it ends (else the source stops)", source: "atmsim convention" },
];

pub const PROBES: [ProbeSpec; 1] = [ProbeSpec { name: "trace_pdus", unit: "1", kind: ProbeKind::Counter, help: "packets or frames started after warm-up (count)" }];

/// A trace read once per process: by path, format and direction, and by the file's
/// length and modification time, so that a file written again (a capture re-made in
/// the same notebook) is read again.
type CacheKey = (PathBuf, Format, Select, Option<(u64, std::time::SystemTime)>);

fn cache() -> &'static Mutex<HashMap<CacheKey, Arc<TraceData>>> {
    static CACHE: OnceLock<Mutex<HashMap<CacheKey, Arc<TraceData>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Prefix of a trace shipped with atmsim: `file = "data:BC-pAug89-small.TL"`.
pub const DATA_PREFIX: &str = "data:";

/// The directory of the shipped traces: `$ATMSIM_DATA_DIR` when set, else the
/// repository's `scenarios/data/` this build was compiled from.
pub fn data_dir() -> PathBuf {
    match std::env::var_os("ATMSIM_DATA_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/data"),
    }
}

/// Where the trace `file` is: `data:NAME` → `NAME` in [`data_dir`] (a plain file
/// name; an unknown one lists the shipped names); anything else relative to `dir`
/// (the scenario file's directory).
pub fn resolve(file: &str, dir: &Path) -> Result<PathBuf, String> {
    let Some(name) = file.strip_prefix(DATA_PREFIX) else { return Ok(dir.join(file)) };
    let data = data_dir();
    let mut names: Vec<String> = std::fs::read_dir(&data)
        .map(|it| it.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "README.md" && !n.starts_with('.')).collect())
        .unwrap_or_default();
    names.sort();
    let plain = !name.is_empty() && !name.contains(['/', '\\']) && name != "." && name != "..";
    if plain && names.iter().any(|n| n == name) {
        return Ok(data.join(name));
    }
    let valid = if names.is_empty() {
        format!("no shipped traces found in '{}' (set ATMSIM_DATA_DIR to the directory holding them)", data.display())
    } else {
        format!("valid: {}", names.iter().map(|n| format!("{DATA_PREFIX}{n}")).collect::<Vec<_>>().join(", "))
    };
    Err(format!("'{file}': no shipped trace of that name; {valid}; or give a path relative to the scenario file"))
}

/// Reads and checks a trace (once per process and version of the file, format and
/// direction).
pub fn load(path: &Path, format: Format, select: Select) -> Result<Arc<TraceData>, String> {
    let version = std::fs::metadata(path).ok().and_then(|m| Some((m.len(), m.modified().ok()?)));
    let key = (path.to_path_buf(), format, select.clone(), version);
    if let Some(t) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(t.clone());
    }
    let cannot = |e: std::io::Error| format!("cannot read trace '{}': {e}", path.display());
    let t = if format == Format::Pcap {
        let file = std::fs::File::open(path).map_err(cannot)?;
        trace_pcap::read(file, select).map_err(|m| format!("{}: {}", path.display(), m.trim_start()))?
    } else {
        let text = std::fs::read_to_string(path).map_err(|e| {
            let mut head = [0u8; 4];
            let capture = std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head)).is_ok()
                && trace_pcap::is_capture(&head);
            if capture {
                format!("'{}' is a packet capture: read it with format = \"pcap\"", path.display())
            } else {
                cannot(e)
            }
        })?;
        parse(&text, format.name()).map_err(|m| format!("{}:{m}", path.display()))?
    };
    let t = Arc::new(t);
    cache().lock().unwrap_or_else(|e| e.into_inner()).insert(key, t.clone());
    Ok(t)
}

/// Parses trace text; errors are `LINE: message`. Blank lines and `#` comments are
/// skipped. Frame traces get times `k` (frame numbers) — scaled by the model.
pub fn parse(text: &str, format: &str) -> Result<TraceData, String> {
    let (mut times_ps, mut lengths) = (Vec::new(), Vec::new());
    let mut first: Option<f64> = None;
    let mut last = f64::NEG_INFINITY;
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let n = i + 1;
        let fields: Vec<&str> = l.split_whitespace().collect();
        let octets = |s: &str| s.parse::<u32>().map_err(|_| format!("{n}: '{s}' is not a length in octets (a whole number)"));
        if format == "frames" {
            let [len] = fields[..] else {
                return Err(format!("{n}: expected one frame size in octets per line, got '{l}'"));
            };
            times_ps.push(lengths.len() as u64);
            lengths.push(octets(len)?);
        } else {
            let [t, len] = fields[..] else {
                return Err(format!("{n}: expected 'TIME LENGTH' (seconds, octets), got '{l}'"));
            };
            let secs: f64 = t.parse().ok().filter(|x: &f64| x.is_finite() && *x >= 0.0).ok_or_else(|| format!("{n}: '{t}' is not a time in seconds"))?;
            if secs < last {
                return Err(format!("{n}: time {secs} s is earlier than the line before"));
            }
            last = secs;
            let t0 = *first.get_or_insert(secs);
            times_ps.push(((secs - t0) * PS_PER_S as f64).round() as u64);
            lengths.push(octets(len)?);
        }
    }
    if lengths.is_empty() {
        return Err(" the trace has no packets or frames".into());
    }
    Ok(TraceData { times_ps, lengths })
}

/// A trace file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Packets,
    Frames,
    Pcap,
}

impl Format {
    /// Its name in scenarios (one of [`FORMATS`]).
    pub fn name(self) -> &'static str {
        match self {
            Format::Packets => "packets",
            Format::Frames => "frames",
            Format::Pcap => "pcap",
        }
    }
}

/// How a PDU's cells are spaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spacing {
    Peak,
    Even,
}

/// The `trace` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceParams {
    /// As given (relative to the scenario file's directory).
    pub file: String,
    pub format: Format,
    /// Which packets of a capture to keep.
    pub direction: Direction,
    /// Only this VC's packets of a SunATM capture (a VC label).
    pub capture_vc: Option<u32>,
    /// Only the packets this filter passes.
    pub capture_filter: Option<Filter>,
    /// Frames per second.
    pub frame_rate: f64,
    pub peak: Rate,
    pub spacing: Spacing,
    /// Octets added per packet or frame.
    pub overhead: u32,
    pub time_scale: f64,
    pub looped: bool,
    pub source: SourceParams,
}

impl TraceParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(TraceParams {
            file: p.need("file", Params::word)?.to_string(),
            format: p.need_choice("format", &[("packets", Format::Packets), ("frames", Format::Frames), ("pcap", Format::Pcap)])?,
            direction: p.need_choice("direction", &[("both", Direction::Both), ("sent", Direction::Sent), ("received", Direction::Received)])?,
            capture_vc: p
                .opt("capture_vc", Params::word)?
                .map(|v| crate::cell::parse_vc_label(v).map_err(|m| ParamIssue::new("capture_vc", m)))
                .transpose()?,
            capture_filter: p
                .opt("capture_filter", Params::word)?
                .map(|f| Filter::parse(f).map_err(|m| ParamIssue::new("capture_filter", m)))
                .transpose()?,
            frame_rate: p.need("frame_rate", Params::float)?,
            peak: p.need("peak", Params::rate)?,
            spacing: p.need_choice("spacing", &[("peak", Spacing::Peak), ("even", Spacing::Even)])?,
            overhead: p.need("overhead", Params::int)? as u32,
            time_scale: p.need("time_scale", Params::float)?,
            looped: p.need("loop", Params::bool)?,
            source: SourceParams::bind(p)?,
        })
    }

    /// The checks that need no trace (whether the trace can loop is checked when it is
    /// read, by [`TraceSource::new`]).
    pub fn validate(&self) -> Result<(), ParamIssue> {
        if self.spacing == Spacing::Even && self.format != Format::Frames {
            return Err(ParamIssue::new("spacing", "even spacing spreads a frame over its frame interval: it needs format = \"frames\""));
        }
        if self.capture_filter.is_some() && self.format != Format::Pcap {
            return Err(ParamIssue::new("capture_filter", "only a capture holds packet headers to filter on: capture_filter needs format = \"pcap\""));
        }
        if self.capture_vc.is_some() && self.format != Format::Pcap {
            return Err(ParamIssue::new("capture_vc", "only a capture records a packet's VC: capture_vc needs format = \"pcap\""));
        }
        if self.direction != Direction::Both && self.format != Format::Pcap {
            return Err(ParamIssue::new("direction", "only a capture records who sent a packet: direction needs format = \"pcap\" (or direction = \"both\")"));
        }
        self.source.validate()
    }
}

#[derive(Clone, Debug)]
pub struct TraceSource {
    core: SourceCore,
    data: Arc<TraceData>,
    frames: bool,
    /// Frame interval (frames), ps.
    frame_ps: f64,
    even: bool,
    peak: Rate,
    overhead: u32,
    time_scale: f64,
    looped: bool,
    /// One pass of the trace, ps (for loops).
    span_ps: u64,
    /// Passes completed.
    pass: u64,
    /// The PDU being sent (index into the trace), its cells and the next cell.
    pdu: usize,
    pdu_cells: u32,
    cell: u32,
    pdu_no: u32,
    /// The current back-to-back train (spacing = peak): its start and cells so far.
    train_t0: SimTime,
    train_k: u64,
    pdus: u64,
}

impl TraceSource {
    /// Reads the trace (relative to `dir`) and checks it against the parameters.
    pub fn new(params: TraceParams, flow: u32, dir: &Path) -> Result<Self, ParamIssue> {
        let path = resolve(&params.file, dir).map_err(|m| ParamIssue::new("file", m))?;
        let data = load(&path, params.format, Select { direction: params.direction, vc: params.capture_vc, filter: params.capture_filter.clone() }).map_err(|m| ParamIssue::new("file", m))?;
        let frames = params.format == Format::Frames;
        let time_scale = params.time_scale;
        let frame_ps = PS_PER_S as f64 / params.frame_rate * time_scale;
        let n = data.lengths.len() as u64;
        let span_ps = if frames {
            (n as f64 * frame_ps).round() as u64
        } else {
            let last = *data.times_ps.last().unwrap_or(&0);
            // one pass plus one mean gap, so that the next pass does not start on the last packet
            ((last as f64 + last as f64 / (n.max(2) - 1) as f64) * time_scale).round() as u64
        };
        if params.looped && span_ps == 0 {
            return Err(ParamIssue::new("loop", "the trace spans no time: it cannot loop"));
        }
        Ok(TraceSource {
            core: SourceCore::new(&params.source, flow),
            data,
            frames,
            frame_ps,
            even: params.spacing == Spacing::Even,
            peak: params.peak,
            overhead: params.overhead,
            time_scale,
            looped: params.looped,
            span_ps,
            pass: 0,
            pdu: 0,
            pdu_cells: 0,
            cell: 0,
            pdu_no: 0,
            train_t0: SimTime::ZERO,
            train_k: 0,
            pdus: 0,
        })
    }

    /// When trace entry `i` of the current pass starts.
    fn time_of(&self, i: usize) -> SimTime {
        let within = if self.frames { i as f64 * self.frame_ps } else { self.data.times_ps[i] as f64 * self.time_scale };
        self.core.start.plus(SimDuration(self.pass.saturating_mul(self.span_ps).saturating_add(within.round() as u64)))
    }

    fn cells_of(&self, i: usize) -> u32 {
        let l = self.data.lengths[i];
        if self.frames && l == 0 {
            0
        } else {
            // In u64: a trace line may hold any 32-bit length.
            (u64::from(l) + u64::from(self.overhead)).div_ceil(48).min(u64::from(u32::MAX)) as u32
        }
    }

    /// Moves to the next PDU with cells (wrapping if looping); false at the end.
    fn next_pdu(&mut self) -> bool {
        loop {
            self.pdu += 1;
            if self.pdu >= self.data.lengths.len() {
                if !self.looped {
                    return false;
                }
                self.pdu = 0;
                self.pass += 1;
            }
            if self.cells_of(self.pdu) > 0 {
                return true;
            }
        }
    }

    /// Schedules the current PDU's first cell, no earlier than `free` (the end of the
    /// previous train).
    fn begin_pdu(&mut self, free: SimTime, ctx: &mut Cx<'_>) {
        self.pdu_cells = self.cells_of(self.pdu);
        self.cell = 0;
        let at = self.time_of(self.pdu);
        let t = if self.even {
            at
        } else {
            if at >= free {
                self.train_t0 = at;
                self.train_k = 0;
            }
            self.train_t0.plus(self.peak.cell_train_offset(self.train_k))
        };
        if t < self.core.stop {
            ctx.schedule_at(t, 0);
        }
    }



}

impl Source for TraceSource {
    fn core(&self) -> &SourceCore {
        &self.core
    }
    fn core_mut(&mut self) -> &mut SourceCore {
        &mut self.core
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.core.reset_stats(now);
        self.pdus = 0;
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        self.core.report(now, path, out);
        out.push(path, "trace_pdus", "count", self.pdus as f64, "1");
    }
}


impl crate::kind::Kind for TraceSource {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let params = TraceParams::bind(p)?;
        params.validate()?;
        TraceSource::new(params, b.flow, b.dir)
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        self.pdu = 0;
        if self.cells_of(0) == 0 && !self.next_pdu() {
            return;
        }
        self.begin_pdu(SimTime::ZERO, ctx);
    }
    fn on_timer(&mut self, _tag: u32, ctx: &mut Cx<'_>) {
        if self.cell == 0 {
            self.pdus += 1;
        }
        let last = self.cell + 1 == self.pdu_cells;
        let index = self.cell.min(u16::MAX as u32) as u16;
        self.core.emit_pdu_cell(ctx, self.pdu_no, index, last, self.pdu_cells.min(u16::MAX as u32) as u16);
        self.cell += 1;
        self.train_k += 1;
        if !last {
            let t = if self.even {
                let at = self.time_of(self.pdu);
                at.plus(SimDuration((self.cell as f64 * self.frame_ps / self.pdu_cells as f64) as u64))
            } else {
                self.train_t0.plus(self.peak.cell_train_offset(self.train_k))
            };
            if t < self.core.stop {
                ctx.schedule_at(t, 0);
            }
            return;
        }
        self.pdu_no = self.pdu_no.wrapping_add(1);
        if self.next_pdu() {
            let free = self.train_t0.plus(self.peak.cell_train_offset(self.train_k));
            self.begin_pdu(free, ctx);
        }
    }
    crate::traffic::source_kind!();
}

/// A trace's rate is in its file, not its parameters: it takes no part in the load-time
/// check of offered load.
fn offered(_: &Params) -> Option<f64> {
    None
}

/// The `trace` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::traffic::source_info(
    "trace",
    "trace-driven source: a packet trace (time, length), a frame-size trace or a packet capture (libpcap, pcapng) replayed as AAL5 PDUs, cells at a peak rate or spread over each frame",
    "SPEC section 3; Bellcore Ethernet traces (Leland & Wilson 1989), MPEG-1 Star Wars (Garrett & Willinger 1994); libpcap and pcapng files (tcpdump, Wireshark)",
    &[&crate::traffic::trace::PARAMS, &crate::traffic::COMMON_PARAMS, &crate::traffic::CLP_PARAMS],
    &[&crate::traffic::SOURCE_PROBES, &crate::traffic::trace::PROBES],
    offered,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_names_resolve_to_the_shipped_traces_and_paths_to_the_scenario_dir() {
        let p = resolve("data:BC-pAug89-small.TL", Path::new("/nowhere")).unwrap();
        assert!(p.is_file(), "{}", p.display());
        assert_eq!(p.file_name().unwrap(), "BC-pAug89-small.TL");
        assert_eq!(resolve("../data/x.TL", Path::new("/a/b")).unwrap(), Path::new("/a/b/../data/x.TL"));
        for bad in ["data:nope.TL", "data:../data/BC-pAug89-small.TL", "data:", "data:README.md"] {
            let e = resolve(bad, Path::new(".")).unwrap_err();
            assert!(e.contains("no shipped trace of that name") && e.contains("data:BC-pAug89-small.TL, data:starwars.frames.old"), "{e}");
        }
    }

    #[test]
    fn packet_traces_parse_relative_to_the_first_time() {
        let t = parse("  0.5  100\n# comment\n\n  0.75 64 \n", "packets").unwrap();
        assert_eq!(t.times_ps, vec![0, 250_000_000_000]);
        assert_eq!(t.lengths, vec![100, 64]);
    }

    #[test]
    fn bad_lines_name_their_number() {
        assert_eq!(parse("1.0 10\n0.5 10\n", "packets").unwrap_err(), "2: time 0.5 s is earlier than the line before");
        assert!(parse("1.0\n", "packets").unwrap_err().starts_with("1: expected 'TIME LENGTH'"));
        assert!(parse("1.0 ten\n", "packets").unwrap_err().contains("not a length"));
        assert!(parse("-1 10\n", "packets").unwrap_err().contains("not a time"));
        assert!(parse("12 13\n", "frames").unwrap_err().starts_with("1: expected one frame size"));
        assert!(parse("# nothing\n", "frames").unwrap_err().contains("no packets or frames"));
    }
}
