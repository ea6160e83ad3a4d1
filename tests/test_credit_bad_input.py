"""Bad input to evans96's controls (issue 17, "Done when"): a credit entry of 0 or more
than 16 credits, more than 24 entries per credit cell, i > m and m > 1023 in the
i-out-of-m shaper each give one line naming the file, line and key, and exit code 2."""
from __future__ import annotations

import pytest

from conftest import ROOT
from test_cli import assert_one_line_error, line_of

CREDIT = (ROOT / "scenarios" / "examples" / "credit_wan.toml").read_text()
IOFM = (ROOT / "scenarios" / "examples" / "iofm_shaping.toml").read_text()


@pytest.mark.parametrize("setting, key, valid", [
    ("max_credit = 0", "components.down.max_credit", "16"),
    ("max_credit = 17", "components.down.max_credit", "16"),
    ("entries_per_cell = 25", "components.down.entries_per_cell", "24"),
    ("entries_per_cell = 0", "components.down.entries_per_cell", "24"),
])
def test_credit_entries_out_of_range(cli, write_scenario, setting, key, valid):
    text = CREDIT.replace('credit_vc = "0/4095"', f'credit_vc = "0/4095"\n{setting}')
    path = write_scenario(text, "credit.toml")
    err = assert_one_line_error(cli("run", str(path)), 2, contains=[key, valid])
    assert f"credit.toml:{line_of(text, setting)}:" in err


@pytest.mark.parametrize("old, new, key", [
    ("i = 20", "i = 1001", "components.sh.i"),     # i > m = 1000
    ("m = 1000", "m = 1024", "components.sh.m"),   # m's 10-bit field
    ("m = 1000", "m = 10", "components.sh.i"),     # i = 20 > m
])
def test_iofm_window_out_of_range(cli, write_scenario, old, new, key):
    text = IOFM.replace(f"\n{old}\n", f"\n{new}\n", 1)
    assert new in text
    path = write_scenario(text, "iofm.toml")
    err = assert_one_line_error(cli("run", str(path)), 2, contains=[key])
    assert "iofm.toml:" in err


def test_per_vc_windows_out_of_range(cli, write_scenario):
    for entry in ('"2: i = 200, m = 1024"', '"2: i = 300, m = 200"', '"2 i=200 m=1000"'):
        text = IOFM.replace('"2: i = 200, m = 1000"', entry)
        path = write_scenario(text, "vcs.toml")
        assert_one_line_error(cli("run", str(path)), 2, contains=["components.sh.vcs"])


def test_piggyback_needs_the_header_carrier(cli, write_scenario):
    # Piggybacked credit rides in cell headers: with credit cells it is refused.
    text = CREDIT.replace('credit_vc = "0/4095"', 'credit_vc = "0/4095"\npiggyback = true')
    path = write_scenario(text, "piggy.toml")
    err = assert_one_line_error(cli("run", str(path)), 2, contains=["components.down.piggyback", 'carrier = "header"'])
    assert "piggy.toml:" in err


GATEWAY = (ROOT / "scenarios" / "evans96" / "gateway_oc12c_sonet.toml").read_text()


@pytest.mark.parametrize("old, new, key", [
    ('phy = "OC-12c"\nframing = "sonet"\ndelay', 'phy = "DS-3"\nframing = "sonet"\ndelay', "components.oc12.framing"),
    ('port_framing = ["p5 = sonet"]', 'port_framing = ["p4 = sonet"]\nport_phy = ["p4 = TAXI-100", "p5 = OC-12c"]',
     "components.gw_tx"),
])
def test_sonet_framing_needs_a_sonet_line(cli, write_scenario, old, new, key):
    assert old in GATEWAY
    text = GATEWAY.replace(old, new, 1)
    if "port_phy" in new:
        text = text.replace('port_phy = ["p5 = OC-12c"]\n', "", 1)
    path = write_scenario(text, "framing.toml")
    assert_one_line_error(cli("run", str(path)), 2, contains=[key, "OC-12c"])


SWITCHED = (ROOT / "scenarios" / "examples" / "credit_switch.toml").read_text()
MAGIC_BUILTIN = (ROOT / "scenarios" / "evans96" / "mismatch_credit_builtin.toml").read_text()


@pytest.mark.parametrize("text, old, new, key, valid", [
    (SWITCHED, 'credit_out = ["p2 = 256 cells"]', 'credit_out = ["p2 = 0 cells"]', "components.up.credit_out", "1 cell or more"),
    (SWITCHED, 'credit_in = ["p1"]', 'credit_in = ["p7"]', "components.down.credit_in", "p1"),
    (MAGIC_BUILTIN, 'credit_window = "256 cells"', 'credit_window = "0 cells"', "components.dec.credit_window", "1 cell or more"),
])
def test_built_in_credit_out_of_range(cli, write_scenario, text, old, new, key, valid):
    # Credit control built into the switch and the host: the same one-line errors.
    bad = text.replace(old, new, 1)
    assert new in bad
    path = write_scenario(bad, "built_in.toml")
    err = assert_one_line_error(cli("run", str(path)), 2, contains=[key, valid])
    assert "built_in.toml:" in err
