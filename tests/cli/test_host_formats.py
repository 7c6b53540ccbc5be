"""Hosts the host audit (tests/cli/hosts) found unread, each in the words
of the program that prints it: slurmstepd's banner before 17.02 names the
node last (`... DUE TO TIME LIMIT on <node> ***`, slurmstepd/req.c), Open
MPI's --timestamp-output glues ctime()'s string to its --tag-output tag
(`Fri Aug 11 12:31:45 2023[1,0]<stdout>:`, orte's iof), and Ray's driver
names the worker a task failed in (`ray::<name>() (pid=N, ip=A)`,
ray/exceptions.py RayTaskError). srun reports failed tasks by node
(`srun: error: <node>: tasks 8-15: Exited with exit code 1`): when srun
launched the ranks itself, task N is rank N on that node, which names the
host of a rank that died before any line of its own did; under a launcher
per node (srun torchrun) the tasks are node indices and name no rank.
Open MPI's job map (mpirun --display-map: `Data for node: <node> ...`,
then `Process OMPI jobid: [J,1] App: 0 Process rank: R ...` per process,
orte's and PRRTE's print functions) puts each rank on its node."""
from conftest import diagnose_path, first_incident

DRIVER_OLD = ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update "
              "your GPU driver by downloading and installing a new version from the URL: "
              "http://www.nvidia.com/Download/index.aspx\n")
SRUN_BY_NODE = ("srun: error: gpu-b12: tasks 8-15: Exited with exit code 1\n"
                "srun: error: gpu-b11: tasks 0-7: Exited with exit code 1\n")


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


def test_srun_task_list_names_the_host_of_a_per_task_file(faultline_bin, validate, tmp_path):
    # srun -o train-%j-%t.out: one file per task, the task id in its name.
    for task in range(16):
        (tmp_path / f"train-778123-{task}.out").write_text(
            DRIVER_OLD if task == 10 else "step 1 loss 2.0\n")
    (tmp_path / "slurm-778123.out").write_text(SRUN_BY_NODE)
    inc = diagnose_path(faultline_bin, validate, tmp_path)[0]
    assert (inc["initiating"]["rank"], inc["initiating"]["host"]) == (10, "gpu-b12")


def test_srun_task_list_names_the_host_of_a_labelled_task(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, " 9: " + DRIVER_OLD + SRUN_BY_NODE)
    assert (inc["initiating"]["rank"], inc["initiating"]["host"]) == (9, "gpu-b12")


def test_srun_task_list_below_the_ranks_names_no_host(faultline_bin, validate, tmp_path):
    # Two tasks a node, each a launcher of 4 ranks: a rank goes above every
    # task srun reported, so its tasks are no ranks.
    inc = first_incident(faultline_bin, validate, tmp_path,
                         "[rank15]: {'loss': 2.0, 'learning_rate': 1e-05, 'epoch': 0.1}\n[rank1]: " + DRIVER_OLD +
                         "srun: error: gpu-b12: tasks 0-1: Exited with exit code 1\n"
                         "srun: error: gpu-b11: tasks 2-3: Exited with exit code 1\n")
    assert inc["initiating"]["rank"] == 1
    assert inc["initiating"]["host"] is None


def test_open_mpi_job_map_names_the_host_of_a_tagged_rank(faultline_bin, validate, tmp_path):
    job_map = ["", " ========================   JOB MAP   ========================", ""]
    for node, ranks in (("gpu-b11", range(0, 8)), ("gpu-b12", range(8, 16))):
        job_map.append(f" Data for node: {node}\tNum slots: 8\tMax slots: 0\tNum procs: 8")
        job_map += [f" \tProcess OMPI jobid: [52021,1] App: 0 Process rank: {r} Bound: N/A" for r in ranks]
        job_map.append("")
    job_map.append(" =============================================================")
    inc = first_incident(faultline_bin, validate, tmp_path,
                         "\n".join(job_map) + "\n[1,10]<stderr>:" + DRIVER_OLD)
    assert (inc["initiating"]["rank"], inc["initiating"]["host"]) == (10, "gpu-b12")
