"""The ``atmsim`` command line.

Commands: ``run``, ``describe``, ``sweep``, ``export``, ``reproduce``, ``dimension``, ``validate``, ``bench``.  The logic lives in
:mod:`atmsim.api`, :mod:`atmsim.validate` and :mod:`atmsim.bench`; this module only
parses arguments, prints, and maps errors to exit codes:

* bad input (``ScenarioError``/``ParamError``, missing or unreadable file, bad
  ``--set``) → one line ``atmsim: error: <message>`` on stderr, exit 2;
* usage errors (unknown option, missing argument) → click's usage message, exit 2;
* a failed run (``SimulationError``) → one line, exit 1;
* Ctrl-C → ``atmsim: interrupted``, exit 130.
Never a traceback for any of these.
"""
import contextlib
import copy
import json
import math
import shutil
import signal
import sys
import textwrap
import warnings
from typing import Annotated, Any, Iterator, Optional

import typer

from atmsim import api
from atmsim.exceptions import AtmsimError, AtmsimWarning, ScenarioError, SimulationError
from atmsim.paths import STDOUT, check_output
from atmsim.progress import RunProgress
from atmsim.units import DEFAULT_RATE_UNIT, DEFAULT_TIME_UNIT, RATE_CHOICES, TIME_CHOICES, check_units, fmt_value, to_display

app = typer.Typer(
    name="atmsim",
    help="atmsim — a fast cell-level discrete-event simulator for ATM networks.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,  # user errors are one line; real bugs keep a plain traceback
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        import atmsim

        print(f"atmsim {atmsim.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_print_version,
        help="Print \"atmsim VERSION\" and exit (atmsim version prints the version alone).")] = False,
) -> None:
    """atmsim — a fast cell-level discrete-event simulator for ATM networks."""


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _die(message: str, code: int) -> None:
    print(f"atmsim: error: {message}", file=sys.stderr)
    raise SystemExit(code)


class Terminated(Exception):
    """SIGTERM arrived (raised by the handler :func:`_interruptible` installs)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C → exit 130, SIGTERM → exit 143, each with one line; the exception
    unwinds through the sweep, which stops its workers and fork server on the way."""
    old = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    except KeyboardInterrupt:
        print("atmsim: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except Terminated:
        print("atmsim: terminated (SIGTERM); runs completed so far are kept", file=sys.stderr)
        raise SystemExit(143) from None
    finally:
        signal.signal(signal.SIGTERM, old)


def parse_set(items: Optional[list[str]]) -> dict[str, str]:
    """``["mux.capacity=256 cells", ...]`` → ``{"mux.capacity": "256 cells"}``.
    One pair of surrounding quotes on the value is removed.  Raises ScenarioError."""
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or "." not in key or not value:
            raise ScenarioError(
                f"--set {item!r}: expected KEY=VALUE with KEY as COMPONENT.PARAM or scenario.KEY, "
                f"e.g. --set 'mux.capacity=256 cells'"
            )
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key] = value
    return out


def _fmt(value: Any) -> str:
    return fmt_value(value)


def _display_units(units: Optional[list[str]]) -> tuple[str, str]:
    try:
        return check_units(units)
    except ValueError as exc:
        raise ScenarioError(str(exc)) from None


def terminal_width() -> Optional[int]:
    """Columns of the terminal (``COLUMNS`` first, then the terminal on stdout); None
    when neither says (a pipe or file: lines are not wrapped)."""
    cols = shutil.get_terminal_size(fallback=(0, 0)).columns
    return cols if cols > 0 else None


def _wrapped(text: str) -> str:
    """``text`` wrapped to the terminal's width (continuation lines indented), as it
    is when there is no terminal."""
    width = terminal_width()
    if width is None or len(text) <= width:
        return text
    return textwrap.fill(text, width=max(width, _MIN_COL + 4), subsequent_indent="    ", break_on_hyphens=False)


#: Narrowest a column is made to fit the terminal (its header's length if longer).
_MIN_COL = 12


