"""How numbers and units are shown to a user (tables of ``atmsim run``/``sweep``,
the reproduction report).

* :func:`fmt_value` — counters as exact integers (``95358100``, never
  ``9.53581e+07``), other values with ``digits`` significant digits and no exponent
  between 1e-4 and 1e15.
* :func:`convert` — a value from one unit of a quantity to another (time, bit rate).
* :func:`to_display` — one unit per quantity across kinds: every bit rate
  (``b/s``, ``kb/s``, ``Mb/s``, ``Gb/s``, ``B/s``) is shown in the one unit the user
  asks for with ``--units`` (default :data:`DEFAULT_RATE_UNIT`).  The models keep
  reporting in their own units (``Result.probes``, ``--json``, the store); only
  what is shown is converted; times likewise (``--units ms``, default seconds).
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

#: Bits per second in one of each bit-rate unit the models report.
BIT_RATE_UNITS = {"b/s": 1.0, "bit/s": 1.0, "bps": 1.0, "kb/s": 1e3, "Mb/s": 1e6, "Mbps": 1e6, "Gb/s": 1e9,
                  "B/s": 8.0}
#: Seconds in one of each time unit a user may write.
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "ps": 1e-12}

#: Units ``--units`` accepts for bit rates.
RATE_CHOICES = ("b/s", "kb/s", "Mb/s", "Gb/s")
DEFAULT_RATE_UNIT = "Mb/s"
#: Units ``--units`` accepts for times (delays, waits, RTTs: the models report seconds).
TIME_CHOICES = ("s", "ms", "us", "µs", "ns", "ps")
DEFAULT_TIME_UNIT = "s"

#: Largest magnitude an integral float is printed as an exact integer (2^53: every
#: integer up to it is exactly representable).
_EXACT_INT = 2.0 ** 53


def fmt_value(x: object, digits: int = 6) -> str:
    """A number as a user should read it ('' for None and non-finite floats)."""
    if x is None:
        return ""
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    try:
        v = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(v):
        return "" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if v.is_integer() and abs(v) <= _EXACT_INT:
        return str(int(v))
    a = abs(v)
    if 1e-4 <= a < 1e15:
        # `digits` significant digits in positional notation, trailing zeros dropped
        decimals = max(0, digits - 1 - math.floor(math.log10(a)))
        s = f"{v:.{decimals}f}"
        return s.rstrip("0").rstrip(".") if "." in s else s
    return f"{v:.{digits}g}"


def check_units(units: Optional[Sequence[str]]) -> tuple[str, str]:
    """``--units`` values (each one unit or several separated by commas, at most one per
    quantity) → ``(rate unit, time unit)``, the defaults for a quantity not named
    (ValueError with the valid units)."""
    rate, time = None, None
    for item in units or []:
        for u in (x.strip() for x in item.split(",")):
            if u in RATE_CHOICES:
                if rate is not None and rate != u:
                    raise ValueError(f"--units {u!r}: a second bit-rate unit (after {rate!r}); give one per quantity")
                rate = u
            elif u in TIME_CHOICES:
                if time is not None and time != u:
                    raise ValueError(f"--units {u!r}: a second time unit (after {time!r}); give one per quantity")
                time = u
            else:
                raise ValueError(f"--units {u!r}: not a unit of bit rate or time; valid: {', '.join(RATE_CHOICES)} "
                                 f"(bit rates), {', '.join(TIME_CHOICES)} (times)")
    return rate or DEFAULT_RATE_UNIT, time or DEFAULT_TIME_UNIT


def to_display(value: float, unit: str, rate_unit: str = DEFAULT_RATE_UNIT,
               time_unit: str = DEFAULT_TIME_UNIT) -> tuple[float, str]:
    """``(value, unit)`` in the display unit of its quantity (bit rates in ``rate_unit``,
    times in ``time_unit``)."""
    for table, to in ((BIT_RATE_UNITS, rate_unit), (TIME_UNITS, time_unit)):
        f = table.get(unit)
        if f is not None:
            return (value, unit) if unit == to else (value * f / table[to], to)
    return value, unit


def convert(value: float, unit: str, to: str) -> Optional[float]:
    """``value`` in ``unit`` expressed in ``to`` (time in any of :data:`TIME_UNITS`, bit
    rates in any of :data:`BIT_RATE_UNITS`, other units only as themselves); None when
    the two are not units of one quantity."""
    if unit == to:
        return value
    for table in (TIME_UNITS, BIT_RATE_UNITS):
        if unit in table and to in table:
            return value * table[unit] / table[to]
    return None
