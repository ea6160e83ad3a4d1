"""Output paths are checked before any work (issue 44 item 4), and ``-`` is standard
output for CSV outputs (issue 44 item 9)."""
from __future__ import annotations

import csv
import io

import pytest

from conftest import BASE, ROOT

TCP = str(ROOT / "scenarios" / "examples" / "tcp_window.toml")


def _one_line(p, start: str) -> None:
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, (p.returncode, p.stderr)
    assert lines[0].startswith(f"atmsim: error: {start}"), lines[0]


@pytest.mark.parametrize("flag", ["--series-csv", "--cell-trace"])
def test_run_csv_output_in_a_missing_directory_is_refused_before_the_run(cli, tmp_path, flag):
    bad = tmp_path / "missing" / "x.csv"
    capture = tmp_path / "dec.pcap"
    # 2000 s of TCP would take minutes; the capture, written by the run, shows it never started
    p = cli("run", TCP, "-q", "--set", "scenario.duration=2000 s", "--pcap", f"dec={capture}", flag, str(bad),
            cwd=tmp_path)
    _one_line(p, f"{flag} {bad}: directory {bad.parent} does not exist")
    assert not capture.exists()


def test_run_cell_trace_to_a_directory_is_refused(cli, tmp_path):
    p = cli("run", TCP, "-q", "--cell-trace", str(tmp_path))
    _one_line(p, f"--cell-trace {tmp_path}: is a directory; give a file path such as {tmp_path / 'out.csv'}")


@pytest.mark.parametrize("how", ["--pcap", "--set"])
def test_run_capture_path_is_checked_before_the_run(cli, tmp_path, how):
    bad = tmp_path / "nowhere" / "dec.pcap"
    arg = ["--pcap", f"dec={bad}"] if how == "--pcap" else ["--set", f"dec.pcap={bad}"]
    p = cli("run", TCP, "-q", "--set", "scenario.duration=2000 s", *arg)
    flag = "--pcap" if how == "--pcap" else "--set dec.pcap="
    _one_line(p, f"{flag} {bad}: directory {bad.parent} does not exist")


def test_sweep_db_that_is_a_directory_is_refused(cli, tmp_path, write_scenario):
    s = write_scenario(BASE + '\n[sweep]\nreplications = 2\n[sweep.grid]\n"mux.capacity" = ["8 cells"]\n')
    p = cli("sweep", str(s), "--db", str(tmp_path), "-q")
    _one_line(p, f"--db {tmp_path}: is a directory; give a file path such as {tmp_path / 'results.sqlite'}")


def test_export_out_is_checked_before_the_store_is_read(cli, tmp_path):
    out = tmp_path / "no" / "stats.csv"
    p = cli("export", "--db", str(tmp_path / "missing.sqlite"), "--out", str(out))
    _one_line(p, f"--out {out}: directory {out.parent} does not exist")


def test_reproduce_out_that_is_a_file_is_refused(cli, tmp_path):
    f = tmp_path / "out"
    f.write_text("")
    p = cli("reproduce", "lazarou96", "--quick", "-q", "--out", str(f))
    _one_line(p, f"--out {f}: exists and is not a directory")


def test_bench_plot_path_is_checked(cli, tmp_path):
    bad = tmp_path / "no" / "scale.png"
    p = cli("bench", "--scale", "--quick", "--plot", str(bad))
    _one_line(p, f"--plot {bad}: directory {bad.parent} does not exist")


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_series_csv_dash_is_standard_output(cli, tmp_path):
    args = [TCP, "-q", "--set", "scenario.duration=0.2 s"]
    p = cli("run", *args, "--series-csv", "-", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "-").exists()
    f = tmp_path / "series.csv"
    assert cli("run", *args, "--series-csv", str(f)).returncode == 0
    assert p.stdout == f.read_text()  # the same CSV as the file, and nothing else on stdout
    assert _csv_rows(p.stdout) and list(_csv_rows(p.stdout)[0]) == ["component", "probe", "time", "value", "unit",
                                                                      "kind"]


def test_cell_trace_dash_is_standard_output(cli, tmp_path):
    args = [TCP, "-q", "--set", "scenario.duration=2 ms"]
    p = cli("run", *args, "--cell-trace", "-", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "-").exists()
    f = tmp_path / "trace.csv"
    assert cli("run", *args, "--cell-trace", str(f)).returncode == 0
    assert p.stdout == f.read_text() and len(_csv_rows(p.stdout)) > 0


@pytest.mark.parametrize("extra", [["--series-csv", "-", "--cell-trace", "-"], ["--series-csv", "-", "--json"]])
def test_two_outputs_on_standard_output_are_refused(cli, extra):
    p = cli("run", TCP, "-q", *extra)
    _one_line(p, "--series-csv and ")
    assert "only one of them can write to standard output" in p.stderr


def test_export_out_dash_is_standard_output(cli, tmp_path, write_scenario):
    s = write_scenario(BASE + '\n[sweep]\nreplications = 2\n[sweep.grid]\n"mux.capacity" = ["8 cells"]\n')
    db = tmp_path / "r.sqlite"
    assert cli("sweep", str(s), "--db", str(db), "-q", "-j", "1").returncode == 0
    p = cli("export", "--db", str(db), "--out", "-", "--what", "runs", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "-").exists()
    rows = _csv_rows(p.stdout)
    assert len(rows) == 2 and {r["replication"] for r in rows} == {"0", "1"}
    assert p.stderr.strip() == "-: 2 rows (runs)"


def test_run_output_in_a_read_only_directory_is_refused(cli, tmp_path):
    import os

    ro = tmp_path / "ro"
    if os.geteuid() != 0:
        ro.mkdir()
        ro.chmod(0o555)
    else:  # root writes through permission bits: a directory that refuses everyone
        ro = "/sys"
        if os.access(ro, os.W_OK) and not os.path.ismount(ro):
            pytest.skip("no read-only directory available")
    bad = os.path.join(str(ro), "x.csv")
    try:
        p = cli("run", TCP, "-q", "--series-csv", bad)
        _one_line(p, f"--series-csv {bad}: directory {ro} is read-only; choose a writable --series-csv path")
    finally:
        if os.geteuid() != 0:
            os.chmod(ro, 0o755)
