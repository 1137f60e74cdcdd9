// Fuzz harness: an engine command line (one token per line; the first byte picks vLLM, SGLang or
// TensorRT-LLM) through the option parser, the engine's flag reading and the plan must plan or
// throw InputError (exit 2); never crash or hang. Covers the list options, short aliases,
// underscore spellings and the JSON-valued flags (--compilation-config, --limit-mm-per-prompt,
// --rope-scaling, --hf-overrides, --speculative-config, --eplb-config, SGLang --json-model-override-args).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 4096) return 0;
  static const char* kEngines[] = {"vllm@0.20.0", "vllm@0.27.1", "sglang", "trtllm"};
  std::vector<std::string> argv{"--engine", kEngines[data[0] % 4], "--model", "Qwen/Qwen3-8B", "--gpu", "l40s"};
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t start = 0;
  while (start <= text.size() && argv.size() < 64) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    argv.emplace_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  try {
    headroom::plan(headroom::parse_deployment(headroom::Args::parse(argv)));
  } catch (const headroom::InputError&) {
  }
  return 0;
}
