//! Physical layers: the presets' cell rates, a line's rate as a scenario gives it
//! (`phy` or `rate`), and the SONET grid of a framed line.

use atmsim_kernel::Rate;

use crate::link::sonet::SonetGrid;
use crate::params::{ParamIssue, Params};

/// Physical-layer presets: (name, bit rate available to cells, line rate, source).
pub const PHY_PRESETS: [(&str, f64, f64, &str); 5] = [
    ("OC-3c", 149.76e6, 155.52e6, "SONET STS-3c SPE payload: 149.76 of 155.52 Mb/s (ITU-T I.432)"),
    ("OC-12c", 599.04e6, 622.08e6, "SONET STS-12c SPE payload: 599.04 of 622.08 Mb/s (ITU-T I.432)"),
    ("DS-3", 40.704e6, 44.736e6, "DS-3 PLCP: 12 cells per 125 µs = 96,000 cells/s = 40.704 Mb/s (ATM Forum UNI 3.1)"),
    ("TAXI-100", 100e6 * 53.0 / 54.0, 125e6, "TAXI 4B/5B: 100 Mb/s of 4B/5B data on 125 Mbaud, each 53-octet cell after a one-octet start-of-cell command: 98.15 Mb/s of cells (ATM Forum UNI 3.1; lazarou96 Table 2: 98 Mb/s)"),
    ("OC-3c-x4", 599.04e6, 622.08e6, "four OC-3c tributaries in an OC-12 (4 × 149.76 Mb/s)"),
];

/// The line rate given by `phy` or `rate` (never both); `default` is the preset used
/// when neither is given (None: one of them is required).
pub fn line_rate(p: &Params, default: Option<&str>) -> Result<Rate, ParamIssue> {
    LineRateParams::bind(p)?.rate(default)
}

/// A line rate given by `phy` (a preset) or `rate`, bound; shared by every kind that
/// declares the two.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineRateParams {
    pub phy: Option<String>,
    pub rate: Option<Rate>,
}

impl LineRateParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(LineRateParams { phy: p.opt("phy", Params::word)?.map(str::to_string), rate: p.opt("rate", Params::rate)? })
    }

    /// The rate (never both given); `default` is the preset used when neither is given
    /// (None: one of them is required).
    pub fn rate(&self, default: Option<&str>) -> Result<Rate, ParamIssue> {
        let preset = |name: &str| phy_rate(name).ok_or_else(|| ParamIssue::new("phy", format!("unknown preset {name}")));
        match (self.phy.as_deref(), self.rate, default) {
            (Some(_), Some(_), _) => Err(ParamIssue::new("rate", "give either phy or rate, not both")),
            (Some(name), None, _) => preset(name),
            (None, Some(r), _) => Ok(r),
            (None, None, Some(d)) => preset(d),
            (None, None, None) => Err(ParamIssue::new("phy", "a line rate is needed: give phy (e.g. \"OC-3c\") or rate")),
        }
    }
}

pub const PHY_NAMES: [&str; 5] = ["OC-3c", "OC-12c", "DS-3", "TAXI-100", "OC-3c-x4"];

/// The cell rate of a preset.
pub fn phy_rate(name: &str) -> Option<Rate> {
    PHY_PRESETS.iter().find(|p| p.0.eq_ignore_ascii_case(name)).and_then(|p| Rate::from_bps(p.1))
}

/// The SONET grid of a line given by `line` when `sonet` is set (None when not set); an
/// error naming `key` for a line that is not one STS-3c/STS-12c payload.
pub fn sonet_grid(line: &LineRateParams, sonet: bool, key: &str) -> Result<Option<SonetGrid>, ParamIssue> {
    if !sonet {
        return Ok(None);
    }
    match line.phy.as_deref().and_then(SonetGrid::for_phy) {
        Some(g) => Ok(Some(g)),
        None => Err(ParamIssue::new(key, "\"sonet\" needs phy = \"OC-3c\" or \"OC-12c\" (not a rate, DS-3, TAXI-100 or OC-3c-x4)")),
    }
}
