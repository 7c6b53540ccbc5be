// Ruleset::LoadBuffer on arbitrary bytes: the FlatBuffers Verifier, the
// required-field checks, the checksums, the Hyperscan database (recompiled
// from the patterns: unsigned bytes are never deserialized) and the RE2
// confirmers. A ruleset that loads must be usable: rule listings and a scan
// of a few real log lines must not crash, and every match must name a signal
// of that ruleset.
//
// Seeds: the compiled default ruleset, a small one, and truncations.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "report/report.h"
#include "scan/scan.h"

using namespace faultline;

namespace {
constexpr std::string_view kLines =
    "[1000001.682554] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has "
    "fallen off the bus.\n"
    "[rank3]:[E1102 13:46:41.123456 1234 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=4711, OpType=ALLREDUCE) ran for 600005 ms\n"
    "node017:1:1 [3] NCCL INFO comm 0x1 rank 3 nranks 8 cudaDev 3 busId 3b000 - Init COMPLETE\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto loaded = Ruleset::LoadBuffer(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!loaded.ok()) return 0;
  std::shared_ptr<const Ruleset> rs = *loaded;
  (void)RulesListJson(*rs);
  for (size_t i = 0; i < rs->rule_count(); ++i) {
    (void)RuleJson(*rs, i);
    (void)RuleText(*rs, i);
    FL_FUZZ_CHECK(rs->FindRule(rs->rule(i)->id()->string_view()) >= 0, "rule id not found");
  }
  ScanOptions so;
  so.threads = 1;
  Scanner scanner(rs, so);
  uint32_t id = scanner.OpenStream("node017/kern.log");
  if (!scanner.Feed(id, kLines).ok()) return 0;
  (void)scanner.CloseStream(id);
  ScanResult r = scanner.Finish();
  fuzz::CheckScanResult(*rs, r, kLines, true);
  return 0;
}
