// Fuzz harness for the log readers: any bytes, fed whole and in small chunks, must give a
// LogScan or an InputError — never a crash, a hang or unbounded memory.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/error.h"
#include "headroom/logscan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    headroom::LogScan s = headroom::scan_log_text(text, "fuzz");
    for (const auto& e : s.evidence) (void)s.line_text(e.line);
  } catch (const headroom::InputError&) {
  }
  try {
    headroom::LogScanOptions opt;
    opt.max_line_bytes = 300;
    opt.max_evidence = 8;
    headroom::LogScanner sc("fuzz", opt);
    for (size_t i = 0; i < text.size(); i += 7) sc.feed(text.substr(i, 7));
    (void)sc.finish();
  } catch (const headroom::InputError&) {
  }
  return 0;
}
