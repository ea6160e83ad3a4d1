//! Parameter declarations and typed values.
//!
//! Every model kind declares its parameters once, as a `&'static [ParamSpec]`: name,
//! type (with unit dimension), default (written as in a scenario file, so it goes
//! through the same parser), help and the source of the default. The scenario loader
//! checks keys against this table, fills in the defaults and parses values into
//! [`Params`]; `atmsim describe` prints it. Each kind binds [`Params`] once into a
//! typed `XxxParams` struct (`bind`: every declared parameter read once with its
//! declared type; a default is never written a second time, so a missing value is an
//! internal error, see [`Params::need`]), whose `validate` holds the cross-parameter
//! checks; the model's constructor takes the bound struct.

use std::collections::BTreeMap;

use atmsim_kernel::units::{parse_quantity, Dimension, Quantity, Size};
use atmsim_kernel::{Rate, SimDuration};

/// Propagation delay in fibre: 5 µs per km (SPEC section 3).
pub const PROPAGATION_PS_PER_M: u64 = 5_000;

/// The propagation delay of `metres` of fibre, to the picosecond.
pub fn fibre_delay(metres: f64) -> SimDuration {
    SimDuration((metres * PROPAGATION_PS_PER_M as f64).round() as u64)
}

/// Octets in one ATM cell.
pub const CELL_OCTETS: u64 = 53;

/// The type of a parameter.
#[derive(Clone, Copy, Debug)]
pub enum ParamType {
    Rate,
    Time,
    Length,
    Size,
    /// A size, or the given keyword (such as "unlimited").
    SizeOr(&'static str),
    /// A time, or the given keyword (such as "random").
    TimeOr(&'static str),
    Int { min: i64, max: i64 },
    Float { min: f64, max: f64 },
    Choice(&'static [&'static str]),
    /// A list of strings (each checked by the model, e.g. VC table entries).
    StrList,
    /// true or false.
    Bool,
    /// Free text, such as a file name (the model checks it).
    Text,
}

impl ParamType {
    /// The unit column of `describe`.
    pub fn unit(&self) -> String {
        match self {
            ParamType::Rate => "rate (b/s)".into(),
            ParamType::Time => "time (s)".into(),
            ParamType::Length => "length (m)".into(),
            ParamType::Size => "size (cells or bytes)".into(),
            ParamType::SizeOr(k) => format!("size (cells or bytes) or \"{k}\""),
            ParamType::TimeOr(k) => format!("time (s) or \"{k}\""),
            ParamType::Int { min, max } => format!("integer {min}..{max}"),
            ParamType::Float { min, max } => format!("number {min}..{max}"),
            ParamType::Choice(c) => format!("one of {}", c.join(", ")),
            ParamType::StrList => "list of strings".into(),
            ParamType::Bool => "true or false".into(),
            ParamType::Text => "text".into(),
        }
    }
}

/// A parameter declaration.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub ty: ParamType,
    /// Default as scenario text; `None` means optional with no default (see `help`).
    pub default: Option<&'static str>,
    pub required: bool,
    pub help: &'static str,
    /// Where the default comes from (paper, standard, or "atmsim convention").
    pub source: &'static str,
}

/// A parsed parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Rate(Rate),
    Time(SimDuration),
    Length(f64),
    Size(Size),
    Int(i64),
    Float(f64),
    Word(String),
    List(Vec<String>),
    Bool(bool),
}

/// What a scenario file holds for one parameter before parsing.
#[derive(Clone, Debug, PartialEq)]
pub enum Raw {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// An array (of strings, for `StrList` parameters).
    List(Vec<Raw>),
}

impl std::fmt::Display for Raw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Raw::Str(s) => write!(f, "\"{s}\""),
            Raw::Int(i) => write!(f, "{i}"),
            Raw::Float(x) => write!(f, "{x}"),
            Raw::Bool(b) => write!(f, "{b}"),
            Raw::List(v) => {
                write!(f, "[")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, "]")
            }
        }
    }
}

