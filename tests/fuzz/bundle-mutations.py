#!/usr/bin/env python3
"""How many random mutations of a real evidence bundle fl_report_from_bundles
accepts (issue #17: 1,118 of 3,000 before the reader checked what it trusts).

usage: tests/fuzz/bundle-mutations.py LIBFAULTLINE.so LOG_PATH [N]

Scans LOG_PATH (file or directory) into one bundle, then N times (3000)
replaces 1-4 random bytes (random.Random(1): the same mutations every run)
and counts the reports built. An accepted mutation is not a bug by itself:
bytes no invariant covers (evidence text that stays valid UTF-8, host names,
byte and line counts, padding) cannot be told from real ones without a
checksum in the format."""
import ctypes
import random
import sys


def main():
    lib = ctypes.CDLL(sys.argv[1])
    n_mut = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    P = ctypes.c_void_p
    lib.fl_report_free.argtypes = [P]
    lib.fl_error_free.argtypes = [P]
    rs, err, s = P(), P(), P()
    assert lib.fl_ruleset_load_default(ctypes.byref(rs), ctypes.byref(err)) == 0
    assert lib.fl_session_new(ctypes.byref(s), rs, None, None) == 0
    assert lib.fl_session_add_path(s, sys.argv[2].encode()) == 0
    data, n = P(), ctypes.c_size_t()
    assert lib.fl_session_export_bundle(s, ctypes.byref(data), ctypes.byref(n)) == 0
    bundle = ctypes.string_at(data, n.value)
    rng = random.Random(1)
    accepted = 0
    for _ in range(n_mut):
        m = bytearray(bundle)
        for _ in range(rng.randint(1, 4)):
            m[rng.randrange(len(m))] = rng.randrange(256)
        buf = ctypes.create_string_buffer(bytes(m), len(m))
        ptrs = (P * 1)(ctypes.cast(buf, P))
        lens = (ctypes.c_size_t * 1)(len(m))
        r, e = P(), P()
        if lib.fl_report_from_bundles(ctypes.byref(r), rs, None, ptrs, lens, 1, ctypes.byref(e)) == 0:
            accepted += 1
            lib.fl_report_free(r)
        else:
            lib.fl_error_free(e)
    print(f"bundle of {sys.argv[2]}: {len(bundle)} bytes; {accepted} of {n_mut} mutations accepted")


if __name__ == "__main__":
    main()
