// Fix-ups that need every source of the job at once: kernel monotonic stamps
// anchored to wall time (from the same source, else another source of the
// same host), and year-less stamps placed in the year nearest the job's dated
// evidence. Run at the end of a scan and again after bundles merge. Three
// passes, in this order: monotonic anchoring, traceback attribution (which
// hands the exception line's time to its frames), year placement.
//
// Thread-safety: plain functions on a caller-owned ScanResult.
#ifndef FAULTLINE_EVIDENCE_FINALIZE_H_
#define FAULTLINE_EVIDENCE_FINALIZE_H_

#include "evidence/evidence.h"

namespace faultline {

void FinalizeTimes(ScanResult& r);

}  // namespace faultline

#endif  // FAULTLINE_EVIDENCE_FINALIZE_H_