/// How a default written in a `ParamSpec` is read: an integer, a number, a boolean, or
/// text.
pub fn default_raw(d: &str) -> Raw {
    if let Ok(i) = d.parse::<i64>() {
        Raw::Int(i)
    } else if let Some(x) = d.parse::<f64>().ok().filter(|x| x.is_finite()) {
        Raw::Float(x)
    } else if d == "true" || d == "false" {
        Raw::Bool(d == "true")
    } else {
        Raw::Str(d.to_string())
    }
}

fn dimension_of(ty: ParamType) -> Option<Dimension> {
    match ty {
        ParamType::Rate => Some(Dimension::Rate),
        ParamType::Time | ParamType::TimeOr(_) => Some(Dimension::Time),
        ParamType::Length => Some(Dimension::Length),
        ParamType::Size | ParamType::SizeOr(_) => Some(Dimension::Size),
        _ => None,
    }
}

/// Parses one raw value against its declaration. Errors are messages for the user
/// (the caller adds file, line and key).
pub fn parse_value(spec: &ParamSpec, raw: &Raw) -> Result<Value, String> {
    match (spec.ty, raw) {
        (ParamType::SizeOr(k) | ParamType::TimeOr(k), Raw::Str(s)) if s.trim() == k => Ok(Value::Word(k.to_string())),
        (ParamType::Int { min, max }, Raw::Int(i)) => {
            if *i < min || *i > max {
                Err(format!("{i} is out of range; valid: integer {min}..{max}"))
            } else {
                Ok(Value::Int(*i))
            }
        }
        (ParamType::Float { min, max }, Raw::Int(_) | Raw::Float(_)) => {
            let x = match raw {
                Raw::Int(i) => *i as f64,
                Raw::Float(x) => *x,
                _ => f64::NAN, // not reachable: the arm matched Int or Float
            };
            if !(x >= min && x <= max) {
                Err(format!("{x} is out of range; valid: number {min}..{max}"))
            } else {
                Ok(Value::Float(x))
            }
        }
        (ParamType::StrList, Raw::List(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, it) in items.iter().enumerate() {
                match it {
                    Raw::Str(x) => out.push(x.clone()),
                    other => return Err(format!("item {} is {other}; expected a string", i + 1)),
                }
            }
            Ok(Value::List(out))
        }
        (ParamType::Bool, Raw::Bool(b)) => Ok(Value::Bool(*b)),
        (ParamType::Text, Raw::Str(s)) if !s.trim().is_empty() => Ok(Value::Word(s.clone())),
        (ParamType::Choice(choices), Raw::Str(s)) => {
            if let Some(c) = choices.iter().find(|c| c.eq_ignore_ascii_case(s.trim())) {
                Ok(Value::Word(c.to_string()))
            } else {
                let hint = crate::suggest::did_you_mean(s, choices.iter().copied());
                Err(format!("'{s}' is not valid; valid: {}{hint}", choices.join(", ")))
            }
        }
        (ty, Raw::Str(s)) if dimension_of(ty).is_some() => {
            let dim = dimension_of(ty).unwrap_or(Dimension::Time);
            let q = parse_quantity(s, dim).map_err(|e| match ty {
                ParamType::SizeOr(k) | ParamType::TimeOr(k) => format!("{e}, or \"{k}\""),
                _ => e,
            })?;
            match q {
                Quantity::Rate(bps) => Rate::from_bps(bps).map(Value::Rate).ok_or_else(|| rate_error(s, bps)),
                Quantity::Time(secs) => match SimDuration::from_secs_f64(secs) {
                    // a nonzero time that rounds to 0 ps would silently become zero
                    Some(d) if d.ps() == 0 && secs > 0.0 => Err(format!(
                        "'{s}': below the 1 ps time resolution; the shortest nonzero time is 1 ps (or write 0 s)"
                    )),
                    Some(d) => Ok(Value::Time(d)),
                    None => Err(time_error(s, secs)),
                },
                Quantity::Length(m) => {
                    if m >= 0.0 {
                        Ok(Value::Length(m))
                    } else {
                        Err(format!("'{s}': a length must be zero or positive"))
                    }
                }
                Quantity::Size(sz) => {
                    let v = match sz {
                        Size::Cells(c) | Size::Bytes(c) => c,
                    };
                    let cells = match sz {
                        Size::Cells(c) => c,
                        Size::Bytes(b) => b / CELL_OCTETS as f64,
                    };
                    if !(v >= 0.0) {
                        Err(format!("'{s}': a size must be zero or positive"))
                    } else if cells > MAX_SIZE_CELLS {
                        let unlimited = match spec.ty {
                            ParamType::SizeOr(w) => format!("; write \"{w}\" for no limit"),
                            _ => String::new(),
                        };
                        Err(format!("'{s}': a size must be at most 2^53 = {} cells (larger sizes cannot be counted exactly){unlimited}", MAX_SIZE_CELLS as u64))
                    } else {
                        Ok(Value::Size(sz))
                    }
                }
            }
        }
        (ty, raw) => {
            let want = match ty {
                ParamType::Int { .. } => "an integer".to_string(),
                ParamType::Float { .. } => "a number".to_string(),
                ParamType::Choice(c) => format!("a string, one of {}", c.join(", ")),
                ParamType::StrList => "a list of strings, e.g. [\"a\", \"b\"]".to_string(),
                ParamType::Bool => "true or false".to_string(),
                ParamType::Text => "a non-empty string".to_string(),
                ParamType::SizeOr(k) | ParamType::TimeOr(k) => {
                    let d = dimension_of(ty).unwrap_or(Dimension::Time);
                    format!("a string with a unit such as \"{}\" ({}) or \"{k}\"", example(d), d.examples())
                }
                _ => {
                    let d = dimension_of(ty).unwrap_or(Dimension::Time);
                    format!("a string with a unit such as \"{}\" ({})", example(d), d.examples())
                }
            };
            Err(format!("{raw} is not valid here; expected {want}"))
        }
    }
}

