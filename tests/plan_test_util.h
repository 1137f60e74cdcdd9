// Helpers shared by the engine plan tests: plan a command line, look for predicted log lines, and
// catch the one-line InputError a bad command line gives.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/error.h"

namespace headroom::test {

inline Forecast run(std::vector<std::string> argv) { return plan(parse_deployment(Args::parse(argv))); }

// A command line with more arguments appended.
inline std::vector<std::string> plus(std::vector<std::string> argv, const std::vector<std::string>& more) {
  argv.insert(argv.end(), more.begin(), more.end());
  return argv;
}

inline bool has_line(const Forecast& f, const std::string& line) { return std::find(f.log.begin(), f.log.end(), line) != f.log.end(); }

inline bool has_prefix(const Forecast& f, const std::string& prefix) {
  return std::any_of(f.log.begin(), f.log.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
}

// Rank 0's first stage item whose label starts with `prefix` ("model weights", "profile_run
// activation peak"), or nullptr.
inline const Item* rank0_item(const Forecast& f, const std::string& prefix) {
  for (const auto& st : f.ranks.at(0).stages)
    for (const auto& it : st.items)
      if (it.what.rfind(prefix, 0) == 0) return &it;
  return nullptr;
}

// A llama.cpp plan's buffers on the device llama.cpp names `name` ("CUDA0", "CPU_Mapped").
inline const DeviceMemory& device(const Forecast& f, const std::string& name) {
  for (const auto& d : f.devices)
    if (d.name == name) return d;
  throw std::runtime_error("no device " + name);
}

// The number right after `head` on the first predicted log line that starts with it ("Estimated
// CUDA graph memory: ", "Graph capturing finished, took "), or NAN when no line has it.
inline double number_after(const Forecast& f, const std::string& head) {
  for (const auto& l : f.log)
    if (l.rfind(head, 0) == 0) {
      double v = NAN;
      if (std::sscanf(l.c_str() + head.size(), "%lf", &v) == 1) return v;
    }
  return NAN;
}

// A dense toy config for vLLM's profile-run sampler tests (vllm_plan_test.cpp, vllm_pcie_test.cpp):
// its forward peak (150,994,944 B at N = 8192: residual + hidden 2 x 8192 x 2048 x 2 = 67,108,864 +
// attention 8192 x (16 + 2 x 4) x 128 x 2 + 8192 x 16 x 128 x 2 = 83,886,080) stays below the sampler
// term, so the sampler sets the peak. Vocab 151,936 (Qwen3).
inline ModelConfig sampler_toy() {
  ModelConfig c;
  c.hidden_size = 2048;
  c.num_attention_heads = 16;
  c.num_kv_heads = 4;
  c.head_dim = 128;
  c.intermediate_size = 1024;
  c.vocab_size = 151936;
  c.num_layers = 2;
  return c;
}

// The InputError's text, or "" when the command line plans.
inline std::string input_error(std::vector<std::string> argv) {
  try {
    run(std::move(argv));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace headroom::test
