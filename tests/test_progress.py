"""Progress bar rules: hidden when disabled or not a terminal, shown after the delay."""
import io

from atmsim.progress import RunProgress, stderr_is_tty


def test_disabled_writes_nothing():
    buf = io.StringIO()
    with RunProgress("x", enabled=False, stream=buf) as bar:
        for i in range(100):
            bar(i / 100, 1.0)
    assert buf.getvalue() == ""


def test_non_tty_stream_is_disabled_by_default():
    buf = io.StringIO()
    assert not stderr_is_tty(buf)
    bar = RunProgress("x", stream=buf)
    assert bar.enabled is False


def test_enabled_bar_shows_after_delay():
    buf = io.StringIO()
    with RunProgress("run", enabled=True, delay_s=0.0, stream=buf) as bar:
        for i in range(1, 11):
            bar(i / 10, 1.0)
    out = buf.getvalue()
    assert "s simulated" in out and "run" in out


def test_enabled_bar_hidden_before_delay():
    buf = io.StringIO()
    with RunProgress("run", enabled=True, delay_s=3600.0, stream=buf) as bar:
        for i in range(1, 11):
            bar(i / 10, 1.0)
    assert "simulated" not in buf.getvalue()
