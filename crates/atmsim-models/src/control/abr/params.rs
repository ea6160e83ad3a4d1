//! The parameters of an ABR end system (ATM Forum TM 4.0, af-tm-0056.000, section
//! 5.10.2 and Table 5-7), bound once into [`AbrParams`], and the named parameter sets:
//!
//! - `tm40`: TM 4.0's defaults (RIF = RDF = CDF = 1/16, Nrm 32, Mrm 2, Trm 100 ms,
//!   ADTF 0.5 s, TCR 10 cells/s, CRM from the default TBE, ICR = PCR, MCR 0); PCR has
//!   no default in TM 4.0 (it is negotiated) and must be given.
//! - `eprca95`: dastangoo96 Table 1, written in the 1995 EPRCA draft's names (PCR 155,
//!   AIR 0.01892, ICR 10, MCR 0.5 Mb/s; RDF 512, Nrm 32, TOF 2, Trm 100 ms, TCR 10
//!   cells/s, Mrm 2, Xrm 32, Xdf 0.5, TDFP 0.5), mapped to TM 4.0 as
//!   docs/models/abr.md explains: RIF = AIR·Nrm/PCR, RDF = Nrm/RDF_draft,
//!   ADTF = TOF·Trm, CRM = Xrm, CDF = Xdf, time-out decrease TDFP.
//!
//! Any parameter given beside `params` overrides the set's value. Rates are kept in
//! cells per second (424-bit cells), as the RM cell carries them.

use atmsim_kernel::rate::CELL_BITS;
use atmsim_kernel::SimDuration;

use crate::params::{ParamIssue, ParamSpec, ParamType, Params};

const MS: u64 = 1_000_000_000;

/// How the source decreases ACR when congestion is signalled (CI = 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decrease {
    /// TM 4.0 rule 8: once per backward RM cell with CI = 1, by RDF·ACR.
    PerRm,
    /// The 1995 draft's per-cell reading: while the last backward RM cell said CI = 1,
    /// every in-rate cell sent lowers ACR by ACR·RDF/Nrm (the same decrease over one
    /// RM interval, spread over its Nrm cells, and continuing while no relief comes).
    PerCell,
}

/// What rule 5 (ACR decrease time factor, "use it or lose it") does when ADTF has
/// passed since the last in-rate forward RM cell and ACR > ICR.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Timeout {
    /// TM 4.0: ACR is reduced to ICR.
    ToIcr,
    /// The 1995 draft's TDFP reading: ACR loses this fraction of itself, but does not
    /// fall below ICR.
    Fraction(f64),
}

/// An ABR end system's parameters, bound and checked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbrParams {
    /// Peak cell rate (cells/s).
    pub pcr: f64,
    /// Minimum cell rate (cells/s).
    pub mcr: f64,
    /// Initial cell rate (cells/s).
    pub icr: f64,
    /// Rate increase factor: additive increase RIF·PCR per backward RM cell.
    pub rif: f64,
    /// Rate decrease factor: multiplicative decrease RDF·ACR (see [`Decrease`]).
    pub rdf: f64,
    /// At most Nrm − 1 in-rate cells between forward RM cells.
    pub nrm: u32,
    /// At least Mrm in-rate cells between forward RM cells sent on Trm.
    pub mrm: u32,
    /// Upper bound on the time between forward RM cells (while cells are sent).
    pub trm: SimDuration,
    /// ACR decrease time factor (rule 5).
    pub adtf: SimDuration,
    /// Forward RM cells sent without a backward one (BN = 0) before rule 6 decreases.
    pub crm: u32,
    /// Cutoff decrease factor (rule 6).
    pub cdf: f64,
    /// Tagged cell rate: the most out-of-rate forward RM cells per second (cells/s).
    pub tcr: f64,
    pub decrease: Decrease,
    pub timeout: Timeout,
}

fn mbps(x: f64) -> f64 {
    x * 1e6 / CELL_BITS as f64
}

/// The dastangoo96 Table 1 values in the draft's own names (rates in Mb/s, Trm in ms,
/// TCR in cells/s).
pub mod eprca95 {
    pub const PCR_MBPS: f64 = 155.0;
    pub const AIR_MBPS: f64 = 0.01892;
    pub const ICR_MBPS: f64 = 10.0;
    pub const MCR_MBPS: f64 = 0.5;
    pub const RDF: f64 = 512.0;
    pub const NRM: u32 = 32;
    pub const TOF: f64 = 2.0;
    pub const TRM_MS: u64 = 100;
    pub const TCR_CELLS_PER_S: f64 = 10.0;
    pub const MRM: u32 = 2;
    pub const XRM: u32 = 32;
    pub const XDF: f64 = 0.5;
    pub const TDFP: f64 = 0.5;
}

