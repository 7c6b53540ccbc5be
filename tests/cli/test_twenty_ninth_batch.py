"""Two misses from the twenty-ninth corpus batch's work part:

- A thread library that cannot create its threads because the user's or
  the container's process limit is reached says so in its own words:
  OpenBLAS's blas_thread_init prints "pthread_create failed for thread %ld
  of %d: %s" with strerror() of pthread_create's result, libgomp's
  gomp_fatal "libgomp: Thread creation failed: %s". EAGAIN ("Resource
  temporarily unavailable") is the process/thread limit (RLIMIT_NPROC, the
  pids cgroup); EPERM ("Operation not permitted") is a seccomp profile
  refusing clone3 in an old container runtime, another fault.
- nccl-tests prints its failures with the host in front: NCCLCHECK and
  CUDACHECK "%s: Test NCCL failure %s:%d '%s'", the %s gethostname() of the
  process that failed. Nothing else on the line names the host.
"""
from conftest import diagnose_text, leading_incident

# A two-process Lightning run in a podman container (podman#25703, as
# posted): the podman maintainers pointed at the cgroup's default pids limit.
OPENBLAS_EAGAIN = """\
```Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2
OpenBLAS blas_thread_init: pthread_create failed for thread 22 of 48: Resource temporarily unavailable
OpenBLAS blas_thread_init: ensure that your address space and process count limits are big enough (ulimit -a)
OpenBLAS blas_thread_init: or set a smaller OPENBLAS_NUM_THREADS to fit into what you have available
OpenBLAS blas_thread_init: RLIMIT_NPROC 1048576 current, 1048576 max```
"""

# OpenPCDet testing after its training hit "can't start new thread"
# (open-mmlab/OpenPCDet#329, as posted).
LIBGOMP_EAGAIN = """\
And  another error occurred while testing:
 libgomp: Thread creation failed: Resource temporarily unavailable
"""

# A Docker image started under an old runtime's seccomp profile
# (coqui-ai/TTS#3439, as posted): the same call refused with EPERM.
OPENBLAS_EPERM = """\
OpenBLAS blas_thread_init: pthread_create failed for thread 35 of 48: Operation not permitted
OpenBLAS blas_thread_init: RLIMIT_NPROC -1 current, -1 max
OpenBLAS blas_thread_init: pthread_create failed for thread 36 of 48: Operation not permitted
OpenBLAS blas_thread_init: RLIMIT_NPROC -1 current, -1 max
"""

# all_reduce_perf in a Singularity container (NVIDIA/nccl-tests#41, as
# posted).
NCCL_TESTS_FAILURE = """\
# nThread 1 nGpus 4 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
# Using devices
#   Rank  0 Pid 108039 on ip-0AB85F07 device  0 [0x00] Tesla V100-PCIE-16GB
#   Rank  1 Pid 108039 on ip-0AB85F07 device  1 [0x00] Tesla V100-PCIE-16GB
libibverbs: Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0
ip-0AB85F07: Test NCCL failure common.cu:775 'internal error'
"""


def test_openblas_threads_at_the_process_limit(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, OPENBLAS_EAGAIN, rule="zombie-process",
                     line="pthread_create failed for thread 22 of 48: Resource temporarily unavailable")


def test_libgomp_threads_at_the_process_limit(faultline_bin, validate, tmp_path):
    leading_incident(faultline_bin, validate, tmp_path, LIBGOMP_EAGAIN, rule="zombie-process",
                     line="libgomp: Thread creation failed: Resource temporarily unavailable")


def test_a_refused_thread_is_not_the_process_limit(faultline_bin, validate, tmp_path):
    found = diagnose_text(faultline_bin, validate, tmp_path, OPENBLAS_EPERM)
    assert not [inc for inc in found if inc["rule"] == "zombie-process"], found


def test_nccl_tests_failure_names_its_host(faultline_bin, validate, tmp_path):
    inc = leading_incident(faultline_bin, validate, tmp_path, NCCL_TESTS_FAILURE,
                           line="Test NCCL failure common.cu:775 'internal error'")
    assert inc["initiating"]["host"] == "ip-0AB85F07", inc["initiating"]
