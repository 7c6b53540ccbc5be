"""Ray's raylet prints its periodic memory-monitor summary ('node_manager.cc:N:
K Workers (tasks / actors) killed due to memory pressure (OOM), ...'). It
reaches the driver behind colour codes (raw ESC, or as text when a log
collector escaped them: '#033[', '\\x1b[', '[') and, in a terminal capture,
hard-wrapped, so the phrase is cut across lines: its stable head
('node_manager.cc:N: K Workers' up to the line's end) still names the kill,
and a summary of no kill (K = 0) does not."""
import pytest

from conftest import diagnose_text, first_incident


RAYLET_ESCAPES = ["\x1b[2m\x1b[33m(raylet)\x1b[0m", "#033[2m#033[33m(raylet)#033[0m",
                  "\\x1b[2m\\x1b[33m(raylet)\\x1b[0m", "[2m[33m(raylet)[0m"]


@pytest.mark.parametrize("prefix", RAYLET_ESCAPES)
def test_wrapped_coloured_raylet_summary_is_host_oom(faultline_bin, validate, tmp_path, prefix):
    inc = first_incident(faultline_bin, validate, tmp_path, "\n".join([
        prefix + " [2023-09-23 10:41:07,212 E 2301 2301] (raylet) node_manager.cc:3007: 2 Workers (tasks /",
        " actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: abd406d4",
        "15bd2b74a5e281968fd76aa200d56e4529fd1c1cd4373840, IP: 10.0.167.26) over the last time period. To see more in",
        "formation about the Workers killed on this node, use `ray logs raylet.out -ip 10.0.167.26`",
        prefix,
    ]) + "\n")
    assert inc["rule"] == "host-oom-kill", inc["explanation"]
    assert "node_manager.cc:3007: 2 Workers" in inc["initiating"]["evidence"][0]["text"]


def test_wrapped_raylet_summary_of_no_kill_is_nothing(faultline_bin, validate, tmp_path):
    text = "\n".join([
        "(raylet) [2023-09-23 10:41:07,212 E 2301 2301] (raylet) node_manager.cc:3007: 0 Workers (tasks /",
        " actors) killed due to memory pressure (OOM), 1 Workers crashed due to other reasons at node (ID: abd406d4",
    ]) + "\n"
    found = diagnose_text(faultline_bin, validate, tmp_path, text)
    assert not [i for i in found if i["rule"] == "host-oom-kill"], found
