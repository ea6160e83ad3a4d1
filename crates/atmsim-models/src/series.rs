//! The quantities each kind can sample as a time series (see `atmsim_kernel::series`).
//!
//! A scenario names a series `COMPONENT[/SUB].NAME`, where SUB picks a part of the
//! component the same way probe rows do (`sw/p3` for a switch's output port 3,
//! `h1/tcp/vc100` for a TCP connection, `h1/nic`, `sink/vc42`). Kinds declare what
//! they offer in [`KindSeries`] groups, which `atmsim describe` prints; an instance
//! resolves a concrete name to an index with [`Model::series_index`] and answers
//! [`Model::sample`] with it.
//!
//! Indexes are `element << 8 | quantity`: the quantity's place in its group, and which
//! port, VC or connection (0 = the component as a whole).

use atmsim_kernel::series::SeriesKind;

use crate::cell::vc_name;

/// One sampled quantity.
#[derive(Clone, Copy, Debug)]
pub struct SeriesDecl {
    pub name: &'static str,
    /// Unit of the series values (after `scale`).
    pub unit: &'static str,
    pub kind: SeriesKind,
    /// Multiplies the sampled quantity (e.g. cells → Mb: 424e-6).
    pub scale: f64,
    pub help: &'static str,
}

/// The quantities a kind offers at one sub-path (`""`: the component itself; patterns
/// such as `p<N>` or `tcp/vc<N>` name parts).
#[derive(Clone, Copy, Debug)]
pub struct KindSeries {
    pub at: &'static str,
    pub series: &'static [SeriesDecl],
}

/// Cells → megabits at 424 bits per cell.
pub const MB_PER_CELL: f64 = 424e-6;

/// The place of `name` in `decls`.
pub fn find(decls: &[SeriesDecl], name: &str) -> Option<u64> {
    decls.iter().position(|d| d.name == name).map(|i| i as u64)
}

/// `element << 8 | quantity`.
pub fn code(element: u64, quantity: u64) -> u64 {
    (element << 8) | quantity
}

/// `(element, quantity)` of an index.
pub fn split(index: u64) -> (u64, usize) {
    (index >> 8, (index & 0xff) as usize)
}

/// The VC label of a probe-style VC name (`vc42`, `vc1.42`).
pub fn parse_vc_name(text: &str) -> Option<u32> {
    let rest = text.strip_prefix("vc")?;
    let (vpi, vci) = match rest.split_once('.') {
        Some((a, b)) => (a.parse::<u16>().ok()?, b.parse::<u16>().ok()?),
        None => (0, rest.parse::<u16>().ok()?),
    };
    let label = crate::cell::vc_label(vpi, vci);
    (vc_name(label) == text).then_some(label)
}

/// The number N of a `p<N>` port name (1-based), if within `1..=ports`.
pub fn parse_port(text: &str, ports: usize) -> Option<usize> {
    let n: usize = text.strip_prefix('p')?.parse().ok()?;
    (1..=ports).contains(&n).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vc_names_round_trip_and_reject_other_spellings() {
        assert_eq!(parse_vc_name("vc42"), Some(42));
        assert_eq!(parse_vc_name("vc1.42"), Some((1 << 16) | 42));
        assert_eq!(parse_vc_name("vc0.42"), None); // probes write vc42 for VPI 0
        assert_eq!(parse_vc_name("42"), None);
        assert_eq!(parse_vc_name("vc"), None);
    }

    #[test]
    fn ports_are_one_based_and_bounded() {
        assert_eq!(parse_port("p1", 4), Some(1));
        assert_eq!(parse_port("p4", 4), Some(4));
        assert_eq!(parse_port("p0", 4), None);
        assert_eq!(parse_port("p5", 4), None);
        assert_eq!(parse_port("port1", 4), None);
    }

    #[test]
    fn codes_split_back() {
        assert_eq!(split(code(7, 3)), (7, 3));
        assert_eq!(split(code(0, 0)), (0, 0));
    }
}
