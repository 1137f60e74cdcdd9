// llama.cpp builds by date: a dated version (llamacpp@main@2025-08-15, a wrapper's "(2025-08)")
// becomes the build released then, by linear interpolation between release dates of known builds.
#include "engines/llamacpp/build_dates.h"

#include <chrono>
#include <iterator>

namespace headroom::llamacpp {

namespace {
struct BuildDate {
  int ymd, build;
};
// Release dates: ggml-bot-2's "New version: ggml.llamacpp version bNNNN" pull requests to
// microsoft/winget-pkgs, opened when the release is cut (2025-05 on); before that, the run date of a
// llama.cpp#8730 log ("main: build = 3485", seed 1722265129 = 2024-07-29).
constexpr BuildDate kDates[] = {
    {20240729, 3485}, {20250526, 5490}, {20250620, 5712}, {20250720, 5943},  {20250901, 6337},  {20250907, 6402},
    {20251116, 7077}, {20251202, 7224}, {20260118, 7770}, {20260212, 8006},  {20260302, 8184},  {20260325, 8508},
    {20260416, 8808}, {20260518, 9204}, {20260604, 9500}, {20260707, 9893},  {20260728, 10155}, {20260821, 10545},
    {20260903, 10775},
};

int days(int ymd) {
  using namespace std::chrono;
  const year_month_day d{year{ymd / 10000}, month{static_cast<unsigned>(ymd / 100 % 100)}, day{static_cast<unsigned>(ymd % 100)}};
  return static_cast<int>(sys_days{d}.time_since_epoch().count());
}
}  // namespace

int build_for_date(int ymd) {
  if (ymd > kDates[std::size(kDates) - 1].ymd) return 0;  // after the last known release: the newest rules
  const BuildDate* hi = kDates + 1;
  while (hi != std::end(kDates) - 1 && hi->ymd < ymd) ++hi;
  const BuildDate* lo = hi - 1;  // before the first date: the first interval's rate, backwards
  const double rate = static_cast<double>(hi->build - lo->build) / (days(hi->ymd) - days(lo->ymd));
  const int b = lo->build + static_cast<int>(rate * (days(ymd) - days(lo->ymd)));
  return b < 1 ? 1 : b;
}

}  // namespace headroom::llamacpp
