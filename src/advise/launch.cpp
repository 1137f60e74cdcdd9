// The launch command to paste, in each engine's own spelling: SGLang's launch_server
// (server_args.py: --model-path, --tp-size, --pp-size, --dp-size, --ep-size,
// --enable-dp-attention), `vllm serve` (arg_utils.py: --tensor-parallel-size,
// --pipeline-parallel-size, --data-parallel-size) and trtllm-serve (--tp_size, --pp_size, --ep_size).
#include <fmt/format.h>
#include <vector>

#include "headroom/advise.h"
#include "headroom/cli.h"
#include "model/gguf_hub.h"

namespace headroom {

namespace {

// Single-quotes a value the shell would split or expand.
std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\n'\"$`\\|&;<>()*?[]{}!#~") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

// TensorRT-LLM: LLM-API fields that trtllm-serve takes only through --extra_llm_api_options
// (a YAML file; tensorrt_llm/llmapi/llm_args.py: KvCacheConfig, CudaGraphConfig, TorchLlmArgs).
struct YamlField {
  std::string_view flag, section, key;
};
constexpr YamlField kTrtYaml[] = {
    {"--free_gpu_memory_fraction", "kv_cache_config", "free_gpu_memory_fraction"},
    {"--max_tokens", "kv_cache_config", "max_tokens"},
    {"--max_gpu_total_bytes", "kv_cache_config", "max_gpu_total_bytes"},
    {"--tokens_per_block", "kv_cache_config", "tokens_per_block"},
    {"--kv_cache_dtype", "kv_cache_config", "dtype"},
    {"--enable_block_reuse", "kv_cache_config", "enable_block_reuse"},
    {"--cuda_graph_max_batch_size", "cuda_graph_config", "max_batch_size"},
    {"--cuda_graph_enable_padding", "cuda_graph_config", "enable_padding"},
    {"--enable_attention_dp", "", "enable_attention_dp"},
};

const YamlField* trt_yaml_field(std::string_view flag) {
  for (const auto& f : kTrtYaml)
    if (f.flag == flag) return &f;
  return nullptr;
}

}  // namespace

std::string launch_command(const Deployment& d, const FlagList& flags) {
  std::string cmd;
  for (const auto& [name, value] : d.env) cmd += name + "=" + shell_word(value) + " ";  // --env, as the shell sets it
  const Parallel& p = d.par;
  switch (d.engine) {
    case EngineKind::VLLM:
      cmd += "vllm serve " + shell_word(d.model_spec) + fmt::format(" --tensor-parallel-size {}", p.tp);
      if (p.pp > 1) cmd += fmt::format(" --pipeline-parallel-size {}", p.pp);
      if (p.dp > 1) cmd += fmt::format(" --data-parallel-size {}", p.dp);
      break;
    case EngineKind::TRTLLM: {
      // trtllm-serve takes the parallel sizes as its own options; flags given that way win.
      auto given = [&](std::string_view f) {
        for (const auto& kv : flags)
          if (kv.first == f) return true;
        return false;
      };
      cmd += "trtllm-serve " + shell_word(d.model_spec);
      if (!given("--tp_size")) cmd += fmt::format(" --tp_size {}", p.tp);
      if (p.pp > 1 && !given("--pp_size")) cmd += fmt::format(" --pp_size {}", p.pp);
      if (p.ep > 1 && !given("--ep_size")) cmd += fmt::format(" --ep_size {}", p.ep);
      if (p.dp_attention && !given("--enable_attention_dp")) cmd += " --enable_attention_dp";
      break;
    }
    case EngineKind::LlamaCpp:
      // llama-server takes a GGUF file: a derived --quant names the file to fetch, not a flag.
      // A Hub GGUF repo's file: llama-server fetches it itself (-hf REPO:QUANT, --hf-repo/--hf-file).
      if (hub::parse_gguf_ref(d.model_spec)) cmd += "llama-server -hf " + shell_word(d.model_spec);
      else if (const std::string* f = d.flag("--gguf")) cmd += "llama-server --hf-repo " + shell_word(d.model_spec) + " --hf-file " + shell_word(*f);
      else cmd += "llama-server -m " + shell_word(d.model_spec);
      break;
    default:
      cmd += "python -m sglang.launch_server --model-path " + shell_word(d.model_spec) + fmt::format(" --tp-size {}", p.tp);
      if (p.pp > 1) cmd += fmt::format(" --pp-size {}", p.pp);
      if (p.dp > 1) cmd += fmt::format(" --dp-size {}", p.dp);
      if (p.dp_attention) cmd += " --enable-dp-attention";
      if (p.ep > 1) cmd += fmt::format(" --ep-size {}", p.ep);
      break;
  }
  // TensorRT-LLM LLM-API fields, grouped by YAML section in order of first appearance.
  std::vector<std::pair<std::string, std::vector<std::string>>> yaml;
  auto yaml_add = [&](std::string_view section, std::string line) {
    for (auto& [sec, lines] : yaml)
      if (sec == section) {
        lines.push_back(std::move(line));
        return;
      }
    yaml.push_back({std::string(section), {std::move(line)}});
  };
  std::string engine_note;
  for (const auto& [k, v] : flags) {
    if (d.engine == EngineKind::LlamaCpp && k == "--gguf") continue;  // in the model's words above
    if (d.engine == EngineKind::LlamaCpp && k == "--quant") {
      engine_note = fmt::format("# a {} GGUF of {} (e.g. from the Hub's *-GGUF repositories) in place of the model id\n", v, d.model_spec);
      continue;
    }
    if (d.engine == EngineKind::TRTLLM) {
      // --quantization is how the TensorRT engine was built (trtllm-build after quantize.py /
      // convert_checkpoint.py), not a trtllm-serve option: serve that engine's directory.
      if (k == "--quantization") {
        engine_note = fmt::format("# serve the TensorRT engine built from {} with quantization {} (its directory in place of the model)\n",
                                  d.model_spec, v);
        continue;
      }
      if (k == "--disable_cuda_graph") {
        if (v == "true" || v == "1") yaml_add("", "cuda_graph_config: null");
        continue;
      }
      if (const YamlField* y = trt_yaml_field(k)) {
        yaml_add(y->section, fmt::format("{}{}: {}", y->section.empty() ? "" : "  ", y->key, v));
        continue;
      }
    }
    if (is_boolean_flag(k)) {
      if (v == "true" || v == "1" || v.empty()) cmd += " " + k;
      continue;  // "false": the flag is simply left out
    }
    cmd += " " + k + " " + shell_word(v);
  }
  if (!yaml.empty()) {
    std::string file;
    for (const auto& [sec, lines] : yaml) {
      if (!sec.empty()) file += sec + ":\n";
      for (const auto& l : lines) file += l + "\n";
    }
    cmd = "cat > extra_llm_api_options.yaml <<'EOF'\n" + file + "EOF\n" + cmd + " --extra_llm_api_options extra_llm_api_options.yaml";
  }
  return engine_note + cmd;
}

}  // namespace headroom
