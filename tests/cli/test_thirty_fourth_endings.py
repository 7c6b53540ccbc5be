"""Endings the thirty-fourth endings audit (tests/cli/endings, e34-*.log, a
random sample of failed endings from GPU programs outside the deep-learning
frameworks: RAPIDS, CuPy, Numba, PyCUDA, OpenMM, LAMMPS, Cycles, NVENC)
gave no incident or the wrong first line, read where the program that
printed them writes them (issue #18):

- A Windows crash handler that names the structured exception instead of
  printing its code: Blender's (bli_windows_system_backtrace_exception_record)
  writes 'ExceptionCode         : EXCEPTION_ACCESS_VIOLATION', since 4.x
  with ' (0xc0000005)' after it. Only the hexadecimal code was read.
- Blender Cycles' device checks (cuda_device_assert, hip_device_assert,
  optix_device_assert; CUDADeviceQueue::assert_success) write a failed
  driver call as '<error string> in <call> (<file>:<line>)' or '<error
  string> in CUDA queue <operation> (<kernels>)' through Device::set_error,
  and the session stops the render. Only the pre-3.0 form that starts with
  'CUDA error: ' at the start of a line was read.
- OpenMM's CHECK_RESULT throws '<what it did>: <error name> (<code>)'
  ('Error invoking kernel: CUDA error (700)'); where a driver script's own
  handler printed the message, nothing read it and the traceback after led.
- An NVENC encoder that cannot open an encode session or finds no device:
  FFmpeg's 'OpenEncodeSessionEx failed: ... (N)' and 'No capable devices
  found', rigaya's NVEnc 'Error on nvEncOpenEncodeSessionEx: N (...)' and
  'No GPU found suitable for NVEnc Encoding.', the Video Codec SDK's
  '<call> returned error N'. None was read.
"""
from conftest import ending_tests

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # Blender 4.x's crash log on Windows.
    "blender-crash-access-violation": ("""\
# backtrace
Exception Record:

ExceptionCode         : EXCEPTION_ACCESS_VIOLATION (0xc0000005)
Exception Address     : 0x00007FFB2C1D4E10
Exception Module      : nvcuda64.dll
Exception Flags       : 0x00000000
Exception Parameters  : 0x2
	Parameters[0] : 0x0000000000000000
	Parameters[1] : 0x0000000000000010


Stack trace:
nvcuda64.dll        :0x00007FFB2C1D4E10  Symbols not available
""", "EXCEPTION_ACCESS_VIOLATION"),
    # Blender 2.9x's, a stack overflow, the name alone.
    "blender-crash-stack-overflow": ("""\
Exception Record:

ExceptionCode         : EXCEPTION_STACK_OVERFLOW
Exception Address     : 0x00007FF7A13B2F44
Exception Module      : blender.exe
""", "EXCEPTION_STACK_OVERFLOW"),
    # Cycles 3.x and later: a kernel's illegal access surfacing in a queue copy.
    "cycles-queue-illegal-address": ("""\
Fra:1 Mem:812.40M (Peak 1013.62M) | Time:00:04.12 | Remaining:00:21.33 | Mem:640.10M, Peak:702.44M | Scene | ViewLayer | Sample 16/128
Fra:1 Mem:812.40M (Peak 1013.62M) | Time:00:04.51 | Remaining:00:20.87 | Mem:640.10M, Peak:702.44M | Scene | ViewLayer | Sample 32/128
Illegal address in CUDA queue copy_from_device (integrator_shade_surface integrator_sorted_paths_array prefix_sum)
""", "Illegal address in CUDA queue copy_from_device"),
    # Cycles' cuda_device_assert: a failed allocation, indented by the poster.
    "cycles-device-assert-out-of-memory": ("""\
Device init success
    Out of memory in cuMemAlloc(&device_pointer, size) (intern/cycles/device/cuda/device_impl.cpp:412)
""", "Out of memory in cuMemAlloc"),
    # A molecular-dynamics driver script's own handler printing OpenMM's exception.
    "openmm-check-result-driver-handler": ("""\
#"Step","Potential Energy (kJ/mole)","Temperature (K)","Speed (ns/day)"
250000,-1436252.5,300.41,84.3
An error occurred: Error synchronizing on event for CCMA: CUDA error (700) at /opt/openmm/platforms/cuda/src/CudaIntegrationUtilities.cpp:736
Saving state...
""", "Error synchronizing on event for CCMA: CUDA error (700)"),
    # FFmpeg's nvenc giving up on a GeForce's session limit.
    "ffmpeg-nvenc-open-session-failed": ("""\
Stream mapping:
  Stream #0:0 -> #0:0 (h264 (native) -> h264 (h264_nvenc))
[h264_nvenc @ 0x55d754c3ce80] OpenEncodeSessionEx failed: incompatible client key (21): (no details)
[h264_nvenc @ 0x55d754c3ce80] No capable devices found
""", "OpenEncodeSessionEx failed: incompatible client key (21)"),
    # rigaya's NVEnc finding no device it can encode on.
    "nvenc-no-gpu-suitable": ("""\
NVEncC (x64) 7.30 (r2722) by rigaya
gpuinfo: Failed to init encoder session for getting features.
No GPU found suitable for NVEnc Encoding.
""", "No GPU found suitable for NVEnc Encoding."),
}

HEALTHY = {
    # A Cycles render that finished, with a profiler line about a driver call.
    "cycles-render-finished": """\
Fra:1 Mem:812.40M (Peak 1013.62M) | Time:00:24.95 | Mem:640.10M, Peak:702.44M | Scene | ViewLayer | Sample 128/128
Time spent in cuCtxSynchronize() was 3 ms
Fra:1 Mem:812.40M (Peak 1013.62M) | Time:00:25.02 | Mem:640.10M, Peak:702.44M | Scene | ViewLayer | Finished
Saved: '/opt/render/0001.png'
 Time: 00:25.31 (Saving: 00:00.21)
""",
    # NVEnc's device list and a finished encode.
    "nvenc-check-device-and-encode": """\
DeviceId #0: NVIDIA GeForce RTX 2060
encoded 1200 frames, 311.52 fps, 8395.41 kbps, 41.97 MB
encode time 0:00:03, CPU: 7.1%, GPU: 18.9%, VE: 63.4%, VD: 0.0%, GPUClock: 1785MHz, VEClock: 1620MHz
""",
}


test_failed_ending_leads, test_healthy_ending_has_no_incident = ending_tests(FAILURES, HEALTHY, FALLBACK)
