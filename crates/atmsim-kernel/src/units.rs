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

/// Parses `"<number> <unit>"` (the space is optional). Returns a message naming what
/// would be valid on failure.
pub fn parse_quantity(text: &str, expect: Dimension) -> Result<Quantity, String> {
    let t = text.trim();
    let split = t
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || c == '_' || ((c == '-' || c == '+') && i == 0) || ((c == 'e' || c == 'E') && t[i + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-' || d == '+'))))
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
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
    Ok(match base {
        Quantity::Rate(f) => Quantity::Rate(scale(f)),
        Quantity::Time(f) => Quantity::Time(scale(f)),
        Quantity::Length(f) => Quantity::Length(scale(f)),
        Quantity::Size(Size::Cells(f)) => Quantity::Size(Size::Cells(scale(f))),
        Quantity::Size(Size::Bytes(f)) => Quantity::Size(Size::Bytes(scale(f))),
    })
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
    }
}
