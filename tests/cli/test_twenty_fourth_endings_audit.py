"""Endings the twenty-fourth endings audit (tests/cli/endings, e24-*.log)
read as nothing, read where the scientific code that printed them writes
them (issue #18):

- GROMACS's fatal error block puts the title 'Fatal error:' alone on its
  line and the message below it;
- LAMMPS's Error::all and Error::one write 'ERROR: <message> (<file>:<line>)'
  and 'ERROR on proc N: ...', then stop the run;
- NAMD's NAMD_die writes 'FATAL ERROR: <message>', and Charm++'s CmiAbort
  'Processor N Exiting: Called CmiAbort' with the reason on the next line;
- Charm++'s GPU manager writes 'Fatal CUDA Error <error> at <file>:<line>.';
- the HandleError check of many CUDA codes (RELION's among them) writes
  'ERROR: <error> in <file> at line N (error-code N)';
- Quantum ESPRESSO's errore writes 'Error in routine <name> (<code>):' and
  stops.
"""
import pytest

from conftest import diagnose_text, leading_incident

FALLBACK = "unrecognised-fatal-error"

FAILURES = {
    # abeebyekeen/CHAPERONg#5: gmx mdrun's pull code.
    "gromacs-fatal-error-title-alone": ("""\
Program:     gmx mdrun, version 2024.1
Source file: src/gromacs/pulling/pull.cpp (line 525)

Fatal error:
Distance between pull groups 1 and 2 (6.707361 nm) is larger than 0.49 times
the box size (6.707185).

For more information and tips for troubleshooting, please check the GROMACS
website at https://manual.gromacs.org/current/user-guide/run-time-errors.html
""", "Distance between pull groups"),
    # lammps/lammps#2684: the GPU package's run, its driver error after.
    "lammps-error-with-source-location": ("""\
       1          500     494.8438            0     9375
ERROR: Lost atoms: original 9411 current 9153 (src/thermo.cpp:427)
Last command:     run 250000
Cuda driver error 4 in call at file '/opt/lammps/lib/gpu/geryon/nvd_timer.h' in line 98.
""", "ERROR: Lost atoms"),
    # fhh2626/BFEE3#133.
    "namd-fatal-error": ("""\
FATAL ERROR: CudaTileListKernel::buildTileLists, maximum shared memory allocation exceeded. Too many atoms in a patch
""", "FATAL ERROR: CudaTileListKernel"),
    # HuiLiuCode/CaFE_Plugin#3: VMD's own exit follows NAMD's abort.
    "charm-cmiabort-reason-below": ("""\
------------- Processor 0 Exiting: Called CmiAbort ------------
Reason: FATAL ERROR: Pair interaction calculation is not supported in CUDA version

Charm++ fatal error:
FATAL ERROR: Pair interaction calculation is not supported in CUDA version

Info) VMD for LINUXAMD64, version 1.9.3 (November 30, 2016)
Info) Exiting normally.
""", "Pair interaction calculation is not supported"),
    # charmplusplus/charm#1488: the first line leads, not the abort after it.
    "charm-fatal-cuda-error": ("""\
Fatal CUDA Error out of memory at cuda-hybrid-api.cu:790.
Return value 2 from 'cudaMallocHost(&pinnedChunk, bufSize * numBuffers)'.------------- Processor 0 Exiting: Called CmiAbort ------------
Reason:  Exiting!
Aborted (core dumped)
""", "Fatal CUDA Error out of memory"),
    # 3dem/relion#488: refinement's GPU ran out of memory.
    "cuda-handle-error": ("""\
ERROR: out of memory in /usr/local/relion-3-source/src/acc/acc_backprojector_impl.h at line 38 (error-code 2)
in: /usr/local/relion-3-source/src/acc/cuda/cuda_settings.h, line 67
=== Backtrace  ===
/usr/local/relion-3/bin/relion_refine_mpi(main+0xb39) [0x42c529]
""", "ERROR: out of memory in"),
    # aiidateam/aiida-quantumespresso#742: pw.x's diagonalization.
    "quantum-espresso-errore": ("""\
%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%
     Error in routine  cdiaghg (161): 
      problems computing cholesky
%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%
""", "Error in routine  cdiaghg"),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_ending_leads(faultline_bin, validate, tmp_path, name):
    text, initiating = FAILURES[name]
    leading_incident(faultline_bin, validate, tmp_path, text, rule=FALLBACK, line=initiating)


@pytest.mark.parametrize("text", [
    # LAMMPS's warnings carry the same source location and go on.
    "WARNING: Calling write_dump before a full system init. (src/write_dump.cpp:65)\n",
    # Quantum ESPRESSO's infomsg is a note.
    "     Message from routine setup:\n     using ibrav=0 with symmetry is DISCOURAGED, use correct ibrav instead\n",
    # A run summary with a scary word in it.
    "Neighbor list builds = 26346\nDangerous builds = 0\nTotal wall time: 5:00:32\n",
])
def test_quiet(faultline_bin, validate, tmp_path, text):
    incidents = diagnose_text(faultline_bin, validate, tmp_path, text)
    assert not [i for i in incidents if not i["reference"].startswith("Benign")], \
        [i["reference"] for i in incidents]