impl AbrParams {
    /// TM 4.0's defaults (Table 5-7) for a connection of peak rate `pcr` cells/s.
    pub fn tm40(pcr: f64) -> AbrParams {
        AbrParams {
            pcr,
            mcr: 0.0,
            icr: pcr,
            rif: 1.0 / 16.0,
            rdf: 1.0 / 16.0,
            nrm: 32,
            mrm: 2,
            trm: SimDuration(100 * MS),
            adtf: SimDuration(500 * MS),
            // CRM = ceil(TBE/Nrm) with TBE's default 16,777,215 cells.
            crm: 16_777_215u32.div_ceil(32),
            cdf: 1.0 / 16.0,
            tcr: 10.0,
            decrease: Decrease::PerRm,
            timeout: Timeout::ToIcr,
        }
    }

    /// dastangoo96 Table 1 mapped to TM 4.0 (docs/models/abr.md).
    pub fn eprca95() -> AbrParams {
        use eprca95::*;
        let pcr = mbps(PCR_MBPS);
        AbrParams {
            pcr,
            mcr: mbps(MCR_MBPS),
            icr: mbps(ICR_MBPS),
            // AIR is the increase per cell time; one RM cell stands for Nrm cells.
            rif: mbps(AIR_MBPS) * NRM as f64 / pcr,
            // The draft's RDF divides: ACR/RDF per cell, Nrm/RDF per RM cell.
            rdf: NRM as f64 / RDF,
            nrm: NRM,
            mrm: MRM,
            trm: SimDuration(TRM_MS * MS),
            adtf: SimDuration((TOF * (TRM_MS * MS) as f64) as u64),
            crm: XRM,
            cdf: XDF,
            tcr: TCR_CELLS_PER_S,
            decrease: Decrease::PerRm,
            timeout: Timeout::Fraction(TDFP),
        }
    }

    /// The checks of the parameters against each other; each error names one key.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        let bad = |k: &str, m: String| Err(ParamIssue::new(k, m));
        if !(self.pcr.is_finite() && self.pcr > 0.0) {
            return bad("pcr", "pcr must be a positive rate".into());
        }
        if !(self.mcr >= 0.0 && self.mcr <= self.pcr) {
            return bad("mcr", format!("mcr ({:.0} cells/s) must not exceed pcr ({:.0} cells/s)", self.mcr, self.pcr));
        }
        if !(self.icr >= self.mcr && self.icr <= self.pcr) {
            return bad("icr", format!("icr ({:.0} cells/s) must lie within [mcr, pcr] = [{:.0}, {:.0}] cells/s", self.icr, self.mcr, self.pcr));
        }
        for (k, v) in [("rif", self.rif), ("rdf", self.rdf)] {
            if !(v > 0.0 && v <= 1.0) {
                return bad(k, format!("{k} must be in (0, 1] (TM 4.0: a power of two from 1/32768 to 1); got {v}"));
            }
        }
        if !(0.0..=1.0).contains(&self.cdf) {
            return bad("cdf", format!("cdf must be in [0, 1] (0 turns rule 6 off); got {}", self.cdf));
        }
        if self.nrm < 2 {
            return bad("nrm", format!("nrm must be at least 2 (TM 4.0: 2 to 256); got {}", self.nrm));
        }
        if self.mrm < 1 || self.mrm >= self.nrm {
            return bad("mrm", format!("mrm must be at least 1 and below nrm ({}); got {}", self.nrm, self.mrm));
        }
        if self.crm < 1 {
            return bad("crm", "crm must be at least 1".into());
        }
        if self.trm == SimDuration::ZERO {
            return bad("trm", "trm must be longer than 0 s".into());
        }
        if self.adtf == SimDuration::ZERO {
            return bad("adtf", "adtf must be longer than 0 s".into());
        }
        if !(self.tcr.is_finite() && self.tcr > 0.0) {
            return bad("tcr", "tcr must be a positive rate".into());
        }
        if let Timeout::Fraction(f) = self.timeout {
            if !(f > 0.0 && f <= 1.0) {
                return bad("tdf", format!("tdf must be in (0, 1]; got {f}"));
            }
        }
        Ok(())
    }

    /// Reads `params` (the set) and each parameter given beside it, once, as declared
    /// in [`PARAMS`].
    pub fn bind(p: &Params) -> Result<AbrParams, ParamIssue> {
        let set = p.need_choice("params", &[("tm40", None), ("eprca95", Some(()))])?;
        let pcr = p.opt("pcr", Params::rate)?.map(|r| r.cells_per_s());
        let mut a = match (set, pcr) {
            (Some(()), _) => AbrParams::eprca95(),
            (None, Some(pcr)) => AbrParams::tm40(pcr),
            (None, None) => return Err(ParamIssue::new("pcr", "params = \"tm40\" needs pcr (TM 4.0 has no default peak cell rate); give pcr or params = \"eprca95\"")),
        };
        if let Some(pcr) = pcr {
            a.pcr = pcr;
        }
        if let Some(r) = p.opt("mcr", Params::rate)? {
            a.mcr = r.cells_per_s();
        }
        match p.opt("icr", Params::rate)? {
            Some(r) => a.icr = r.cells_per_s(),
            // TM 4.0's ICR default is PCR: it follows a PCR given beside tm40.
            None if set.is_none() => a.icr = a.pcr,
            None => {}
        }
        let float = |k: &str, v: &mut f64| -> Result<(), ParamIssue> {
            if let Some(x) = p.opt(k, Params::float)? {
                *v = x;
            }
            Ok(())
        };
        float("rif", &mut a.rif)?;
        float("rdf", &mut a.rdf)?;
        float("cdf", &mut a.cdf)?;
        let count = |k: &str, v: &mut u32| -> Result<(), ParamIssue> {
            if let Some(x) = p.opt(k, Params::int)? {
                *v = u32::try_from(x).map_err(|_| ParamIssue::new(k, format!("{k} must be a count of cells; got {x}")))?;
            }
            Ok(())
        };
        count("nrm", &mut a.nrm)?;
        count("mrm", &mut a.mrm)?;
        count("crm", &mut a.crm)?;
        if let Some(t) = p.opt("trm", Params::time)? {
            a.trm = t;
        }
        if let Some(t) = p.opt("adtf", Params::time)? {
            a.adtf = t;
        }
        if let Some(r) = p.opt("tcr", Params::rate)? {
            a.tcr = r.cells_per_s();
        }
        if let Some(w) = p.opt("decrease", Params::word)? {
            a.decrease = if w == "per-cell" { Decrease::PerCell } else { Decrease::PerRm };
        }
        if let Some(f) = p.opt("tdf", Params::float)? {
            a.timeout = Timeout::Fraction(f);
        }
        Ok(a)
    }
}

