"""One GPU that reports several driver failures of one kind in the same
second (an engine exception, then the timeouts of the channel it stopped)
had one failure: the report leads with the line that came first, and the
later reports are its collateral (src/correlate/rank.cc, FoldDeviceBursts).
The Xid lines are in the driver's format, as the rules' examples quote
them (Xid 32 of a push-buffer error, Xid 109 CTX SWITCH TIMEOUT)."""
from conftest import diagnose_text, initiating_texts

XID_32 = "[ 1720.336900] NVRM: Xid (PCI:0000:01:00): 32, pid=2075, name=python3, Channel ID 00000010 intr0 00040000\n"
XID_109 = ("[ 1720.336960] NVRM: Xid (PCI:0000:01:00): 109, pid=2075, name=python3, Ch 00000010, "
           "errorString CTX SWITCH TIMEOUT, Info 0x2c010\n")


def test_the_first_line_of_a_gpus_burst_leads(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, XID_32 + XID_109 * 4)
    assert [i["rule"] for i in found] == ["xid-engine-exception"], [i["rule"] for i in found]
    assert initiating_texts(found[0]) == [XID_32.strip()]
    assert any(c["rule"] == "xid-gpu-stopped-reset-required" for c in found[0]["collateral"])


def test_another_gpus_report_is_its_own_incident(faultline_bin, validate, tmp_path):
    other = XID_109.replace("0000:01:00", "0000:02:00")
    found = diagnose_text(faultline_bin, validate, tmp_path, XID_32 + other)
    assert sorted(i["rule"] for i in found) == ["xid-engine-exception", "xid-gpu-stopped-reset-required"]
