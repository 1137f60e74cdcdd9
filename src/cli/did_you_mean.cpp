// "did you mean": the nearest candidate to a misspelled verb, flag, GPU or engine name, by edit
// distance (case-insensitive, dashes and underscores alike), when it is near enough to be a typo.
#include <algorithm>
#include <cctype>

#include "headroom/cli.h"

namespace headroom {

namespace {

std::string fold(std::string_view s) {
  std::string r;
  for (char c : s) r += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.size() > 200) return "";  // a typo is short; this bounds the work on hostile input
  const std::string w = fold(word);
  const size_t limit = std::max<size_t>(2, w.size() / 3);
  std::string best;
  size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    if (c.size() > 200) continue;
    size_t d = edit_distance(w, fold(c));
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean_hint(std::string_view word, const std::vector<std::string_view>& candidates) {
  const std::string near = did_you_mean(word, std::vector<std::string>(candidates.begin(), candidates.end()));
  return near.empty() ? "" : " (did you mean " + near + "?)";
}

}  // namespace headroom