def _table(rows: list[list[str]], header: list[str], indent: str = "", width: Optional[int] = None) -> str:
    """Columns padded to their widest cell.  When the table is wider than ``width``
    (default: :func:`terminal_width`; None: no limit) the widest columns are narrowed,
    one character at a time, down to 12 characters (then, if need be, to their header's
    width) and their cells wrapped onto continuation lines."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    width = terminal_width() if width is None else width
    if width is not None:
        # first down to 12 characters (or the header), then, if need be, to the header
        for floor in ([max(_MIN_COL, len(h)) for h in header], [max(4, len(h)) for h in header]):
            while len(indent) + sum(widths) + 2 * (len(widths) - 1) > width:
                i = max(range(len(widths)), key=lambda j: (widths[j] - floor[j], widths[j]))
                if widths[i] <= floor[i]:
                    break  # as narrow as this floor allows
                widths[i] -= 1
    lines = [indent + "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines.append(indent + "  ".join("-" * w for w in widths))
    for r in rows:
        pieces = [(textwrap.wrap(c, w, break_on_hyphens=False) or [""]) if len(c) > w else [c]
                  for c, w in zip(r, widths)]
        for k in range(max(len(p) for p in pieces)):
            lines.append(indent + "  ".join((p[k] if k < len(p) else "").ljust(w)
                                             for p, w in zip(pieces, widths)).rstrip())
    return "\n".join(lines)


#: Rows a printed table holds at most: a run of 100,000 components has millions of
#: probe rows, which no one reads on a terminal and which took longer to format than
#: the run (issue 44 item 1); past it the table is replaced by one line saying how to
#: get the rows (--json, Result.probes, [probes] keep).
TABLE_ROWS = 20_000


def format_result(res: api.Result, path: str, rate_unit: str = DEFAULT_RATE_UNIT,
                  time_unit: str = DEFAULT_TIME_UNIT) -> str:
    s = res.summary
    wall = s["wall_s"]
    rate = s["events"] / wall if wall > 0 else float("inf")
    out = [
        f"scenario     {s['name']}  ({path})",
        f"seed / run   {s['seed']} / {s['run']}",
        f"fingerprint  {s['fingerprint']}",
        f"simulated    {_fmt(s['duration_s'])} s (warm-up {_fmt(s['warmup_s'])} s)",
        f"events       {s['events']:,}",
        f"wall time    {wall:.3f} s ({rate / 1e6:.2f} M events/s)",
    ]
    if s.get("check_wire"):
        out.append(f"check-wire   {s['wire_checked']:,} PDUs emitted through the wire layer and parsed back: all equal")
    out += [
        "",
    ]
    rows: list[list[str]] = []
    last = None
    hidden = 0
    raw_probes = res.raw.get("probes", [])
    if len(raw_probes) > TABLE_ROWS:
        out.append(f"probes       {len(raw_probes):,} rows, more than a table shows ({TABLE_ROWS:,}): write them with --json "
                   "or read Result.probes in Python, or keep fewer with [probes] keep = [\"COMPONENT.PROBE\", ...]")
        raw_probes = []
    for comp, probe, stat, value, unit in raw_probes:  # the raw rows: no pandas for a run
        # A tail distribution (p_gt_0..p_gt_N) ends in a run of zeros: show the first
        # zero only, to keep the table readable (--json has every row).
        if stat.startswith("p_gt_") and value == 0 and rows and rows[-1][1] == probe and rows[-1][3] == "0":
            hidden += 1
            continue
        shown, shown_unit = to_display(float(value), unit, rate_unit, time_unit)
        rows.append([comp if comp != last else "", probe, stat, _fmt(shown), shown_unit])
        last = comp
    if rows:
        out.append(_table(rows, ["component", "probe", "statistic", "value", "unit"]))
    if hidden:
        out.append(f"({hidden} further zero tail rows not shown; see --json)")
    led = s["ledger"]
    dropped = led.get("dropped", {})
    drop_total = sum(dropped.values())
    causes = ", ".join(f"{k}: {v:,}" for k, v in sorted(dropped.items())) or "none"
    out += [
        "",
        f"ledger       generated {led['generated']:,}"
        + (f" + replicated {led['replicated']:,}" if led.get("replicated") else "")
        + f" = delivered {led['delivered']:,}"
        f" + dropped {drop_total:,} ({causes}) + in flight {led['in_flight']:,}",
    ]
    flows = s.get("flows") or []
    if len(flows) > TABLE_ROWS:
        out += ["", f"flows        {len(flows):,}, more than a table shows ({TABLE_ROWS:,}): per flow in --json or Result.flows"]
        flows = []
    if flows:
        cols = ["flow", "source", "vc", "generated", "replicated", "delivered", "dropped", "in_flight"]
        frows = [[_fmt(f.get(c, "")) if not isinstance(f.get(c), int) else f"{f[c]:,}" for c in cols] for f in flows]
        out += ["", _table(frows, cols)]
    series = res.raw.get("series") or []
    if series:
        srows = []
        for x in series:
            vals = [to_display(v, x["unit"], rate_unit, time_unit)[0] for v in x["values"] if v is not None and math.isfinite(v)]
            stats = [_fmt(min(vals)), _fmt(sum(vals) / len(vals)), _fmt(max(vals))] if vals else ["-"] * 3
            srows.append([x["component"], x["probe"], x["kind"], f"{len(x['values']):,} × {_fmt(x['interval_s'])} s", *stats,
                          to_display(0.0, x["unit"], rate_unit, time_unit)[1]])
        out += ["", _table(srows, ["series", "probe", "kind", "samples", "min", "mean", "max", "unit"]),
                "(every sample: --series-csv FILE, --json, or Result.series in Python)"]
    return "\n".join(out)


@app.command("run")
def run_cmd(
    scenario: Annotated[str, typer.Argument(help="Scenario file (.toml).")],
    seed: Annotated[Optional[int], typer.Option("--seed", help="Master seed, 0 to 2^64-1 (default: the scenario's).")] = None,
    run: Annotated[int, typer.Option("--run", help="Replication number (independent random streams), 0 to 2^64-1.")] = 0,
    set_: Annotated[Optional[list[str]], typer.Option(
        "--set", metavar="KEY=VALUE",
        help="Override a parameter, e.g. --set 'mux.capacity=64 cells' or --set scenario.duration='2 s'. Repeatable.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    series_csv: Annotated[Optional[str], typer.Option(
        "--series-csv", metavar="FILE",
        help="Write the [probes] series to FILE as CSV (component, probe, time, value, unit, kind); "
             "- writes it to standard output (instead of the tables).")] = None,
    units: Annotated[Optional[list[str]], typer.Option(
        "--units", metavar="UNIT[,UNIT]",
        help=f"Show every bit rate (throughputs, b/s to Gb/s across kinds) in one of {', '.join(RATE_CHOICES)} "
             f"(default {DEFAULT_RATE_UNIT}) and every time (delays, waits, RTTs) in one of "
             f"{', '.join(TIME_CHOICES)} (default {DEFAULT_TIME_UNIT}), e.g. --units kb/s,us; repeatable; "
             f"--json keeps each model's own unit.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    check_wire: Annotated[bool, typer.Option(
        "--check-wire",
        help="Byte-exact checking: emit every payload-carrying PDU through the wire layer (cell header + HEC, "
             "AAL5 + CRC-32, LLC/SNAP, IPv4/TCP + checksums) and parse it back at the receiver; "
             "any mismatch fails the run (same as [scenario] check_wire = true).")] = False,
    fingerprint_content: Annotated[bool, typer.Option(
        "--fingerprint-content",
        help="Make the fingerprint cover what each delivered message carries (cell fields, payloads), "
             "not only when and where it was delivered; about 5% slower on plain cell queues "
             "(same as [scenario] fingerprint_content = true).")] = False,
    cell_trace: Annotated[Optional[str], typer.Option(
        "--cell-trace", metavar="FILE",
        help="Write a cell-by-cell trace to FILE as CSV: every cell delivered to a component's input (r), "
             "starting its transmission on a line (-) or dropped (d, with its cause), in time order, and the same for "
             "FDDI frames (unit = frame; at the ring's stations RING/sI); narrow it with the scenario's [trace] table or "
             "--set trace.flows=SOURCE, trace.vcs=VC, trace.at=COMPONENT, trace.from/to=TIME, trace.limit=N, "
             "trace.frames=false "
             "(docs/architecture.md, \"Cell traces\"); - writes it to standard output (instead of the tables).")] = None,
    pcap: Annotated[Optional[list[str]], typer.Option(
        "--pcap", metavar="HOST=FILE",
        help="Capture every AAL5 PDU the host sends or receives into FILE, a libpcap file for tcpdump or "
             "Wireshark (link type SUNATM: LLC/SNAP, IPv4 and TCP/UDP/ICMP headers); the same as "
             "--set HOST.pcap=FILE. Repeatable.")] = None,
) -> None:
    """Run one replication of a scenario and print its summary, probes, series and ledger."""
    rate_unit, time_unit = _display_units(units)
    overrides = parse_set(set_)
    captures = []  # (host, file): each is the override HOST.pcap=FILE
    for item in pcap or []:
        host, sep, path = (part.strip() for part in item.partition("="))
        if not sep or not host or not path:
            raise ScenarioError(f"--pcap {item}: give HOST=FILE, e.g. --pcap sender=sender.pcap")
        overrides[f"{host}.pcap"] = path
        captures.append((host, path.replace("{run}", str(run))))
    to_stdout = [flag for flag, path in (("--series-csv", series_csv), ("--cell-trace", cell_trace)) if path == STDOUT]
    if len(to_stdout) > 1 or to_stdout and json_out:
        raise ScenarioError(f"{' and '.join(to_stdout + (['--json'] if json_out else []))}: only one of them can "
                            f"write to standard output; give the other a file")
    outputs = [("--series-csv", series_csv, True), ("--cell-trace", cell_trace, True)]
    from_pcap = {f"{host}.pcap" for host, _ in captures}
    outputs += [("--pcap" if key in from_pcap else f"--set {key}=", value.replace("{run}", str(run)), False)
                for key, value in overrides.items() if key.endswith(".pcap")]
    check_outputs(outputs)
    if check_wire:
        overrides["scenario.check_wire"] = "true"
    if fingerprint_content:
        overrides["scenario.fingerprint_content"] = "true"
    if cell_trace:
        overrides["trace.cells"] = "true"
    sc = api.apply_overrides(api.load(scenario), overrides, "--set")
    api.check_seed_run(seed, run, names=("--seed", "--run"))
    with contextlib.ExitStack() as stack:
        trace_to = cell_trace or None
        if cell_trace == STDOUT:  # streamed to a scratch file during the run, then copied out
            import os
            import tempfile

            trace_to = os.path.join(stack.enter_context(tempfile.TemporaryDirectory(prefix="atmsim-trace-")),
                                    "trace.csv")
        with _interruptible(), RunProgress(label=sc.name, enabled=False if quiet else None) as bar, \
                warnings.catch_warnings():
            warnings.simplefilter("ignore", AtmsimWarning)  # printed below as one line each
            res = sc.run(seed=seed, run=run, progress=bar, cell_trace=trace_to)
        for w in res.warnings:
            print(f"atmsim: warning: {w}", file=sys.stderr)
        if series_csv:
            _write_series_csv(res, series_csv)
        if cell_trace == STDOUT:
            sys.stdout.flush()
            with open(trace_to, "rb") as fh:
                shutil.copyfileobj(fh, sys.stdout.buffer)
            sys.stdout.buffer.flush()
    if to_stdout:
        return  # standard output carries that CSV alone
    if json_out:
        print(json.dumps(res.to_json_obj(), allow_nan=False))
    else:
        print(format_result(res, scenario, rate_unit, time_unit))
        for host, path in captures:
            print(f"capture      {host}: {path} (libpcap, SUNATM)")
        if cell_trace:
            print(f"cell trace   {cell_trace}: {res.raw['trace_rows']:,} rows (CSV)")


def _write_series_csv(res: api.Result, path: str) -> None:
    if not res.raw.get("series"):
        raise ScenarioError(f"{path}: the scenario asks for no series; add [probes] series = [\"COMPONENT.NAME\", ...]")
    _write_csv(res.series, path, "the series")


def check_outputs(outputs: "list[tuple[str, Optional[str], bool]]", *, directory: bool = False,
                  example: str = "out.csv") -> None:
    """Every output path a command writes, as ``(flag, path, stdout_ok)``, checked
    before any work (:func:`atmsim.paths.check_output`; ``directory``: paths of
    directories, created if missing): the first that cannot be written is one line
    naming the flag, the path and what is wrong (exit 2).  Every command that writes
    calls it first."""
    for flag, path, stdout_ok in outputs:
        check_output(flag, path, stdout_ok=stdout_ok, directory=directory, example=example)


def _write_csv(frame, path: str, what: str) -> None:
    if path == STDOUT:
        frame.to_csv(sys.stdout, index=False)
        return
    try:
        frame.to_csv(path, index=False)
    except OSError as e:
        raise ScenarioError(f"{path}: cannot write {what}: {e.strerror or e}") from None


@app.command("describe")
def describe_cmd(
    kind: Annotated[Optional[str], typer.Argument(help="A component kind, e.g. fifo.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List component kinds, or show one kind's parameters, ports and probes."""
    info = api.describe(kind)
    if json_out:
        print(json.dumps(info, allow_nan=False))
        return
    if kind is None:
        print(_table([[k["kind"], k.get("help", "")] for k in info], ["kind", "help"]))
        return
    print(_wrapped(f"{info['kind']}: {info.get('help', '')}"))
    if info.get("source"):
        print(_wrapped(f"source: {info['source']}"))
    params = info.get("params", [])
    print("\nparameters:")
    prow = [[p["name"], p.get("unit") or "", "" if p.get("default") is None else str(p["default"]),
             "yes" if p.get("required") else "no", p.get("source") or "", p.get("help") or ""]
            for p in params]
    print(_table(prow, ["name", "unit", "default", "required", "source of default", "help"], indent="  "))
    ins, outs = info.get("carries", ([], []))
    print("\n" + _wrapped(f"inputs:  {', '.join(f'{n} ({c})' for n, c in ins) or '-'}"))
    print(_wrapped(f"outputs: {', '.join(f'{n} ({c})' for n, c in outs) or '-'}"))
    print("\nprobes:")
    qrow = [[q["name"], q.get("unit") or "", q.get("kind") or "", q.get("help") or ""] for q in info.get("probes", [])]
    print(_table(qrow, ["name", "unit", "kind", "help"], indent="  "))
    srow = [[f"{info['kind'].upper()}{'/' + q['at'] if q['at'] else ''}.{q['name']}", q["unit"], q["kind"], q["help"]]
            for q in info.get("series", [])]
    print("\n" + _wrapped("series ([probes] series = [\"NAME[/SUB].SERIES\"], NAME the component's name):"))
    print(_table(srow, ["series", "unit", "kind", "help"], indent="  ") if srow else "  none")


