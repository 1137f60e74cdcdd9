// The estimated-constant tables (include/headroom/estimates.h): well-formed rows, and every case a
// row cites exists in tests/data/{corpus,extra} (so a constant's evidence can be re-read).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engines/graph_nodes.h"
#include "headroom/estimates.h"

using namespace headroom;

namespace {

std::set<std::string> corpus_ids() {
  std::set<std::string> ids;
  for (const char* dir : {"corpus", "extra"})
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(HEADROOM_TEST_DATA) / dir)) {
      if (e.path().extension() != ".jsonl") continue;
      std::ifstream in(e.path());
      for (std::string line; std::getline(in, line);)
        if (!line.empty()) ids.insert(nlohmann::json::parse(line).at("id").get<std::string>());
    }
  return ids;
}

void check_table(std::span<const EstimatedConstant> rows, const std::string& prefix, const std::set<std::string>& ids) {
  std::set<std::string_view> seen;
  for (const auto& r : rows) {
    EXPECT_TRUE(seen.insert(r.id).second) << "duplicate " << r.id;
    EXPECT_EQ(r.id.substr(0, prefix.size()), prefix) << r.id;
    EXPECT_LE(r.low, r.central) << r.id;
    EXPECT_LE(r.central, r.high) << r.id;
    EXPECT_FALSE(r.unit.empty()) << r.id;
    EXPECT_FALSE(r.what.empty()) << r.id;
    std::istringstream cases{std::string(r.cases)};
    for (std::string c; cases >> c;) EXPECT_TRUE(ids.count(c)) << r.id << " cites " << c << ", not in tests/data/{corpus,extra}";
  }
}

}  // namespace

TEST(EstimatedConstants, RowsAreWellFormedAndCiteRealCases) {
  const auto ids = corpus_ids();
  ASSERT_GT(ids.size(), 100u);
  ASSERT_FALSE(estimated_constants(EngineKind::SGLang).empty());
  check_table(estimated_constants(EngineKind::SGLang), "sglang.", ids);
  check_table(estimated_constants(EngineKind::VLLM), "vllm.", ids);
  check_table(estimated_constants(EngineKind::TRTLLM), "trtllm.", ids);
  check_table(estimated_constants(EngineKind::LlamaCpp), "llamacpp.", ids);
  EXPECT_FALSE(estimated_constants(EngineKind::TRTLLM).empty());
  EXPECT_FALSE(estimated_constants(EngineKind::LlamaCpp).empty());
  check_table(shared_estimated_constants(), "shared.", ids);
}

TEST(EstimatedConstants, TheSharedGraphNodeCostIsTheMeasuredRow) {
  for (const auto& r : shared_estimated_constants())
    if (r.id == "shared.graph_node_bytes") {
      EXPECT_EQ(r.evidence, Evidence::Measured);
      EXPECT_DOUBLE_EQ(r.central * 1024.0, kGraphNodeBytes);
      return;
    }
  ADD_FAILURE() << "no shared.graph_node_bytes row";
}
