// Helper shared by the tests that replay a corpus file through validate_corpus(): one case's
// per-case row by id.
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "headroom/validate.h"

namespace headroom::test {

// Writes a corpus file of `lines` under the test temp dir; returns its path.
inline std::string write_corpus(const std::string& name, const std::string& lines) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << lines;
  return path;
}

// The "per_case" row of `id`; a test failure (and an empty row) when there is none.
inline const nlohmann::ordered_json& case_row(const nlohmann::ordered_json& j, const std::string& id) {
  for (const auto& r : j["per_case"])
    if (r["id"] == id) return r;
  static const nlohmann::ordered_json none;
  ADD_FAILURE() << "no case " << id;
  return none;
}

}  // namespace headroom::test