@app.command("sweep")
def sweep_cmd(
    scenario: Annotated[str, typer.Argument(help="Scenario file (.toml) with a [sweep] table.")],
    db: Annotated[str, typer.Option("--db", help="Result store (SQLite); runs already done in it are skipped.")],
    quick: Annotated[bool, typer.Option("--quick", help="quick_replications and the [sweep.quick] overrides.")] = False,
    executor: Annotated[str, typer.Option("--executor", help="local (process pool) or dask.")] = "local",
    scheduler: Annotated[Optional[str], typer.Option(
        "--scheduler", metavar="tcp://HOST:PORT", help="Dask scheduler to use (default: a LocalCluster).")] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", "-j", help="Worker processes (default: all cores).")] = None,
    set_: Annotated[Optional[list[str]], typer.Option(
        "--set", metavar="KEY=VALUE", help="Override a parameter at every point (part of the run keys). Repeatable.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    allow_mixed: Annotated[bool, typer.Option(
        "--allow-mixed", help="Resume even over runs made by another atmsim version or from another text of the "
                              "scenario file (refused by default).")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Check the sweep and list the points and runs it would make (and how many are already "
                          "done in the store) without running anything or writing the store.")] = False,
) -> None:
    """Run a scenario's parameter sweep with replications into a resumable result store."""
    from atmsim import sweep, store
    from atmsim.progress import stderr_is_tty

    overrides = parse_set(set_)
    if dry_run:
        _sweep_plan(scenario, db, quick, overrides)
        return
    check_outputs([("--db", db, False)], example="results.sqlite")
    try:
        with _interruptible():
            res = sweep.run_sweep(scenario, db, quick=quick, executor=executor, workers=workers,
                                  scheduler=scheduler, progress=not quiet and stderr_is_tty(), overrides=overrides,
                                  allow_mixed=allow_mixed)
    except store.StorePathError as exc:
        _die(_one_line(exc), 2)
    except store.StoreError as exc:
        _die(_one_line(exc), 1)
    except ScenarioError as exc:  # the Python API calls --set "overrides"
        raise api.renamed(exc, "overrides", "--set") from None
    spec = res.spec
    n_runs = len(res.runs)
    n_failed = len(res.failures)
    print(f"sweep        {spec.name}  ({scenario}){'  --quick' if quick else ''}")
    print(_points_line(spec, len(spec.point_indices(quick))))
    print(f"runs         {n_runs}: {n_runs - n_failed} done, {n_failed} failed "
          f"({res.executed} run now, {res.skipped} already in the store)")
    print(f"executor     {res.executor}" + (f", pool restarted {res.restarts}x" if res.restarts else ""))
    print(f"wall time    {res.wall_s:.2f} s")
    print(f"store        {db}  (atmsim export --db {db} --what stats --out stats.csv)")
    if spec.target is not None and not quick:
        t = spec.target
        sel = res.stats[(res.stats["component"] == t.component) & (res.stats["probe"] == t.probe)
                        & (res.stats["statistic"] == t.statistic)]
        rows = [[str(int(p)), json.dumps(spec.written[int(p)], ensure_ascii=False), str(int(n)), _fmt(float(m)),
                 note or f"[{_fmt(float(lo))}, {_fmt(float(hi))}]"]
                for p, n, m, lo, hi, note in sel[["point", "n", "mean", "ci_low", "ci_high", "ci_note"]]
                .itertuples(index=False)]
        print(f"\ntarget {t.component}.{t.probe}.{t.statistic} (CI half-width <= {t.rel_half_width:g} x |mean|, "
              f"at most {t.max_replications} replications):")
        print(_table(rows, ["point", "values", "n", "mean", "95% CI"], indent="  "))
    if spec.precision and not quick:
        rep = res.precision
        t0 = spec.precision[0]
        names = ", ".join(f"{t.component}.{t.probe}.{t.statistic}" for t in spec.precision)
        print(f"\nprecision: 95% CI half-width <= {t0.rel_half_width:g} x |mean| for {names}; "
              f"at most {t0.max_replications} replications per point:")
        rows = [[str(int(r.point)), json.dumps(spec.written[int(r.point)], ensure_ascii=False), str(int(r.replications)),
                 "met" if r.met else ("NOT met, hit the cap" if r.hit_cap else "NOT met"), r.unmet]
                for r in rep.itertuples(index=False)]
        print(_table(rows, ["point", "values", "replications", "precision", "not met (relative half-width)"],
                     indent="  "))
        capped = [str(int(p)) for p in rep.loc[rep["hit_cap"], "point"]]
        print(f"  {len(capped)} of {len(rep)} points hit the cap" + (f": {', '.join(capped)}" if capped else ""))
    if res.failures:
        print(f"\nfailed runs ({n_failed}; re-run the same command to retry them):", file=sys.stderr)
        shown = 20
        for f in res.failures[:shown]:
            vals = json.dumps(f["values"], ensure_ascii=False)
            print(f"  point {f['point']} {vals} replication {f['replication']} seed {f['seed']}: {f['error']}",
                  file=sys.stderr)
        if n_failed > shown:
            print(f"  ... and {n_failed - shown} more (atmsim export --db {db} --what runs lists them all)",
                  file=sys.stderr)
        raise SystemExit(1)