/// The largest rate a [`Rate`] holds (whole millibits per second in a `u64`), in b/s, to
/// 15 digits (the product with 1000 must stay below 2^64 after rounding).
pub const MAX_RATE_BPS: f64 = 18_446_744_073_709_000.0;

/// The largest time a [`SimDuration`] holds (picoseconds in a `u64`), in seconds (about 213.5 days).
pub const MAX_TIME_S: f64 = 18_446_744.0;

/// Why `bps` (written `s`) is not a [`Rate`]: not positive, below the resolution or too large.
fn rate_error(s: &str, bps: f64) -> String {
    if !(bps > 0.0) {
        format!("'{s}': a rate must be positive (at least 0.001 b/s)")
    } else if bps < 0.001 {
        format!("'{s}': below the rate resolution; the smallest rate is 0.001 b/s")
    } else {
        format!("'{s}': too large; the largest rate is 1.8e16 b/s (18,446,744 Gb/s)")
    }
}

/// Why `secs` (written `s`) is not a [`SimDuration`]: negative or too large.
fn time_error(s: &str, secs: f64) -> String {
    if !(secs >= 0.0) {
        format!("'{s}': a time must be zero or positive")
    } else {
        format!("'{s}': too large; the longest time is 18446744 s (about 213 days, u64 picoseconds)")
    }
}

fn example(d: Dimension) -> &'static str {
    match d {
        Dimension::Rate => "155.52 Mb/s",
        Dimension::Time => "8.8 ms",
        Dimension::Length => "4000 km",
        Dimension::Size => "256 cells",
    }
}

