"""slurmstepd's "*** %s STEPD TERMINATED ON %s AT %s DUE TO JOB NOT ENDING
WITH SIGNALS ***" (src/slurmd/slurmstepd/req.c) names the node it drains
(job->node_name): the incident is on that host even when the line has no
host prefix of its own."""
from conftest import diagnose_text

STEPD = ("slurmstepd: error: *** JOB 6847502 STEPD TERMINATED ON udc-aw29-24b AT "
         "2019-11-07T02:10:11 DUE TO JOB NOT ENDING WITH SIGNALS ***\n")


def test_unkillable_step_drain_names_its_node(faultline_bin, validate, tmp_path):
    incs = diagnose_text(faultline_bin, validate, tmp_path, STEPD)
    assert incs and incs[0]["rule"] == "node-health-drain", incs
    assert incs[0]["initiating"]["host"] == "udc-aw29-24b"