def _points_line(spec: Any, ran: int) -> str:
    """The summary line of a sweep's points: how many run (of how many, when
    ``[sweep.quick]`` lists select some) and the swept keys."""
    shown = f"{ran} of {len(spec.points)} ([sweep.quick] lists)" if ran != len(spec.points) else f"{ran}"
    return f"points       {shown} ({', '.join(spec.keys) or 'no swept keys'})"


def _sweep_plan(scenario: str, db: str, quick: bool, overrides: dict[str, str]) -> None:
    """`atmsim sweep --dry-run`: the points and runs a sweep would make."""
    from atmsim import sweep, store

    try:
        spec, plan = sweep.plan_rows(scenario, db, quick=quick, overrides=overrides)  # no pandas
    except store.StoreError as exc:
        _die(_one_line(exc), 1)
    except ScenarioError as exc:
        raise api.renamed(exc, "overrides", "--set") from None
    planned, done = sum(r["replications"] for r in plan), sum(r["done"] for r in plan)  # at least one point
    print(f"sweep        {spec.name}  ({scenario}){'  --quick' if quick else ''}  (dry run: nothing runs)")
    print(_points_line(spec, len(plan)))
    rule = "" if quick or not spec.targets else "; a precision rule adds rounds where its interval is still too wide"
    print(f"runs         {planned}: {done} already done in {db}, {planned - done} to run{rule}")
    rows = [[str(int(r["point"])), json.dumps(spec.written[int(r["point"])], ensure_ascii=False), str(int(r["seed"])),
             str(int(r["replications"])), str(int(r["done"]))] for r in plan]
    print(_table(rows, ["point", "values", "seed", "replications", "done"], indent="  "))