/// A problem with one parameter, found by a model's constructor.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamIssue {
    /// The parameter at fault (empty when it concerns the component as a whole).
    pub key: String,
    pub msg: String,
}

impl ParamIssue {
    pub fn new(key: &str, msg: impl Into<String>) -> Self {
        ParamIssue { key: key.to_string(), msg: msg.into() }
    }
}

/// The resolved parameters of one component: every declared parameter with a value
/// (given or default) is present.
#[derive(Clone, Debug, Default)]
pub struct Params {
    pub values: BTreeMap<&'static str, Value>,
}

impl Params {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key)
    }
    pub fn rate(&self, key: &str) -> Option<Rate> {
        match self.get(key) {
            Some(Value::Rate(r)) => Some(*r),
            _ => None,
        }
    }
    pub fn time(&self, key: &str) -> Option<SimDuration> {
        match self.get(key) {
            Some(Value::Time(t)) => Some(*t),
            _ => None,
        }
    }
    pub fn word(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Value::Word(w)) => Some(w),
            _ => None,
        }
    }
    pub fn int(&self, key: &str) -> Option<i64> {
        match self.get(key) {
            Some(Value::Int(i)) => Some(*i),
            _ => None,
        }
    }
    pub fn list(&self, key: &str) -> Option<&[String]> {
        match self.get(key) {
            Some(Value::List(v)) => Some(v),
            _ => None,
        }
    }
    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.get(key) {
            Some(Value::Bool(b)) => Some(*b),
            _ => None,
        }
    }
    pub fn float(&self, key: &str) -> Option<f64> {
        match self.get(key) {
            Some(Value::Float(x)) => Some(*x),
            _ => None,
        }
    }
    /// A size in cells (bytes are converted at 53 octets per cell, rounding down).
    pub fn cells(&self, key: &str) -> Option<u64> {
        match self.get(key) {
            Some(Value::Size(Size::Cells(c))) => Some(c.floor() as u64),
            Some(Value::Size(Size::Bytes(b))) => Some((b / CELL_OCTETS as f64).floor() as u64),
            _ => None,
        }
    }
    /// A length in metres.
    pub fn length(&self, key: &str) -> Option<f64> {
        match self.get(key) {
            Some(Value::Length(m)) => Some(*m),
            _ => None,
        }
    }
    /// A size as given (cells or bytes).
    pub fn size(&self, key: &str) -> Option<Size> {
        match self.get(key) {
            Some(Value::Size(s)) => Some(*s),
            _ => None,
        }
    }
    /// A size in cells, or the keyword of a `SizeOr` parameter (such as "unlimited").
    pub fn cell_limit(&self, key: &str) -> Option<CellLimit> {
        match self.get(key) {
            Some(Value::Word(_)) => Some(CellLimit::Unlimited),
            _ => self.cells(key).map(CellLimit::Cells),
        }
    }
    /// A propagation delay given either as `delay` (a time) or as `length` (5 µs/km).
    pub fn propagation(&self) -> Result<SimDuration, ParamIssue> {
        PropagationParams::bind(self)?.delay()
    }

    // Binding (`XxxParams::bind`): each declared parameter is read once, with the typed
    // getter of its declared type.

    /// A parameter that is always present: required, or with a declared default (the
    /// scenario loader fills defaults in, so a default is written only in its
    /// [`ParamSpec`]). Absent, or of another type than declared, is an internal error.
    pub fn need<'a, T>(&'a self, key: &str, get: impl FnOnce(&'a Params, &str) -> Option<T>) -> Result<T, ParamIssue> {
        match get(self, key) {
            Some(v) => Ok(v),
            None => Err(self.not_as_declared(key)),
        }
    }
    /// An optional parameter without a default: None when not given; of another type
    /// than declared is an internal error.
    pub fn opt<'a, T>(&'a self, key: &str, get: impl FnOnce(&'a Params, &str) -> Option<T>) -> Result<Option<T>, ParamIssue> {
        if self.get(key).is_none() {
            return Ok(None);
        }
        match get(self, key) {
            Some(v) => Ok(Some(v)),
            None => Err(self.not_as_declared(key)),
        }
    }
    /// A `Choice` parameter that is always present, as the value `choices` pairs with
    /// its word.
    pub fn need_choice<T: Copy>(&self, key: &str, choices: &[(&str, T)]) -> Result<T, ParamIssue> {
        let w = self.need(key, Params::word)?;
        choices.iter().find(|c| c.0 == w).map(|c| c.1).ok_or_else(|| ParamIssue::new(key, format!("internal error: '{w}' is not one of the declared choices")))
    }
    /// A list parameter as owned strings (None: not given).
    pub fn opt_list(&self, key: &str) -> Result<Option<Vec<String>>, ParamIssue> {
        Ok(self.opt(key, Params::list)?.map(<[String]>::to_vec))
    }

    fn not_as_declared(&self, key: &str) -> ParamIssue {
        match self.get(key) {
            // The message constructors have always given for a missing value.
            None => ParamIssue::new(key, "missing"),
            Some(v) => ParamIssue::new(key, format!("internal error: {v:?} is not of the declared type")),
        }
    }
}

