// Fix-ups that need every source of the job at once: kernel monotonic stamps
// anchored to wall time (from the same source, else another source of the
// same host), and year-less stamps placed in the year nearest the job's dated
// evidence. Run at the end of a scan and again after bundles merge. Four
// passes, in this order: monotonic anchoring, traceback attribution (which
// hands the exception line's time to its frames), nested Ray task headers
// (each takes the innermost's host), year placement.
//
// Thread-safety: plain functions on a caller-owned ScanResult.
#ifndef FAULTLINE_EVIDENCE_FINALIZE_H_
#define FAULTLINE_EVIDENCE_FINALIZE_H_

#include "evidence/evidence.h"

namespace faultline {

void FinalizeTimes(ScanResult& r);

namespace internal {
// Of `us` shifted by -3..+3 years (the same month, day and time of day; a
// 29 February in a common year is 1 March, as timegm makes it), the one
// nearest `ref`. By civil-day arithmetic; NearestYearByTimegm is the
// reference, taken outside years 1970..9999.
int64_t NearestYear(int64_t us, int64_t ref);
int64_t NearestYearByTimegm(int64_t us, int64_t ref);
}  // namespace internal

}  // namespace faultline

#endif  // FAULTLINE_EVIDENCE_FINALIZE_H_
