//! Quantities with units, as written in scenario files: `"155.52 Mb/s"`, `"8.8 ms"`,
//! `"4000 km"`, `"256 cells"`, `"64 KiB"`.
//!
//! Accepted spellings (case-sensitive where SI makes case meaningful: `Mb/s` vs `MB/s`,
//! `ms` vs `Ms`):
//! - rates: `b/s bps bit/s`, with prefixes `k K M G T` (`kb/s`, `Kbps`, `Mbit/s`, `Mb/s`,
//!   `Mbps`, `Gb/s` …), byte rates `B/s kB/s MB/s GB/s` (8 bits per byte), and
//!   `cells/s` (424 bits per cell);
//! - times: `ps ns us µs μs ms s min h`;
//! - lengths: `m km` (converted to propagation delay at 5 µs/km elsewhere);
//! - sizes: `cells cell`, `B byte bytes`, `KB kB MB` (10^3, 10^6 bytes), `KiB MiB`
//!   (2^10, 2^20 bytes), `bit bits`; converting bytes to cells uses 53-byte cells
//!   unless a model says otherwise.
//!
//! A number without a unit is rejected for every dimensioned parameter: the error says
//! which units would be valid.

/// The dimension of a quantity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dimension {
    Rate,
    Time,
    Length,
    Size,
}

impl Dimension {
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Rate => "rate",
            Dimension::Time => "time",
            Dimension::Length => "length",
            Dimension::Size => "size",
        }
    }
    /// Example units, for error messages and `describe`.
    pub fn examples(self) -> &'static str {
        match self {
            Dimension::Rate => "b/s, kb/s, Mb/s (Mbps, Mbit/s), Gb/s, MB/s, cells/s",
            Dimension::Time => "ps, ns, us (µs), ms, s",
            Dimension::Length => "m, km",
            Dimension::Size => "cells, bytes (B), KB, KiB, MB, MiB, bits",
        }
    }
}

/// A parsed size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    Cells(f64),
    Bytes(f64),
}

/// A parsed quantity in base units: b/s, s, m, or a [`Size`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Quantity {
    Rate(f64),
    Time(f64),
    Length(f64),
    Size(Size),
}

impl Quantity {
    pub fn dimension(&self) -> Dimension {
        match self {
            Quantity::Rate(_) => Dimension::Rate,
            Quantity::Time(_) => Dimension::Time,
            Quantity::Length(_) => Dimension::Length,
            Quantity::Size(_) => Dimension::Size,
        }
    }
}

fn unit_factor(unit: &str) -> Option<Quantity> {
    let prefix = |p: &str| -> Option<f64> {
        Some(match p {
            "" => 1.0,
            "k" | "K" => 1e3,
            "M" => 1e6,
            "G" => 1e9,
            "T" => 1e12,
            _ => return None,
        })
    };
    // bit rates
    for suffix in ["b/s", "bps", "bit/s", "bits/s"] {
        if let Some(p) = unit.strip_suffix(suffix) {
            if let Some(f) = prefix(p) {
                return Some(Quantity::Rate(f));
            }
        }
    }
    if let Some(p) = unit.strip_suffix("B/s") {
        if let Some(f) = prefix(p) {
            return Some(Quantity::Rate(8.0 * f));
        }
    }
    Some(match unit {
        "cells/s" | "cell/s" => Quantity::Rate(424.0),
        "ps" => Quantity::Time(1e-12),
        "ns" => Quantity::Time(1e-9),
        "us" | "µs" | "μs" => Quantity::Time(1e-6),
        "ms" => Quantity::Time(1e-3),
        "s" | "sec" => Quantity::Time(1.0),
        "min" => Quantity::Time(60.0),
        "h" => Quantity::Time(3600.0),
        "m" => Quantity::Length(1.0),
        "km" => Quantity::Length(1e3),
        "cells" | "cell" => Quantity::Size(Size::Cells(1.0)),
        "B" | "byte" | "bytes" | "octets" => Quantity::Size(Size::Bytes(1.0)),
        "bit" | "bits" => Quantity::Size(Size::Bytes(1.0 / 8.0)),
        "KB" | "kB" => Quantity::Size(Size::Bytes(1e3)),
        "MB" => Quantity::Size(Size::Bytes(1e6)),
        "KiB" => Quantity::Size(Size::Bytes(1024.0)),
        "MiB" => Quantity::Size(Size::Bytes(1024.0 * 1024.0)),
        _ => return None,
    })
}

/// Length of the number at the start of `t`: an optional sign, digits, `.` and `_`,
/// then an optional exponent `e`/`E`, optional sign, digits (`1e-3`, `4.4E+2`). An `e`
/// not followed by an exponent's digits is left to the unit.
fn number_len(t: &str) -> usize {
    let b = t.as_bytes();
    let sign = |i: usize| i < b.len() && (b[i] == b'+' || b[i] == b'-');
    let mut i = usize::from(sign(0));
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'_') {
        i += 1;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1 + usize::from(sign(i + 1));
        let digits = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > digits {
            i = j;
        }
    }
    i
}

