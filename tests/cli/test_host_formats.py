"""Hosts the host audit (tests/cli/hosts) found unread, each in the words
of the program that prints it: slurmstepd's banner before 17.02 names the
node last (`... DUE TO TIME LIMIT on <node> ***`, slurmstepd/req.c), Open
MPI's --timestamp-output glues ctime()'s string to its --tag-output tag
(`Fri Aug 11 12:31:45 2023[1,0]<stdout>:`, orte's iof), and Ray's driver
names the worker a task failed in (`ray::<name>() (pid=N, ip=A)`,
ray/exceptions.py RayTaskError)."""
from conftest import first_incident


def test_the_old_slurm_banner_names_its_node(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path,
                         "epoch 3 step 1200 loss 2.1\n"
                         "slurmstepd: *** JOB 830329 CANCELLED AT 2018-08-06T17:21:44 DUE TO TIME LIMIT on n447 ***\n")
    assert inc["initiating"]["host"] == "n447"


def test_a_timestamped_mpirun_tag_gives_rank_and_nccl_host(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path,
                         "Fri Aug 11 12:31:45 2023[1,2]<stdout>:gpu-b07:1850301:1881341 [2] transport.cc:154 "
                         "NCCL WARN Cuda failure 'invalid argument'\n")
    assert inc["initiating"]["host"] == "gpu-b07"
    assert inc["initiating"]["rank"] == 2


def test_a_ray_task_error_is_on_its_worker(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path,
                         "ray.exceptions.RayTaskError(OutOfMemoryError): ray::Runner.run() (pid=104449, "
                         "ip=10.130.71.7, actor_id=36b6798a692f88dfb0e149e301000000, repr=<main.Runner object "
                         "at 0x783e766c0ca0>)\n"
                         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                         "total capacity of 79.15 GiB of which 1.02 GiB is free.\n")
    assert inc["initiating"]["host"] == "10.130.71.7"
