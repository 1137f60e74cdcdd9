// TensorRT-LLM's speculative_config (LLM-API DecodingBaseConfig, given as --speculative_config
// JSON: what the extra_llm_api_options YAML would set): which drafter layers join the target's KV
// pool and CUDA graphs (tensorrt_llm/_torch/speculative/utils.py get_num_spec_layers).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engines/trtllm/trtllm_rules.h"
#include "headroom/error.h"

namespace headroom::trtllm {

namespace {
int64_t small_int(const nlohmann::json& j, const char* key, int64_t fallback) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_number_integer() || j[key].get<int64_t>() < 1 || j[key].get<int64_t>() > 64)
    fail_input("--speculative_config", key, "expected an integer from 1 to 64");
  return j[key].get<int64_t>();
}
}  // namespace

SpecDecoding parse_speculative_config(const std::string& text, int64_t model_mtp_layers) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) fail_input("--speculative_config", "value", "expected a JSON object, e.g. {\"decoding_type\": \"MTP\", \"num_nextn_predict_layers\": 1}");
  if (!j.contains("decoding_type") || !j["decoding_type"].is_string())
    fail_input("--speculative_config", "decoding_type", "missing (MTP, Eagle3, DraftTarget, NGram, ...)");
  SpecDecoding sp;
  sp.type = j["decoding_type"].get<std::string>();
  if (sp.type == "MTP") {
    // MTPDecodingConfig: num_nextn_predict_layers 1; use_mtp_vanilla False = the "MTP Eagle" one-model
    // worker, which runs the checkpoint's first MTP module max_draft_len times and gives it one KV
    // layer; vanilla MTP keeps one KV layer per module (get_num_spec_layers, 2026 utils.py).
    const int64_t n = small_int(j, "num_nextn_predict_layers", 1);
    const bool vanilla = j.contains("use_mtp_vanilla") && j["use_mtp_vanilla"].is_boolean() && j["use_mtp_vanilla"].get<bool>();
    if (model_mtp_layers <= 0) fail_input("--speculative_config", "decoding_type", "MTP needs a checkpoint with MTP layers (num_nextn_predict_layers in config.json)");
    sp.draft_len = n;
    sp.kv_layers = vanilla ? n : 1;
    sp.graph_layer_runs = n;  // each draft step runs one MTP module inside the captured graph
    sp.loads_mtp_weights = true;
    sp.what = fmt::format("MTP ({}): {} draft token(s), {} KV layer(s) for the MTP module(s)", vanilla ? "vanilla" : "Eagle one-model", n, sp.kv_layers);
  } else if (sp.type == "Eagle3" || sp.type == "Eagle") {
    // EagleDecodingConfig: eagle3_one_model (True in 2026 copies): the draft layer(s) share the
    // target's KV manager and graphs; its weights come from speculative_model_dir (not read here).
    sp.draft_len = small_int(j, "max_draft_len", 3);
    const bool one_model = !(j.contains("eagle3_one_model") && j["eagle3_one_model"].is_boolean() && !j["eagle3_one_model"].get<bool>());
    sp.kv_layers = one_model ? small_int(j, "num_eagle_layers", 1) : 0;
    sp.graph_layer_runs = one_model ? sp.draft_len * sp.kv_layers : 0;
    sp.what = fmt::format("Eagle3 ({}): {} draft tokens; the draft head's weights (speculative_model_dir) are not counted", one_model ? "one-model" : "two-model",
                          sp.draft_len);
  } else {
    sp.draft_len = j.contains("max_draft_len") ? small_int(j, "max_draft_len", 1) : 0;
    sp.what = fmt::format("speculative decoding_type '{}': its drafter's weights, KV and graphs are not modelled", sp.type);
  }
  return sp;
}

}  // namespace headroom::trtllm