/// Parses `"<number> <unit>"` (the space is optional). Returns a message naming what
/// would be valid on failure.
pub fn parse_quantity(text: &str, expect: Dimension) -> Result<Quantity, String> {
    let t = text.trim();
    let (num, unit) = t.split_at(number_len(t));
    let unit = unit.trim();
    let num: f64 = num
        .replace('_', "")
        .parse()
        .map_err(|_| format!("'{text}' is not a number with a unit (expected a {} such as {})", expect.name(), expect.examples()))?;
    if unit.is_empty() {
        return Err(format!("'{text}' has no unit; a {} needs one of: {}", expect.name(), expect.examples()));
    }
    let base = unit_factor(unit).ok_or_else(|| format!("unknown unit '{unit}' in '{text}'; a {} takes: {}", expect.name(), expect.examples()))?;
    if base.dimension() != expect {
        return Err(format!("'{text}' is a {}, but a {} is needed ({})", base.dimension().name(), expect.name(), expect.examples()));
    }
    if !num.is_finite() {
        return Err(format!("'{text}' is not finite"));
    }
    // Sub-unit factors divide by an exact power of ten, so "8.8 ms" is exactly 8.8e-3.
    let scale = |f: f64| if f < 1.0 { num / (1.0 / f).round() } else { num * f };
    let q = match base {
        Quantity::Rate(f) => Quantity::Rate(scale(f)),
        Quantity::Time(f) => Quantity::Time(scale(f)),
        Quantity::Length(f) => Quantity::Length(scale(f)),
        Quantity::Size(Size::Cells(f)) => Quantity::Size(Size::Cells(scale(f))),
        Quantity::Size(Size::Bytes(f)) => Quantity::Size(Size::Bytes(scale(f))),
    };
    let value = match q {
        Quantity::Rate(v) | Quantity::Time(v) | Quantity::Length(v) | Quantity::Size(Size::Cells(v) | Size::Bytes(v)) => v,
    };
    if !value.is_finite() {
        return Err(format!("'{text}' is out of range (beyond {:e} in {})", f64::MAX, expect.name()));
    }
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(s: &str) -> f64 {
        match parse_quantity(s, Dimension::Rate).unwrap() {
            Quantity::Rate(r) => r,
            q => panic!("{q:?}"),
        }
    }

    #[test]
    fn rate_spellings_agree() {
        for s in ["155.52 Mb/s", "155.52 Mbps", "155.52 Mbit/s", "155.52Mb/s", "155520 kb/s", "0.15552 Gb/s", "19.44 MB/s"] {
            assert!((rate(s) - 155.52e6).abs() < 1e-3, "{s}");
        }
        assert_eq!(rate("1000 cells/s"), 424_000.0);
    }

    #[test]
    fn times_lengths_sizes() {
        assert_eq!(parse_quantity("8.8 ms", Dimension::Time).unwrap(), Quantity::Time(8.8e-3));
        assert_eq!(parse_quantity("5 µs", Dimension::Time).unwrap(), Quantity::Time(5e-6));
        assert_eq!(parse_quantity("4000 km", Dimension::Length).unwrap(), Quantity::Length(4e6));
        assert_eq!(parse_quantity("256 cells", Dimension::Size).unwrap(), Quantity::Size(Size::Cells(256.0)));
        assert_eq!(parse_quantity("64 KiB", Dimension::Size).unwrap(), Quantity::Size(Size::Bytes(65536.0)));
        assert_eq!(parse_quantity("1e3 cells", Dimension::Size).unwrap(), Quantity::Size(Size::Cells(1000.0)));
    }

    #[test]
    fn errors_name_valid_units() {
        let e = parse_quantity("155", Dimension::Rate).unwrap_err();
        assert!(e.contains("no unit") && e.contains("Mb/s"), "{e}");
        let e = parse_quantity("8 ms", Dimension::Rate).unwrap_err();
        assert!(e.contains("is a time"), "{e}");
        let e = parse_quantity("8 furlongs", Dimension::Length).unwrap_err();
        assert!(e.contains("unknown unit 'furlongs'"), "{e}");
        assert!(parse_quantity("abc", Dimension::Time).is_err());
        let e = parse_quantity("1e308 Tb/s", Dimension::Rate).unwrap_err();
        assert!(e.contains("out of range"), "{e}");
        assert!(parse_quantity("1e- s", Dimension::Time).is_err());
    }

    #[test]
    fn exponents_with_signs() {
        // issue 19: negative exponents were cut off at the sign
        assert_eq!(parse_quantity("1e-3 s", Dimension::Time).unwrap(), Quantity::Time(0.001));
        assert_eq!(parse_quantity("4.4e-3 s", Dimension::Time).unwrap(), Quantity::Time(0.0044));
        assert_eq!(parse_quantity("5e-1 s", Dimension::Time).unwrap(), Quantity::Time(0.5));
        assert_eq!(parse_quantity("1e-3 b/s", Dimension::Rate).unwrap(), Quantity::Rate(0.001));
        assert_eq!(parse_quantity("2.5E+2ms", Dimension::Time).unwrap(), Quantity::Time(0.25));
        assert_eq!(parse_quantity("-1.5e1 s", Dimension::Time).unwrap(), Quantity::Time(-15.0));
        assert_eq!(parse_quantity("1_000e-3 km", Dimension::Length).unwrap(), Quantity::Length(1000.0));
    }

    /// Every unit the parser takes, with its dimension and its factor to base units
    /// written out independently of `unit_factor`: `(unit, dimension, multiply by,
    /// divide by)`.
    const UNITS: &[(&str, Dimension, f64, f64)] = &[
        ("b/s", Dimension::Rate, 1.0, 1.0),
        ("bps", Dimension::Rate, 1.0, 1.0),
        ("bit/s", Dimension::Rate, 1.0, 1.0),
        ("bits/s", Dimension::Rate, 1.0, 1.0),
        ("kb/s", Dimension::Rate, 1e3, 1.0),
        ("Kbps", Dimension::Rate, 1e3, 1.0),
        ("Mb/s", Dimension::Rate, 1e6, 1.0),
        ("Mbps", Dimension::Rate, 1e6, 1.0),
        ("Mbit/s", Dimension::Rate, 1e6, 1.0),
        ("Gb/s", Dimension::Rate, 1e9, 1.0),
        ("Tb/s", Dimension::Rate, 1e12, 1.0),
        ("B/s", Dimension::Rate, 8.0, 1.0),
        ("kB/s", Dimension::Rate, 8e3, 1.0),
        ("MB/s", Dimension::Rate, 8e6, 1.0),
        ("GB/s", Dimension::Rate, 8e9, 1.0),
        ("cells/s", Dimension::Rate, 424.0, 1.0),
        ("cell/s", Dimension::Rate, 424.0, 1.0),
        ("ps", Dimension::Time, 1.0, 1e12),
        ("ns", Dimension::Time, 1.0, 1e9),
        ("us", Dimension::Time, 1.0, 1e6),
        ("µs", Dimension::Time, 1.0, 1e6),
        ("μs", Dimension::Time, 1.0, 1e6),
        ("ms", Dimension::Time, 1.0, 1e3),
        ("s", Dimension::Time, 1.0, 1.0),
        ("sec", Dimension::Time, 1.0, 1.0),
        ("min", Dimension::Time, 60.0, 1.0),
        ("h", Dimension::Time, 3600.0, 1.0),
        ("m", Dimension::Length, 1.0, 1.0),
        ("km", Dimension::Length, 1e3, 1.0),
        ("cells", Dimension::Size, 1.0, 1.0),
        ("cell", Dimension::Size, 1.0, 1.0),
        ("B", Dimension::Size, 1.0, 1.0),
        ("byte", Dimension::Size, 1.0, 1.0),
        ("bytes", Dimension::Size, 1.0, 1.0),
        ("octets", Dimension::Size, 1.0, 1.0),
        ("bit", Dimension::Size, 1.0, 8.0),
        ("bits", Dimension::Size, 1.0, 8.0),
        ("KB", Dimension::Size, 1e3, 1.0),
        ("kB", Dimension::Size, 1e3, 1.0),
        ("MB", Dimension::Size, 1e6, 1.0),
        ("KiB", Dimension::Size, 1024.0, 1.0),
        ("MiB", Dimension::Size, 1048576.0, 1.0),
    ];

    fn value_of(q: Quantity) -> f64 {
        match q {
            Quantity::Rate(v) | Quantity::Time(v) | Quantity::Length(v) => v,
            Quantity::Size(Size::Cells(v) | Size::Bytes(v)) => v,
        }
    }

    proptest::proptest! {
        /// Every finite float as Rust's formatter writes it (`{}`, `{:?}`, `{:e}`,
        /// `{:E}`), followed by every unit, with and without a space, reads back as
        /// the same number times the unit's factor, or is refused as out of range
        /// when that product overflows.
        #[test]
        fn every_formatted_float_round_trips_with_every_unit(x in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO) {
            for &(unit, dim, mul, div) in UNITS {
                let expect = x * mul / div;
                for text in [format!("{x}"), format!("{x:?}"), format!("{x:e}"), format!("{x:E}")] {
                    for sep in [" ", ""] {
                        let s = format!("{text}{sep}{unit}");
                        let got = parse_quantity(&s, dim);
                        if expect.is_finite() {
                            let q = got.map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{s}: {e}")))?;
                            proptest::prop_assert_eq!(q.dimension(), dim);
                            proptest::prop_assert_eq!(value_of(q), expect, "{}", s);
                        } else {
                            proptest::prop_assert!(got.is_err(), "{}", s);
                        }
                    }
                }
            }
        }
    }
}
