"""GPU-stack and cluster-operations failures read where the program prints
them (issue #18: the ops audit in tests/cli/endings, ops-*.log):

- Docker's client wraps what the daemon refused as "Error response from
  daemon: <message>"; the docker CLI prints it after "docker: " and exits,
  docker compose prints it bare: the container never started.
- NVML that cannot be initialised: nvidia-smi's and the k8s device plugin's
  "Failed to initialize NVML: <reason>", nv-hostengine's "Error: Failed to
  initialize NVML". A driver/library version mismatch stays the catalog's
  driver mismatch.
- kmod's modprobe and insmod print their errors after "<program>: ERROR: "
  (tools/modprobe.c, tools/insmod.c) and exit non-zero; DKMS's die() prints
  "Error! <message>"; nvidia-installer ends with "ERROR: Installation has
  failed."; the kernel module finds no GPU it may own ("NVRM: No NVIDIA
  graphics adapter probed!").
- systemctl tells who started a unit that it failed ("Job for <unit>
  failed because the control process exited with error code."): an exit
  report, below the daemon's own message when there is one
  (nvidia-persistenced's "failed to initialize"). The journal's "<unit>:
  Main process exited, code=exited, status=1/FAILURE" is not read: a
  node's journal records every unit's exits, most no part of the job.
- logrus's fatal level (level=fatal msg=...) is followed by os.Exit(1).
- Catalog wordings: the newer driver's "NVRM: API mismatch: the client
  '<name>' (pid N)" is the driver/library mismatch, and CUDA's "system not
  yet initialized" as the CUDA samples print it ("(error code system not yet
  initialized)") is Fabric Manager's not having registered the GPUs.
"""
import pytest

