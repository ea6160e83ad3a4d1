//! The switch's VC table and its per-port settings (`port_phy`, `port_length`, `abr`),
//! parsed from their entries.

use atmsim_kernel::Rate;

use crate::cell::{parse_vc_label, vc_name};
use crate::control::abr::port::{Which, NAMES as ABR_NAMES};
use crate::link::transmitter::PHY_NAMES;

/// One parsed table entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VcEntry {
    pub in_port: u16,
    pub in_vc: u32,
    pub outs: Vec<(u16, u32)>,
}

pub(super) fn parse_endpoint(s: &str, ports: usize) -> Result<(u16, u32), String> {
    let s = s.trim();
    let (p, v) = s.split_once(':').ok_or_else(|| format!("'{s}' is not pPORT:VPI/VCI"))?;
    let port: usize = p.trim().strip_prefix('p').and_then(|x| x.parse().ok()).ok_or_else(|| format!("'{p}' is not a port name like p4"))?;
    if port == 0 || port > ports {
        return Err(format!("port p{port} does not exist (ports are p1 … p{ports})"));
    }
    let label = parse_vc_label(v)?;
    Ok(((port - 1) as u16, label))
}

/// Splits a per-port setting `pN = VALUE` into the port's index and the value.
pub(super) fn parse_port_setting<'a>(entry: &'a str, ports: usize, what: &str) -> Result<(usize, &'a str), String> {
    let (p, v) = entry.split_once('=').ok_or_else(|| format!("'{entry}' is not \"pN = {what}\""))?;
    let port: usize = p.trim().strip_prefix('p').and_then(|x| x.parse().ok()).ok_or_else(|| format!("'{}' is not a port name like p2", p.trim()))?;
    if port == 0 || port > ports {
        return Err(format!("port p{port} does not exist (ports are p1 … p{ports})"));
    }
    Ok((port - 1, v.trim()))
}

/// Parses `pN = PRESET` or `pN = RATE`.
pub(super) fn parse_port_rate(entry: &str, ports: usize) -> Result<(usize, Rate), String> {
    let (port, v) = parse_port_setting(entry, ports, "PRESET or RATE")?;
    let port = port + 1;
    if let Some(r) = crate::link::transmitter::phy_rate(v) {
        return Ok((port - 1, r));
    }
    match atmsim_kernel::units::parse_quantity(v, atmsim_kernel::units::Dimension::Rate) {
        Ok(atmsim_kernel::units::Quantity::Rate(bps)) => Rate::from_bps(bps).map(|r| (port - 1, r)).ok_or_else(|| format!("'{v}' must be a positive rate")),
        _ => Err(format!("'{v}' is neither a preset ({}) nor a rate", PHY_NAMES.join(", "))),
    }
}

/// Parses `pN = LENGTH` (metres).
pub(super) fn parse_port_length(entry: &str, ports: usize) -> Result<(usize, f64), String> {
    let (port, v) = parse_port_setting(entry, ports, "LENGTH")?;
    match atmsim_kernel::units::parse_quantity(v, atmsim_kernel::units::Dimension::Length) {
        Ok(atmsim_kernel::units::Quantity::Length(m)) if m >= 0.0 => Ok((port, m)),
        Ok(_) => Err(format!("'{v}': a length must be zero or positive")),
        Err(e) => Err(e),
    }
}

/// Parses `pN = efci | eprca | erica | erica+`.
pub(super) fn parse_port_abr(entry: &str, ports: usize) -> Result<(usize, Which), String> {
    let (port, v) = parse_port_setting(entry, ports, "efci, eprca, erica or erica+")?;
    let v = v.trim_matches('"');
    ABR_NAMES.iter().find(|n| n.0 == v).map(|n| (port, n.1)).ok_or_else(|| format!("'{v}' is not an ABR algorithm (efci, eprca, erica or erica+)"))
}

/// Parses the translation table.
pub fn parse_table(lines: &[String], ports: usize) -> Result<Vec<VcEntry>, String> {
    let mut out: Vec<VcEntry> = Vec::new();
    let mut seen: std::collections::HashSet<(u16, u32)> = std::collections::HashSet::new();
    for (i, line) in lines.iter().enumerate() {
        let at = |m: String| format!("entry {} '{line}': {m}", i + 1);
        let (a, b) = line.split_once("->").ok_or_else(|| at("expected \"pIN:VPI/VCI -> pOUT:VPI/VCI[, ...]\"".into()))?;
        let (in_port, in_vc) = parse_endpoint(a, ports).map_err(at)?;
        let mut outs = Vec::new();
        for o in b.split(',') {
            let e = parse_endpoint(o, ports).map_err(at)?;
            if outs.iter().any(|x: &(u16, u32)| x.0 == e.0) {
                return Err(at(format!("two branches to p{}", e.0 + 1)));
            }
            outs.push(e);
        }
        if !seen.insert((in_port, in_vc)) {
            return Err(at(format!("p{}:{} already has an entry", in_port + 1, vc_name(in_vc))));
        }
        out.push(VcEntry { in_port, in_vc, outs });
    }
    Ok(out)
}
