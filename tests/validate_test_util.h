// Helper shared by the tests that replay a corpus file through validate_corpus(): one case's
// per-case row by id.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "headroom/validate.h"

namespace headroom::test {

// The "per_case" row of `id`; a test failure (and an empty row) when there is none.
inline const nlohmann::ordered_json& case_row(const nlohmann::ordered_json& j, const std::string& id) {
  for (const auto& r : j["per_case"])
    if (r["id"] == id) return r;
  static const nlohmann::ordered_json none;
  ADD_FAILURE() << "no case " << id;
  return none;
}

}  // namespace headroom::test
