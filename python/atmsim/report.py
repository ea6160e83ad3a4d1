"""The reproduction report: ``comparison.csv`` and self-contained HTML pages.

Pages use relative links to the figures, inline CSS, no scripts and no external
resources, so ``DIR/`` can be zipped, mailed or served as it is.  Every piece of text
that comes from a scenario file, a sweep or a reproduction is HTML-escaped.
"""
from __future__ import annotations

import csv
import html
import math
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from atmsim.reproduce.base import COMPARISON_COLUMNS, ComparisonRow

if TYPE_CHECKING:
    from atmsim.reproduce import PaperOutcome

REPO_ROOT = Path(__file__).resolve().parents[2]


def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def fmt_num(x: Optional[float], digits: int = 4) -> str:
    """Compact number for the tables: 4 significant digits, '' for missing."""
    if x is None:
        return ""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(v):
        return ""
    return f"{v:.{digits}g}"


def _csv_num(x: Optional[float]) -> str:
    if x is None or not math.isfinite(float(x)):
        return ""
    return repr(float(x))


# ------------------------------------------------------------------ comparison.csv
def write_comparison_csv(path: Path, papers: Iterable[tuple[str, Sequence[ComparisonRow]]]) -> Path:
    """``paper, experiment, quantity, unit, paper_value, simulated, ci_low, ci_high,
    rel_diff, band_low, band_high`` — one row per compared quantity; empty cells for
    missing values."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(COMPARISON_COLUMNS)
        for paper, rows in papers:
            for r in rows:
                rec = r.csv_record(paper)
                w.writerow([rec[c] if c in ("paper", "experiment", "quantity", "unit") else _csv_num(rec[c])
                            for c in COMPARISON_COLUMNS])
    tmp.replace(path)
    return path


# ------------------------------------------------------------------ context
def git_commit(root: Path = REPO_ROOT) -> Optional[str]:
    """Short commit of the checkout this package runs from (+ '-dirty'), or None."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True,
                              text=True, timeout=5)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=5)
        return head.stdout.strip() + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


@dataclass(frozen=True)
class ReportContext:
    version: str
    commit: Optional[str]
    quick: bool

    @classmethod
    def collect(cls, quick: bool) -> "ReportContext":
        import atmsim

        return cls(version=atmsim.__version__, commit=git_commit(), quick=quick)

    def software_line(self) -> str:
        c = f", git {self.commit}" if self.commit else ""
        mode = "quick mode (--quick: fewer replications, shorter runs)" if self.quick else "full mode"
        return f"atmsim {self.version}{c}; {mode}"