const FROM_SET: &str = "the parameter set (`params`), see docs/models/abr.md";

/// The parameters of an ABR end system. Only `params` has a default; every other value
/// comes from the set unless given.
pub const PARAMS: [ParamSpec; 15] = [
    ParamSpec { name: "params", ty: ParamType::Choice(&["tm40", "eprca95"]), default: Some("tm40"), required: false, help: "named parameter set: TM 4.0 defaults (needs pcr) or dastangoo96 Table 1 mapped to TM 4.0; the other parameters override it", source: "ATM Forum TM 4.0 Table 5-7; dastangoo96 Table 1" },
    ParamSpec { name: "pcr", ty: ParamType::Rate, default: None, required: false, help: "peak cell rate (eprca95: 155 Mb/s; tm40: required)", source: FROM_SET },
    ParamSpec { name: "mcr", ty: ParamType::Rate, default: None, required: false, help: "minimum cell rate (tm40: 0; eprca95: 0.5 Mb/s)", source: FROM_SET },
    ParamSpec { name: "icr", ty: ParamType::Rate, default: None, required: false, help: "initial cell rate (tm40: PCR; eprca95: 10 Mb/s)", source: FROM_SET },
    ParamSpec { name: "rif", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: None, required: false, help: "rate increase factor: ACR grows by RIF·PCR per backward RM cell with CI = NI = 0 (tm40: 1/16; eprca95: AIR·Nrm/PCR = 1/256)", source: FROM_SET },
    ParamSpec { name: "rdf", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: None, required: false, help: "rate decrease factor: ACR falls by RDF·ACR on CI = 1 (tm40: 1/16; eprca95: Nrm/RDF = 1/16)", source: FROM_SET },
    ParamSpec { name: "nrm", ty: ParamType::Int { min: 0, max: 256 }, default: None, required: false, help: "a forward RM cell at least every Nrm in-rate cells (both sets: 32)", source: FROM_SET },
    ParamSpec { name: "mrm", ty: ParamType::Int { min: 0, max: 256 }, default: None, required: false, help: "in-rate cells between forward RM cells sent on Trm (both sets: 2)", source: FROM_SET },
    ParamSpec { name: "trm", ty: ParamType::Time, default: None, required: false, help: "a forward RM cell at least every Trm while cells are sent (both sets: 100 ms)", source: FROM_SET },
    ParamSpec { name: "adtf", ty: ParamType::Time, default: None, required: false, help: "ACR decrease time factor, use it or lose it (tm40: 0.5 s; eprca95: TOF·Trm = 200 ms)", source: FROM_SET },
    ParamSpec { name: "crm", ty: ParamType::Int { min: 0, max: 16_777_215 }, default: None, required: false, help: "forward RM cells without a backward one before ACR is cut by CDF (tm40: ceil(TBE/Nrm) = 524288; eprca95: Xrm = 32)", source: FROM_SET },
    ParamSpec { name: "cdf", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: None, required: false, help: "cutoff decrease factor (tm40: 1/16; eprca95: Xdf = 0.5)", source: FROM_SET },
    ParamSpec { name: "tcr", ty: ParamType::Rate, default: None, required: false, help: "tagged cell rate: the most out-of-rate forward RM cells per second (both sets: 10 cells/s)", source: FROM_SET },
    ParamSpec { name: "decrease", ty: ParamType::Choice(&["per-rm", "per-cell"]), default: None, required: false, help: "on CI = 1, decrease once per backward RM cell (TM 4.0) or by RDF/Nrm on every cell sent while congested (the 1995 draft's other reading); both sets: per-rm", source: "docs/models/abr.md (two readings of the 1995 EPRCA draft)" },
    ParamSpec { name: "tdf", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: None, required: false, help: "on the ADTF time-out, cut ACR by this fraction (not below ICR) instead of to ICR (tm40: to ICR; eprca95: TDFP = 0.5)", source: FROM_SET },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{default_raw, parse_value, Value};
    use atmsim_kernel::Rate;

    fn params(given: &[(&'static str, Value)]) -> Params {
        let mut p = Params::default();
        for spec in &PARAMS {
            if let Some(d) = spec.default {
                p.values.insert(spec.name, parse_value(spec, &default_raw(d)).unwrap());
            }
        }
        for (k, v) in given {
            p.values.insert(k, v.clone());
        }
        p
    }

    fn rate(mbps: f64) -> Value {
        Value::Rate(Rate::from_bps(mbps * 1e6).unwrap())
    }

    #[test]
    fn eprca95_maps_table_1_to_tm40() {
        let a = AbrParams::eprca95();
        // 155 Mb/s is 365,566 cells/s (dastangoo96 section 2.1).
        assert_eq!(a.pcr.floor(), 365_566.0);
        // AIR·Nrm = 0.01892 · 32 = 0.60544 Mb/s = PCR/256.
        assert!((a.rif - 0.605_44 / 155.0).abs() < 1e-12);
        assert!((a.rif - 1.0 / 256.0).abs() < 1e-5);
        assert_eq!(a.rdf, 1.0 / 16.0);
        assert_eq!(a.adtf, SimDuration(200 * MS));
        assert_eq!((a.nrm, a.mrm, a.crm), (32, 2, 32));
        assert_eq!(a.cdf, 0.5);
        assert_eq!(a.tcr, 10.0);
        assert_eq!(a.timeout, Timeout::Fraction(0.5));
        assert_eq!(a.icr, 10e6 / 424.0);
        assert_eq!(a.mcr, 0.5e6 / 424.0);
        assert_eq!(a.validate(), Ok(()));
    }

    #[test]
    fn tm40_needs_pcr_and_follows_it_with_icr() {
        let e = AbrParams::bind(&params(&[])).unwrap_err();
        assert_eq!(e.key, "pcr");
        let a = AbrParams::bind(&params(&[("pcr", rate(100.0))])).unwrap();
        assert_eq!(a.pcr, 100e6 / 424.0);
        assert_eq!(a.icr, a.pcr);
        assert_eq!(a.crm, 524_288);
        assert_eq!(a.validate(), Ok(()));
    }

    #[test]
    fn given_values_override_the_set() {
        let a = AbrParams::bind(&params(&[("params", Value::Word("eprca95".into())), ("nrm", Value::Int(16)), ("decrease", Value::Word("per-cell".into())), ("rdf", Value::Float(0.125))])).unwrap();
        assert_eq!((a.nrm, a.decrease, a.rdf), (16, Decrease::PerCell, 0.125));
        assert_eq!(a.icr, 10e6 / 424.0);
    }

    #[test]
    fn bad_values_name_their_key() {
        let e95 = |g: &[(&'static str, Value)]| {
            let mut v = vec![("params", Value::Word("eprca95".into()))];
            v.extend_from_slice(g);
            AbrParams::bind(&params(&v)).unwrap().validate().unwrap_err().key
        };
        assert_eq!(e95(&[("nrm", Value::Int(0))]), "nrm");
        assert_eq!(e95(&[("mcr", rate(200.0))]), "mcr");
        assert_eq!(e95(&[("rdf", Value::Float(0.0))]), "rdf");
        assert_eq!(e95(&[("rif", Value::Float(0.0))]), "rif");
        assert_eq!(e95(&[("icr", rate(0.1))]), "icr");
        assert_eq!(e95(&[("mrm", Value::Int(32))]), "mrm");
        assert_eq!(e95(&[("crm", Value::Int(0))]), "crm");
        assert_eq!(e95(&[("tdf", Value::Float(0.0))]), "tdf");
    }
}