from conftest import diagnose_text, first_incident, initiating_texts

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    "docker-cli": ("""\
$ docker run --rm --gpus all nvidia/cuda:12.2.0-base-ubuntu22.04 nvidia-smi
docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].
""", 'could not select device driver ""'),
    "docker-compose": ("""\
[+] Running 2/3
 ✔ Container app-redis     Started                        1.2s
 ✔ Container app-db        Healthy                        6.1s
Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu]]
""", 'could not select device driver "nvidia"'),
    "nvidia-smi": ("""\
$ nvidia-smi
Failed to initialize NVML: Unknown Error
""", "Failed to initialize NVML: Unknown Error"),
    "device-plugin": ("""\
2023/03/01 10:00:00 Loading NVML
2023/03/01 10:00:00 Failed to initialize NVML: could not load NVML library.
2023/03/01 10:00:00 If this is a GPU node, did you set the docker default runtime to `nvidia`?
""", "Failed to initialize NVML: could not load NVML library."),
    "hostengine": ("""\
time="2023-03-01T10:00:00Z" level=info msg="Starting dcgm-exporter"
Error: Failed to initialize NVML
""", "Error: Failed to initialize NVML"),
    "modprobe": ("""\
$ sudo modprobe nvidia
modprobe: ERROR: could not insert 'nvidia': Unknown symbol in module, or unknown parameter (see dmesg)
""", "modprobe: ERROR: could not insert 'nvidia'"),
    "insmod": ("""\
[INFO    2019-01-20 06:04:33 UTC] Loading Driver
insmod: ERROR: could not insert module /opt/nvidia/lib/modules/4.14.88/nvidia.ko: Unknown symbol in module
""", "insmod: ERROR: could not insert module"),
    "dkms": ("""\
Building initial module for 6.8.0-31-generic
Error! Bad return status for module build on kernel: 6.8.0-31-generic (x86_64)
Consult /var/lib/dkms/nvidia/550.54.14/build/make.log for more information.
dpkg: error processing package nvidia-dkms-550 (--configure):
 installed nvidia-dkms-550 package post-installation script subprocess returned error exit status 10
""", "Error! Bad return status for module build"),
    "nvidia-installer": ("""\
ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most
       frequently when this kernel module was built against the wrong or
       improperly configured kernel sources.

ERROR: Installation has failed.  Please see the file
       '/var/log/nvidia-installer.log' for details.
""", "ERROR: Unable to load the kernel module 'nvidia.ko'"),
    "nvrm-no-device": ("""\
[   12.100000] NVRM: No NVIDIA graphics adapter probed!
[   12.200000] nvidia-nvlink: Unregistered the Nvlink Core, major device number 239
""", "NVRM: No NVIDIA graphics adapter probed!"),
    "systemctl": ("""\
$ sudo systemctl start nvidia-fabricmanager
Job for nvidia-fabricmanager.service failed because the control process exited with error code.
See "systemctl status nvidia-fabricmanager.service" and "journalctl -xeu nvidia-fabricmanager.service" for details.
""", "Job for nvidia-fabricmanager.service failed"),
    "persistenced": ("""\
Mar 01 10:00:00 gpu01 nvidia-persistenced[900]: nvidia-persistenced failed to initialize. Check syslog for more details.
Mar 01 10:00:00 gpu01 systemd[1]: nvidia-persistenced.service: Control process exited, code=exited, status=1/FAILURE
Mar 01 10:00:01 gpu01 (udev-worker)[850]: nvidia: Process '/sbin/modprobe nvidia-drm' failed with exit code 1.
""", "nvidia-persistenced failed to initialize"),
    "logrus-fatal": ("""\
time="2023-03-01T10:00:00Z" level=info msg="Starting validator"
time="2023-03-01T10:00:01Z" level=fatal msg="Error starting nv-hostengine: DCGM initialization error"
""", "level=fatal"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ops_failure_is_a_fatal_line(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    inc = first_incident(faultline_bin, validate, tmp_path, text)
    assert inc["rule"] == FALLBACK, inc["explanation"]
    assert initiating in initiating_texts(inc)[0]


HEALTHY = {
    "compose-up": """\
[+] Running 3/3
 ✔ Container app-redis     Started                        1.2s
 ✔ Container app-db        Healthy                        6.1s
 ✔ Container app-api       Started                        6.3s
""",
    "modprobe-warning": """\
modprobe: WARNING: Module nvidia_uvm not found in directory /lib/modules/6.5.0-1015-aws
NVIDIA driver kernel modules loaded
""",
    "unit-stopped-cleanly": """\
Mar 01 10:00:00 gpu01 systemd[1]: Stopping NVIDIA Persistence Daemon...
Mar 01 10:00:00 gpu01 systemd[1]: nvidia-persistenced.service: Main process exited, code=exited, status=0/SUCCESS
Mar 01 10:00:00 gpu01 systemd[1]: Stopped NVIDIA Persistence Daemon.
""",
    "journal-unit-exit": """\
Mar 01 10:00:00 gpu01 systemd[1]: fwupd-refresh.service: Main process exited, code=exited, status=1/FAILURE
Mar 01 10:00:00 gpu01 systemd[1]: fwupd-refresh.service: Failed with result 'exit-code'.
""",
    "scheduled": """\
  Normal  Scheduled  5s   default-scheduler  Successfully assigned default/gpu-pod to node01
  Normal  Started    2s   kubelet            Started container cuda
""",
}


@pytest.mark.parametrize("name", sorted(HEALTHY))
def test_healthy_ops_output_is_no_incident(faultline_bin, validate, tmp_path, name):
    assert diagnose_text(faultline_bin, validate, tmp_path, HEALTHY[name]) == []


def test_nvrm_api_mismatch_naming_the_client_is_the_driver_mismatch(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, """\
[    9.424670] NVRM: API mismatch: the client 'nvidia-smi' (pid 1005)
               NVRM: has the version 550.90.07, but this kernel module has
               NVRM: the version 550.54.14.  Please make sure that this
               NVRM: kernel module and all NVIDIA driver components
               NVRM: have the same version.
""")
    assert inc["rule"] == "cuda-driver-mismatch", inc["explanation"]


def test_cuda_sample_system_not_ready_is_fabric_manager(faultline_bin, validate, tmp_path):
    inc = first_incident(faultline_bin, validate, tmp_path, """\
[Vector addition of 50000 elements]
Failed to allocate device vector A (error code system not yet initialized)!
""")
    assert inc["rule"] == "nvswitch-fabric-error", inc["explanation"]