# ------------------------------------------------------------------ HTML pieces
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;color:#1d2330;background:#fafbfc;line-height:1.45}
main{max-width:1100px;margin:0 auto;padding:1.2rem 1.5rem 3rem}
h1{font-size:1.5rem;margin:.4rem 0}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d8dde6;padding-bottom:.2rem}
h3{font-size:1rem;margin:1.2rem 0 .4rem}
.meta{color:#566;font-size:.9rem}.note{background:#fff8e5;border-left:4px solid #e0a800;padding:.5rem .8rem;margin:.6rem 0}
nav a{margin-right:1rem}
.figs{display:flex;flex-wrap:wrap;gap:1.2rem}
figure{margin:0;background:#fff;border:1px solid #d8dde6;padding:.5rem;max-width:520px}
figure img{width:100%;height:auto;display:block}figcaption{font-size:.85rem;color:#445;margin-top:.3rem}
table{border-collapse:collapse;font-size:.85rem;background:#fff;margin:.4rem 0}
th,td{border:1px solid #d8dde6;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#eef1f6}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.prediction td{background:#f4f0ff}tr.prediction td:first-child{border-left:4px solid #7a5cc7}
tr.compared td:first-child{border-left:4px solid #2e8b57}
.badge{display:inline-block;font-size:.72rem;padding:0 .35rem;border-radius:.6rem;background:#7a5cc7;color:#fff;white-space:nowrap}
.badge.cmp{background:#2e8b57}.bad{color:#b00020;font-weight:600}
code{background:#eef1f6;padding:0 .2rem;border-radius:3px}
details{margin:.3rem 0}summary{cursor:pointer}
"""


def _page(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n")


def comparison_table(rows: Sequence[ComparisonRow]) -> str:
    """The comparison table; predictions (no paper value) are shaded and badged."""
    if not rows:
        return "<p>No compared quantities.</p>"
    out = ["<table class=\"comparison\">",
           "<thead><tr><th>experiment</th><th>quantity</th><th>unit</th><th>paper</th>"
           "<th>simulated (mean)</th><th>95% CI</th><th>rel. diff</th><th>note</th></tr></thead><tbody>"]
    for r in rows:
        ci = "no interval"  # too few replications or no spread (docs/experiments.md, "Statistics")
        if r.ci_low is not None or r.ci_high is not None:
            ci = f"[{fmt_num(r.ci_low)}, {fmt_num(r.ci_high)}]"
        if r.band_low is not None or r.band_high is not None:
            ci += f"; band [{fmt_num(r.band_low)}, {fmt_num(r.band_high)}]"
        if r.is_prediction:
            cls = "prediction"
            paper = "<span class=\"badge\" title=\"the paper gives no number (or it is withheld): this is the model's prediction\">prediction</span>"
            rel = ""
        else:
            cls = "compared"
            paper = f"{esc(fmt_num(r.paper_value))}"
            rd = r.rel_diff
            rel = "" if rd is None else f"{rd * 100:+.1f}%"
        note = r.note
        if r.band_low is not None and r.band_high is not None:
            over = f" over the open parameters (most: {r.band_param})" if r.band_param else ""
            note = f"{note}; band [{fmt_num(r.band_low)}, {fmt_num(r.band_high)}]{over}".lstrip("; ")
        out.append(f"<tr class=\"{cls}\"><td>{esc(r.experiment)}</td><td>{esc(r.quantity)}</td><td>{esc(r.unit)}</td>"
                   f"<td class=\"num\">{paper}</td><td class=\"num\">{esc(fmt_num(r.simulated))}</td>"
                   f"<td class=\"num\">{esc(ci)}</td><td class=\"num\">{esc(rel)}</td><td>{esc(note)}</td></tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _kv_table(pairs: Sequence[tuple[str, str]], header: tuple[str, str] = ("key", "value")) -> str:
    rows = "".join(f"<tr><td><code>{esc(k)}</code></td><td>{esc(v)}</td></tr>" for k, v in pairs)
    return f"<table><thead><tr><th>{esc(header[0])}</th><th>{esc(header[1])}</th></tr></thead><tbody>{rows}</tbody></table>"


def _show(v: Any) -> str:
    if isinstance(v, dict):
        if "from" in v:
            unit = f" {v['unit']}" if "unit" in v else ""
            return f"{v.get('from')} to {v.get('to')} step {v.get('step')}{unit}"
        return ", ".join(f"{k} = {_show(x)}" for k, x in v.items())
    if isinstance(v, list):
        return ", ".join(_show(x) for x in v)
    return str(v)


def scenario_section(path: Path, display_path: str) -> str:
    """Scenario file parameters: header, components and the sweep specification."""
    from atmsim import api

    parts: list[str] = []
    try:
        sc = api.load(path)
    except Exception as exc:  # noqa: BLE001 - a report must still be written
        return f"<p class=\"bad\">{esc(display_path)}: {esc(exc)}</p>"
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        raw = {}
    head = raw.get("scenario", {}) if isinstance(raw.get("scenario"), dict) else {}
    pairs = [("file", display_path), ("name", sc.name)]
    if head.get("description"):
        pairs.append(("description", str(head["description"])))
    pairs += [("duration", f"{sc.duration_s:g} s"), ("warm-up", f"{sc.warmup_s:g} s"), ("seed", str(sc.seed))]
    sweep = raw.get("sweep", {}) if isinstance(raw.get("sweep"), dict) else {}
    for k in ("replications", "quick_replications"):
        if k in sweep:
            pairs.append((f"sweep.{k}", str(sweep[k])))
    axes: list[tuple[str, str]] = []
    for table in ("grid", "zip", "quick"):
        sub = sweep.get(table)
        if isinstance(sub, dict):
            for k, v in sub.items():
                (pairs if table == "quick" else axes).append((f"sweep.{table} {k}", _show(v)))
    parts.append(_kv_table(pairs, ("parameter", "value")))
    if axes:
        parts.append(f"<details><summary>swept values ({len(axes)} keys)</summary>"
                     f"{_kv_table(axes, ('key', 'values'))}</details>")
    comps = sc.components()
    crow = "".join(
        f"<tr><td><code>{esc(c['name'])}</code></td><td>{esc(c['kind'])}</td><td>"
        + esc("; ".join(f"{k} = {v}" for k, v in c.get("params", {}).items() if v is not None))
        + "</td></tr>" for c in comps)
    parts.append(f"<details><summary>components ({len(comps)}) as in the file, before sweep values</summary>"
                 f"<table><thead><tr><th>component</th><th>kind</th><th>parameters</th></tr></thead>"
                 f"<tbody>{crow}</tbody></table></details>")
    return "\n".join(parts)


def _display_path(p: Path) -> str:
    try:
        return p.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(p)


def replications_note(runs: Any) -> str:
    """``"; 2 replications per point: too few for an interval"`` (or the range of
    replications per point) from a sweep's runs table; '' without one."""
    from atmsim.stats import MIN_N

    if runs is None or len(runs) == 0 or "point" not in getattr(runs, "columns", ()):
        return ""
    done = runs[runs["status"] == "done"] if "status" in runs.columns else runs
    per = done.groupby("point").size()
    if per.empty:
        return ""
    lo, hi = int(per.min()), int(per.max())
    text = f"; {lo} replications per point" if lo == hi else f"; {lo} to {hi} replications per point"
    if lo < MIN_N:
        text += f" (n < {MIN_N}: too few for an interval; no 95% CI is shown there)"
    return text


def _runs_summary(p: "PaperOutcome") -> str:
    lines = []
    for r in p.results:
        runs = r.runs
        n = len(runs) if runs is not None else 0
        ok = int((runs["status"] == "done").sum()) if n and "status" in runs.columns else n
        wall = float(runs["wall_s"].sum()) if n and "wall_s" in runs.columns else float("nan")
        fails = r.failure_count()
        bad = f" <span class=\"bad\">{fails} failed</span>" if fails else ""
        lines.append(f"<li><code>{esc(r.experiment.key)}</code>: {n} runs ({ok} done){bad}, "
                     f"{esc(fmt_num(wall, 3))} s of run wall time{esc(replications_note(runs))}</li>")
        if fails and runs is not None and "error" in runs.columns:
            errs = runs[runs["status"] != "done"]["error"].dropna().astype(str).head(5)
            for e in errs:
                lines.append(f"<li class=\"bad\">{esc(e)}</li>")
    return "<ul>" + "".join(lines) + "</ul>"


def paper_page_html(p: "PaperOutcome", ctx: ReportContext, index_link: bool = False) -> str:
    repro = p.repro
    body: list[str] = []
    if index_link:
        body.append("<nav><a href=\"report.html\">&larr; all reproductions</a></nav>")
    body.append(f"<h1>atmsim reproduce {esc(repro.name)}</h1>")
    body.append(f"<p class=\"meta\">{esc(repro.title)}</p>")
    body.append(f"<p class=\"meta\">Software: {esc(ctx.software_line())}. Results: "
                f"<a href=\"results.sqlite\">results.sqlite</a>, <a href=\"comparison.csv\">comparison.csv</a>.</p>")
    body.append(f"<p class=\"note\">{esc(repro.summary)}</p>")
    body.append("<h2>Figures</h2><div class=\"figs\">")
    for f in p.figures:
        body.append(f"<figure><a href=\"{esc(f.svg)}\"><img src=\"{esc(f.png)}\" alt=\"{esc(f.title)}\"></a>"
                    f"<figcaption><b>{esc(f.title)}.</b> {esc(f.caption)} "
                    f"(<a href=\"{esc(f.svg)}\">SVG</a>)</figcaption></figure>")
    body.append("</div>")
    body.append("<h2>Comparison with the paper</h2>")
    n_pred = sum(r.is_prediction for r in p.rows)
    body.append(f"<p><span class=\"badge cmp\">compared</span> rows carry a number the paper states; "
                f"<span class=\"badge\">prediction</span> rows ({n_pred} of {len(p.rows)}) have no published "
                f"or a withheld value: they are the model's predictions. Relative difference = "
                f"(simulated − paper) / |paper|.</p>")
    head = [r for r in p.rows if not r.detail]
    detail = [r for r in p.rows if r.detail]
    body.append(comparison_table(head) if head or not detail else "")
    if detail:
        body.append(f"<details><summary>{len(detail)} per-point rows (the values behind the figures)</summary>"
                    f"{comparison_table(detail)}</details>")
    notes = repro.notes()
    if notes:
        body.append("<h2>Notes</h2>" + "".join(f"<p>{esc(n)}</p>" for n in notes))
    body.append("<h2>Runs</h2>" + _runs_summary(p))
    body.append("<h2>Scenario parameters</h2>")
    for r in p.results:
        body.append(f"<h3>{esc(r.experiment.key)} — {esc(r.experiment.title)}</h3>")
        body.append(scenario_section(r.path, _display_path(r.path)))
    return _page(f"atmsim reproduce {repro.name}", "\n".join(body))


def write_paper_page(out_dir: Path, p: "PaperOutcome", ctx: ReportContext) -> Path:
    path = Path(out_dir) / f"{p.repro.name}.html"
    path.write_text(paper_page_html(p, ctx, index_link=False), encoding="utf-8")
    return path


def index_html(papers: Sequence["PaperOutcome"], ctx: ReportContext) -> str:
    from atmsim.reproduce import PAPERS

    done = {p.repro.name: p for p in papers}
    items = []
    for name in PAPERS:
        p = done.get(name)
        if p is None:
            items.append(f"<tr><td>{esc(name)}</td><td colspan=\"3\">not implemented yet</td></tr>")
            continue
        n_pred = sum(r.is_prediction for r in p.rows)
        fails = f" <span class=\"bad\">({p.failures} failed runs)</span>" if p.failures else ""
        items.append(f"<tr><td><a href=\"{esc(name)}.html\">{esc(name)}</a></td><td>{esc(p.repro.title)}</td>"
                     f"<td class=\"num\">{len(p.rows) - n_pred} compared, {n_pred} predictions</td>"
                     f"<td class=\"num\">{len(p.figures)} figures{fails}</td></tr>")
    for name, p in done.items():
        if name not in PAPERS:
            items.append(f"<tr><td><a href=\"{esc(name)}.html\">{esc(name)}</a></td><td>{esc(p.repro.title)}</td>"
                         f"<td class=\"num\">{len(p.rows)} rows</td><td class=\"num\">{len(p.figures)} figures</td></tr>")
    body = (f"<h1>atmsim reproductions</h1><p class=\"meta\">Software: {esc(ctx.software_line())}.</p>"
            "<table><thead><tr><th>paper</th><th>reproduces</th><th>comparison rows</th><th>figures</th></tr></thead>"
            f"<tbody>{''.join(items)}</tbody></table>"
            "<p>All results: <a href=\"results.sqlite\">results.sqlite</a>; all comparison rows: "
            "<a href=\"comparison.csv\">comparison.csv</a>.</p>")
    return _page("atmsim reproductions", body)


def write_index(out_dir: Path, papers: Sequence["PaperOutcome"], ctx: ReportContext) -> Path:
    for p in papers:  # pages reached from the index link back to it
        (Path(out_dir) / f"{p.repro.name}.html").write_text(paper_page_html(p, ctx, index_link=True), encoding="utf-8")
    path = Path(out_dir) / "report.html"
    path.write_text(index_html(papers, ctx), encoding="utf-8")
    return path
