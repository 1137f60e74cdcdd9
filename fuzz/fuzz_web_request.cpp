// Fuzz harness: a web API request body (the first byte picks plan, tune or doctor) through
// parse_api_request must be accepted or refused with InputError; never crash, hang or let a
// file path through (issue 31). Bodies past the server's cap never reach it, so none are tried.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "headroom/error.h"
#include "web/web.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > (size_t{1} << 16)) return 0;
  static constexpr std::string_view kVerbs[] = {"plan", "tune", "doctor"};
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    headroom::web::parse_api_request(kVerbs[data[0] % 3], body);
  } catch (const headroom::InputError&) {
  }
  return 0;
}
