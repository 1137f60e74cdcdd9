// One row per engine of what the CLI, doctor, compare, tune and the web page (GET /api/meta) need
// to know about it by name: its spellings on the command line, its launch command, the flags it
// accepts, its parallelism / context / memory knobs spelled as it spells them, and how its
// versions are written (issue 27 item 4). Engine arithmetic stays in src/engines/<engine>/.
#pragma once
#include <span>
#include <string_view>
#include <vector>

#include "headroom/parallel.h"

namespace headroom {

struct EngineTraits {
  EngineKind kind;
  std::string_view name;                   // "vllm": engine_kind_name, --engine NAME
  std::span<const std::string_view> aliases;  // other --engine spellings ("tensorrt-llm")
  std::string_view display;                // "vLLM"
  std::string_view launch;                 // "vllm serve MODEL"
  std::string_view tp_flag;                // "--tensor-parallel-size" ("" for llama.cpp: layers split over GPUs)
  std::string_view context_flag;           // "--max-model-len"
  std::string_view memory_flag;            // the share of memory it takes ("--gpu-memory-utilization"; llama.cpp: "")
  double memory_lo, memory_hi;             // the values it accepts for memory_flag
  std::string_view version_example;        // "0.10.2, 0.21.0, or main@2025-10-16"
  const std::vector<std::string_view>& (*flags)();  // every flag headroom reads for it, as it spells them
};

std::span<const EngineTraits> engine_traits();
const EngineTraits& traits(EngineKind kind);
// The engine an --engine name (or alias) means, case-insensitive; nullptr when none.
const EngineTraits* traits_by_name(std::string_view name);

}  // namespace headroom
