//! Parameter declarations and typed values.
//!
//! Every model kind declares its parameters once, as a `&'static [ParamSpec]`: name,
//! type (with unit dimension), default (written as in a scenario file, so it goes
//! through the same parser), help and the source of the default. The scenario loader
//! checks keys against this table, `atmsim describe` prints it, and the model's
//! constructor reads typed values from [`Params`].

use std::collections::BTreeMap;

use atmsim_kernel::units::{parse_quantity, Dimension, Quantity, Size};
use atmsim_kernel::{Rate, SimDuration};

/// Propagation delay in fibre: 5 µs per km (SPEC section 3).
pub const PROPAGATION_PS_PER_M: u64 = 5_000;

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
                Quantity::Rate(bps) => Rate::from_bps(bps)
                    .map(Value::Rate)
                    .ok_or_else(|| format!("'{s}': a rate must be positive and at least 0.001 b/s")),
                Quantity::Time(secs) => SimDuration::from_secs_f64(secs)
                    .map(Value::Time)
                    .ok_or_else(|| format!("'{s}': a time must be zero or positive (and under 213 days)")),
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
                    if v >= 0.0 {
                        Ok(Value::Size(sz))
                    } else {
                        Err(format!("'{s}': a size must be zero or positive"))
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
    /// A propagation delay given either as `delay` (a time) or as `length` (5 µs/km).
    pub fn propagation(&self) -> Result<SimDuration, ParamIssue> {
        match (self.time("delay"), self.get("length")) {
            (Some(_), Some(_)) => Err(ParamIssue::new("length", "give either delay or length, not both")),
            (Some(d), None) => Ok(d),
            (None, Some(Value::Length(m))) => Ok(SimDuration((m * PROPAGATION_PS_PER_M as f64).round() as u64)),
            _ => Ok(SimDuration::ZERO),
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
    }

    #[test]
    fn bytes_convert_to_whole_cells() {
        let mut p = Params::default();
        p.values.insert("capacity", Value::Size(Size::Bytes(65536.0)));
        assert_eq!(p.cells("capacity"), Some(1236));
    }
}