@app.command("export")
def export_cmd(
    db: Annotated[str, typer.Option("--db", help="Result store written by atmsim sweep.")],
    out: Annotated[str, typer.Option("--out", help="Output file: .parquet or .csv; - writes CSV to standard output.")],
    what: Annotated[str, typer.Option("--what", help="runs, values (probe values per run), stats (per point) or series (time-series samples per run).")] = "runs",
) -> None:
    """Export a result store to Parquet or CSV."""
    check_outputs([("--out", out, True)])
    from atmsim import export, store

    try:
        n = export.export(db, out, what)
    except store.StorePathError as exc:
        _die(_one_line(exc), 2)
    # with --out -, standard output carries the CSV alone
    print(f"{out}: {n} rows ({what})", file=sys.stderr if out == STDOUT else sys.stdout)


@app.command("reproduce")
def reproduce_cmd(
    name: Annotated[str, typer.Argument(help="A paper (buddhikot92, evans96, domingo95, dastangoo96, lazarou96) or all.")],
    quick: Annotated[bool, typer.Option("--quick", help="Fewer replications and shorter runs (seconds, not minutes).")] = False,
    out: Annotated[str, typer.Option("--out", help="Output directory: report.html, comparison.csv, results.sqlite, figures/.")] = "out",
    workers: Annotated[Optional[int], typer.Option("--workers", "-j", help="Worker processes (default: all cores).")] = None,
    executor: Annotated[str, typer.Option("--executor", help="local (process pool) or dask.")] = "local",
    scheduler: Annotated[Optional[str], typer.Option(
        "--scheduler", metavar="tcp://HOST:PORT", help="Dask scheduler to use (default: a LocalCluster).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Reproduce a paper's experiments: sweeps, figures, comparison.csv and an HTML report."""
    from atmsim import reproduce as rep
    from atmsim import store
    from atmsim.progress import stderr_is_tty

    if executor not in ("local", "dask"):
        _die(f"--executor {executor!r}: expected local or dask", 2)
    check_outputs([("--out", out, False)], directory=True)
    rep.resolve(name)  # a bad name is one line and exit 2, before any work
    try:
        with _interruptible():
            res = rep.reproduce(name, out, quick=quick, executor=executor, workers=workers, scheduler=scheduler,
                                progress=not quiet and stderr_is_tty())
    except store.StorePathError as exc:
        _die(_one_line(exc), 2)
    except store.StoreError as exc:
        _die(_one_line(exc), 1)
    for p in res.papers:
        n_pred = sum(r.is_prediction for r in p.rows)
        fails = f", {p.failures} failed runs" if p.failures else ""
        print(f"{p.repro.name:<12} {len(p.rows)} comparison rows ({n_pred} predictions), "
              f"{len(p.figures)} figures{fails}  -> {p.page}")
    print(f"comparison   {res.comparison}")
    print(f"results      {res.db}")
    print(f"report: {res.report}")
    if res.failures:
        print(f"atmsim: error: {res.failures} runs failed; see the report and the store", file=sys.stderr)
        raise SystemExit(1)


@app.command("dimension")
def dimension_cmd(
    scenario: Annotated[str, typer.Argument(help="Scenario file (.toml); its [sweep] table is ignored.")],
    key: Annotated[str, typer.Option("--key", help="The size to dimension, COMPONENT.PARAM (e.g. gw.tx_buffer_frames, mux.capacity).")],
    target: Annotated[str, typer.Option("--target", help="COMPONENT.PROBE[.STATISTIC] <= LIMIT [UNIT] (or >=), e.g. 'gw.mpp_frame_loss <= 1e-3', "
                                                  "'sink/vc1.sink_delay.p99_9 <= 250 us' (no unit: the probe's own), "
                                                  "'sink/vc1.sink_goodput.ratio >= 0.99'.")],
    low: Annotated[int, typer.Option("--min", help="Smallest size tried.")] = 1,
    high: Annotated[int, typer.Option("--max", help="Largest size tried.")] = 256,
    unit: Annotated[str, typer.Option("--unit", help="Unit written after the size (e.g. cells); none for a bare count.")] = "",
    replications: Annotated[int, typer.Option("--replications", "-n", help="Replications per size (95% CI).")] = 6,
    set_: Annotated[Optional[list[str]], typer.Option(
        "--set", metavar="KEY=VALUE", help="Override a parameter (the traffic, say) in every run. Repeatable.")] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", "-j", help="Worker processes (default: all cores).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
    largest: Annotated[bool, typer.Option(
        "--largest", help="The largest size that meets the target, for a statistic that does not fall as the size "
                          "grows (a CLP = 0 loss against clp_threshold, a delay quantile against a buffer).")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the answer and every size evaluated as JSON.")] = False,
) -> None:
    """The smallest buffer (any size parameter) whose loss meets a target, by bisection with 95% CIs
    (--largest: the largest size that meets it)."""
    from atmsim import dimension as dim

    overrides = parse_set(set_)
    tgt = dim.parse_target(target)
    dim.check_inputs(scenario, key, low, high, tgt, unit=unit, replications=replications, overrides=overrides)

    def show(e: "dim.Evaluation") -> None:
        if not quiet:
            ci = e.note or f"95% CI [{_fmt(e.ci_low)}, {_fmt(e.ci_high)}]"
            # through the bar, so that the line is printed above it, not through it
            bar.write(f"  {key} = {e.size} {unit}".rstrip() + f": mean {_fmt(e.mean)}, {ci} -> "
                      f"{'meets' if e.meets else 'does not meet'}", file=sys.stderr)

    if not quiet:
        print(f"dimension {key} in [{low}, {high}] for {tgt}{' (the largest size)' if largest else ''}, "
              f"{replications} replications per size",
              file=sys.stderr, flush=True)
    from atmsim.progress import progress_iter

    # a bar over the replications (at most max_evaluations sizes; it ends early when the
    # bisection does), shown like every other bar: after 2 s, on a terminal, not with -q
    bar = progress_iter(None, total=replications * dim.max_evaluations(low, high), desc="dimension",
                        enabled=None if not quiet else False)
    try:
        with _interruptible():
            ans = dim.dimension(scenario, key, low, high, tgt, unit=unit, replications=replications,
                                overrides=overrides, workers=workers, on_eval=show, on_run=lambda: bar.update(1),
                                largest=largest)
    finally:
        bar.close()
    sets = ", ".join(f"{k} = {v}" for k, v in overrides.items())
    context = f"in {scenario}" + (f" with {sets}" if sets else "")
    if ans.warning:
        print(f"atmsim: warning: {ans.warning}", file=sys.stderr)
    if json_out:
        print(json.dumps(ans.to_dict(context), indent=2))
    else:
        print(ans.sentence(context))
    raise SystemExit(0 if ans.size is not None else 1)


@app.command("validate")
def validate_cmd(
    quick: Annotated[bool, typer.Option("--quick", help="Fewer, shorter replications (CI: < 2 minutes).")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Compare simulated results with exact queueing theory (M/D/1, M/D/1/K with and without partial buffer sharing, on-off, N*D/D/1, ...)."""
    from atmsim import validate

    with _interruptible():
        code = validate.main(quick=quick, json_out=json_out, progress=not quiet)
    raise SystemExit(code)


@app.command("bench")
def bench_cmd(
    quick: Annotated[bool, typer.Option("--quick", help="10x fewer events (smoke test, not a measurement).")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    sweep: Annotated[bool, typer.Option(
        "--sweep", help="Instead: sweep overhead per run (local pool + store) and 1 vs 2 worker speed-up.")] = False,
    scale: Annotated[bool, typer.Option(
        "--scale", help="Instead: cells/s against 10 ... 100,000 VCs through a 16-port switch, events/s against pending events.")] = False,
    plot: Annotated[Optional[str], typer.Option(
        "--plot", help="With --scale: also draw the two curves into this image file (.png, .svg, .pdf).")] = None,
) -> None:
    """Hold-model, cell-queue and mux benchmarks: atmsim vs hand-written Rust, Lindley and SimPy."""
    from atmsim import bench

    with _interruptible():
        if plot is not None:
            if not scale:
                _die("--plot draws the --scale curves: give --scale with it", 2)
            if not plot.lower().endswith((".png", ".svg", ".pdf")):
                _die(f"--plot {plot!r}: expected a file name ending in .png, .svg or .pdf", 2)
            check_outputs([("--plot", plot, False)], example="scale.png")
        if scale:
            bench.scale_main(quick=quick, json_out=json_out, plot=plot)
            return
        if sweep:
            bench.sweep_main(quick=quick, json_out=json_out)
            return
        bench.main(quick=quick, json_out=json_out)


@app.command("trace")
def trace_cmd(
    file: Annotated[str, typer.Argument(help="A trace: TIME LENGTH lines, frame sizes, or a libpcap/pcapng capture; data:NAME for a shipped one.")],
    format_: Annotated[str, typer.Option("--format", help="packets, frames or pcap (as the trace source's format).")] = "packets",
    direction: Annotated[str, typer.Option("--direction", help="pcap: both, sent or received.")] = "both",
    vc: Annotated[Optional[str], typer.Option("--vc", help="pcap, SunATM: only this VC, VPI/VCI or VCI.")] = None,
    filter_: Annotated[Optional[str], typer.Option(
        "--filter", help="pcap: only the packets this tcpdump-style filter passes, e.g. 'tcp port 5001' "
                         "(the trace source's capture_filter).")] = None,
    frame_rate: Annotated[float, typer.Option("--frame-rate", help="Frames per second (frames).")] = 24.0,
    bin_: Annotated[str, typer.Option("--bin", help="Bin for the peak rate and the Hurst estimates.")] = "10 ms",
    overhead: Annotated[int, typer.Option("--overhead", help="Octets added per packet before AAL5 segmentation.")] = 16,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """What a trace offers a network, read as the trace source reads it: packets, rates, AAL5 cells, peak, Hurst parameter."""
    from atmsim import _atmsim
    from atmsim.exceptions import ParamError
    from atmsim.traces import HURST_MIN_BINS, read_trace, summarize_trace

    bin_s = _atmsim.parse_time_s(bin_)
    if bin_s <= 0:
        raise ParamError(f"--bin {bin_}: a time longer than 0 s")
    if not 0 <= overhead <= 65_535:
        raise ParamError(f"--overhead {overhead}: octets, 0..65535")
    frames = format_ == "frames"
    try:
        summary = summarize_trace(read_trace(file, format_, direction, frame_rate, vc, filter_), bin_s, overhead,
                                  frame_rate if frames else None)
    except ValueError as exc:
        raise ScenarioError(f"{file}: {exc}") from None
    if json_out:
        print(json.dumps(summary.as_dict(), allow_nan=False))
        return
    s = summary
    unit = "frames" if frames else "packets"
    if s.bins < HURST_MIN_BINS:
        hurst = f"not estimated: fewer than {HURST_MIN_BINS} bins (a shorter --bin gives more)"
    elif s.hurst_aggregated_variance is None or s.hurst_periodogram is None:
        hurst = "not estimated: the octets per bin hardly vary"
    else:
        hurst = f"{s.hurst_aggregated_variance:.3f} (aggregated variance), {s.hurst_periodogram:.3f} (log-periodogram)"
    rows = [
        [unit, f"{s.packets:,}"],
        ["octets", f"{s.octets:,} (per {unit[:-1]}: min {s.min_octets:,}, mean {s.mean_octets:,.1f}, max {s.max_octets:,})"],
        ["duration", f"{_fmt(s.duration)} s (one pass: {'N / frame rate' if frames else 'the span plus one mean gap'})"],
        ["mean rate", f"{_fmt(s.mean_rate / 1e6)} Mb/s"],
        ["AAL5 cells", f"{s.cells:,} ({_fmt(s.cell_rate / 1e6)} Mb/s of cells at {overhead} octets of overhead per {unit[:-1]})"],
        ["peak rate", f"{_fmt(s.peak_rate / 1e6)} Mb/s (the busiest of {s.bins:,} bins of {bin_})"],
        ["Hurst H", f"{hurst}, octets per bin"],
    ]
    print(f"trace {file} ({format_}{'' if direction == 'both' else ', ' + direction}{'' if vc is None else ', VC ' + vc}"
          f"{'' if filter_ is None else ', filter ' + repr(filter_)})")
    print("\n".join(f"  {a:<11} {b}" for a, b in rows))


@app.command("version")
def version_cmd() -> None:
    """Print the atmsim version."""
    import atmsim

    print(atmsim.__version__)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    """atmsim's own warnings (a load above a line rate, say) as one line each."""
    if issubclass(category, AtmsimWarning):
        print(f"atmsim: warning: {message}", file=sys.stderr)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning


def _app_for(argv: Optional[list[str]]) -> typer.Typer:
    """The app with only the command invoked: typer builds every registered command's
    parameters from its signature on each call (about 20 ms of a 1 ms run's start-up).
    The whole app for the root's options and help, and for a name that is no command
    (click's suggestion needs them all)."""
    args = sys.argv[1:] if argv is None else argv
    chosen = [c for c in app.registered_commands if args and c.name == args[0]]
    if not chosen:
        return app
    one = copy.copy(app)
    one.registered_commands = chosen
    return one


def main(argv: Optional[list[str]] = None) -> None:
    """Console-script entry point."""
    warnings.showwarning = _show_warning
    try:
        _app_for(argv)(args=argv, prog_name="atmsim")
    except ScenarioError as exc:  # includes ParamError
        _die(_one_line(exc), 2)
    except SimulationError as exc:
        _die(_one_line(exc), 1)
    except AtmsimError as exc:
        _die(_one_line(exc), 1)
    except KeyboardInterrupt:
        print("atmsim: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except BrokenPipeError:
        # `atmsim run x.toml | head`: not an error worth a traceback
        sys.stderr.close()
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