/// A propagation delay, given as `delay` or as `length` (at most one; neither: none),
/// bound.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PropagationParams {
    pub delay: Option<SimDuration>,
    /// Fibre length in metres.
    pub length: Option<f64>,
}

impl PropagationParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(PropagationParams { delay: p.opt("delay", Params::time)?, length: p.opt("length", Params::length)? })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.delay().map(drop)
    }

    /// The delay (5 µs/km of fibre for a length).
    pub fn delay(&self) -> Result<SimDuration, ParamIssue> {
        match (self.delay, self.length) {
            (Some(_), Some(_)) => Err(ParamIssue::new("length", "give either delay or length, not both")),
            (Some(d), None) => Ok(d),
            (None, Some(m)) => Ok(fibre_delay(m)),
            (None, None) => Ok(SimDuration::ZERO),
        }
    }
}

/// The largest size a parameter may have, in cells (2^53: every whole number of cells
/// up to it is exact in the f64 the unit parser yields; `capacity = "1e30 cells"` is
/// rejected, not silently unlimited).
pub const MAX_SIZE_CELLS: f64 = 9_007_199_254_740_992.0;

/// A buffer size (`SizeOr("unlimited")` parameters), in whole cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellLimit {
    Unlimited,
    Cells(u64),
}

impl CellLimit {
    /// The limit in cells (None: unlimited), or `msg` on `key` for a limit of 0 cells.
    pub fn at_least_one(self, key: &str, msg: &str) -> Result<Option<usize>, ParamIssue> {
        match self {
            CellLimit::Unlimited => Ok(None),
            CellLimit::Cells(0) => Err(ParamIssue::new(key, msg)),
            CellLimit::Cells(c) => Ok(Some(c as usize)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: ParamSpec = ParamSpec { name: "rate", ty: ParamType::Rate, default: None, required: true, help: "", source: "" };
    const CAP: ParamSpec = ParamSpec { name: "capacity", ty: ParamType::SizeOr("unlimited"), default: Some("unlimited"), required: false, help: "", source: "" };

    #[test]
    fn typed_values_and_clear_errors() {
        assert_eq!(parse_value(&RATE, &Raw::Str("1 kb/s".into())).unwrap(), Value::Rate(Rate::from_bps(1000.0).unwrap()));
        let e = parse_value(&RATE, &Raw::Str("0 Mb/s".into())).unwrap_err();
        assert!(e.contains("positive"), "{e}");
        let e = parse_value(&RATE, &Raw::Str("-3 Mb/s".into())).unwrap_err();
        assert!(e.contains("positive"), "{e}");
        let e = parse_value(&RATE, &Raw::Int(155)).unwrap_err();
        assert!(e.contains("expected a string with a unit"), "{e}");
        assert_eq!(parse_value(&CAP, &Raw::Str("unlimited".into())).unwrap(), Value::Word("unlimited".into()));
        let e = parse_value(&CAP, &Raw::Str("lots".into())).unwrap_err();
        assert!(e.contains("\"unlimited\""), "{e}");
        let e = parse_value(&CAP, &Raw::Str("1e30 cells".into())).unwrap_err();
        assert!(e.contains("at most 2^53") && e.contains("\"unlimited\" for no limit"), "{e}");
        let e = parse_value(&CAP, &Raw::Str("1e18 B".into())).unwrap_err();
        assert!(e.contains("at most 2^53"), "{e}");
        assert_eq!(parse_value(&CAP, &Raw::Str("9007199254740992 cells".into())).unwrap(), Value::Size(Size::Cells(9007199254740992.0)));
    }

    const TIME: ParamSpec = ParamSpec { name: "delay", ty: ParamType::Time, default: None, required: true, help: "", source: "" };

    /// Issue 44 item 10: each out-of-range rate or time says which way it is wrong.
    #[test]
    fn out_of_range_rates_and_times_say_what_is_wrong() {
        let err = |spec: &ParamSpec, s: &str| parse_value(spec, &Raw::Str(s.into())).unwrap_err();
        assert_eq!(err(&RATE, "1e30 Mb/s"), "'1e30 Mb/s': too large; the largest rate is 1.8e16 b/s (18,446,744 Gb/s)");
        assert_eq!(err(&RATE, "0.0001 b/s"), "'0.0001 b/s': below the rate resolution; the smallest rate is 0.001 b/s");
        assert_eq!(err(&RATE, "0 Mb/s"), "'0 Mb/s': a rate must be positive (at least 0.001 b/s)");
        assert_eq!(err(&TIME, "0.1 ps"), "'0.1 ps': below the 1 ps time resolution; the shortest nonzero time is 1 ps (or write 0 s)");
        assert_eq!(err(&TIME, "1e9 s"), "'1e9 s': too large; the longest time is 18446744 s (about 213 days, u64 picoseconds)");
        // the bounds themselves are valid
        assert!(matches!(parse_value(&RATE, &Raw::Str("1.8e16 b/s".into())), Ok(Value::Rate(_))));
        assert!(matches!(parse_value(&RATE, &Raw::Str("0.001 b/s".into())), Ok(Value::Rate(_))));
        assert_eq!(parse_value(&TIME, &Raw::Str("1 ps".into())).unwrap(), Value::Time(SimDuration(1)));
        assert_eq!(parse_value(&TIME, &Raw::Str("0 s".into())).unwrap(), Value::Time(SimDuration(0)));
        assert!(matches!(parse_value(&TIME, &Raw::Str("18446744 s".into())), Ok(Value::Time(_))));
        assert!(Rate::from_bps(MAX_RATE_BPS).is_some() && SimDuration::from_secs_f64(MAX_TIME_S).is_some());
    }

    /// Example values for parameters that have no default but are needed: required ones,
    /// and one of each either/or pair (kind, parameter, value as in a scenario file).
    fn examples(trace: &str) -> Vec<(&'static str, &'static str, Raw)> {
        let s = |x: &str| Raw::Str(x.to_string());
        vec![
            ("cbr", "rate", s("1 Mb/s")),
            ("poisson", "rate", s("1 Mb/s")),
            ("onoff", "peak", s("10 Mb/s")),
            ("onoff", "mean", s("5 Mb/s")),
            ("onoff", "burst_factor", s("100 cells")),
            ("selfsimilar", "mean", s("10 Mb/s")),
            ("selfsimilar", "std", s("5 Mb/s")),
            ("trace", "file", s(trace)),
            ("fifo", "phy", s("OC-3c")),
            ("link", "phy", s("OC-3c")),
            ("switch", "vcs", Raw::List(vec![s("p1:0/1 -> p2:0/2")])),
            ("loss", "p", Raw::Float(0.01)),
            ("pacer", "rate", s("1 Mb/s")),
            ("gcra", "pcr", s("1 Mb/s")),
            ("iofm", "phy", s("OC-3c")),
            ("measurement_chip", "phy", s("OC-12c")),
            ("iofm", "i", Raw::Int(1)),
            ("iofm", "m", Raw::Int(10)),
            ("abr_source", "pcr", s("149.76 Mb/s")),
            ("abr_edge", "pcr", s("149.76 Mb/s")),
            ("abr_mux", "phy", s("OC-3c")),
            ("abr_mux", "algorithm", s("erica")),
            ("atm_fddi_gateway", "connections", Raw::List(vec![s("1: 1 -> 1")])),
            ("credit_sender", "phy", s("OC-3c")),
            ("credit_sender", "vcs", Raw::List(vec![s("100")])),
            ("credit_buffer", "phy", s("OC-3c")),
        ]
    }

    /// Every kind builds (binds, validates, constructs) from its declared defaults alone,
    /// plus an example value for each parameter it needs: a default that does not
    /// parse, or that `validate` refuses, fails here.
    #[test]
    fn every_kind_builds_from_its_declared_defaults() {
        let dir = std::env::temp_dir();
        let trace = format!("atmsim-defaults-{}.tl", std::process::id());
        std::fs::write(dir.join(&trace), "0.0 100\n0.001 1500\n").unwrap();
        let examples = examples(&trace);
        for (kind, name, _) in &examples {
            let k = crate::kind(kind).unwrap_or_else(|| panic!("example for unknown kind {kind}"));
            assert!(k.param(name).is_some(), "example for {kind}.{name}, which {kind} does not declare");
        }
        for k in crate::KINDS {
            // As the scenario loader does: given values, then declared defaults.
            let mut p = Params::default();
            for spec in k.params() {
                let example = examples.iter().find(|e| e.0 == k.kind && e.1 == spec.name).map(|e| e.2.clone());
                let raw = match (example, spec.default) {
                    (Some(raw), _) => raw,
                    (None, Some(d)) => default_raw(d),
                    (None, None) => {
                        assert!(!spec.required, "{}.{} is required: add an example value to this test", k.kind, spec.name);
                        continue;
                    }
                };
                let v = parse_value(spec, &raw).unwrap_or_else(|e| panic!("{}.{}: {e}", k.kind, spec.name));
                p.values.insert(spec.name, v);
            }
            let info = crate::BuildInfo { path: "x", seed: 1, run: 0, flow: 0, end: atmsim_kernel::SimTime(1_000_000_000_000), dir: &dir };
            if let Err(e) = (k.build)(&p, &info) {
                panic!("{} with its defaults: {}: {}", k.kind, e.key, e.msg);
            }
        }
        let _ = std::fs::remove_file(dir.join(&trace));
    }

    #[test]
    fn missing_values_are_internal_errors_not_fallbacks() {
        let p = Params::default();
        assert_eq!(p.need("mean", Params::time), Err(ParamIssue::new("mean", "missing")));
        assert_eq!(p.opt("stop", Params::time), Ok(None));
        let mut p = Params::default();
        p.values.insert("mean", Value::Int(3));
        assert!(p.need("mean", Params::time).unwrap_err().msg.contains("internal error"));
        assert!(p.opt("mean", Params::time).unwrap_err().msg.contains("internal error"));
        assert!(crate::hold::HoldParams::bind(&Params::default()).is_err());
    }

    #[test]
    fn bytes_convert_to_whole_cells() {
        let mut p = Params::default();
        p.values.insert("capacity", Value::Size(Size::Bytes(65536.0)));
        assert_eq!(p.cells("capacity"), Some(1236));
    }
}
