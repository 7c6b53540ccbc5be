"""The kernel's Xid line is "NVRM: Xid (<bus id>): <xid>, ...". The Xid
number names the failure whatever the parenthesis holds: posters redact
the bus id ("PCI:...", "PCI:0000:xx:00") and the GPU it names then stays
unknown, while a whole bus id is still read as the GPU."""
from conftest import first_incident

REDACTED = """\
kernel: NVRM: GPU1 kbifCacheVFInfo_GB100: Unable to read NV_PF0_INITIAL_AND_TOTAL_VFS
kernel: NVRM: Xid (PCI:...): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 11 (...)
"""
MASKED = """\
[Tue Mar  4 02:11:09 2025] NVRM: Xid (PCI:0000:xx:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
"""
WHOLE = """\
[Tue Mar  4 02:11:09 2025] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
"""


def test_redacted_bus_id_still_names_the_xid(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, REDACTED)
    assert inc["rule"] == "xid-nvlink-error", inc["explanation"]
    assert "Xid (PCI:...): 145" in inc["initiating"]["evidence"][0]["text"]


def test_masked_bus_id_names_the_xid_but_no_gpu(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, MASKED)
    assert inc["rule"] == "xid-79-fallen-off-bus", inc["explanation"]
    assert not inc["initiating"].get("gpu")


def test_whole_bus_id_is_the_gpu(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, WHOLE)
    assert inc["rule"] == "xid-79-fallen-off-bus", inc["explanation"]
    assert "3b:00" in inc["initiating"]["gpu"]
