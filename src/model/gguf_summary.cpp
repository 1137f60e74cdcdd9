// A GGUF model's facts from its metadata, read the way llama.cpp's load_hparams reads them
// (src/llama-model.cpp: key_length defaults to n_embd / n_head, head_count_kv to head_count, both
// may be per-layer arrays: get_key_or_arr), and its tensors totalled by ggml type. Parameters
// are element counts; active parameters count routed experts (*_exps tensors) at used/count.
#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <optional>

#include "headroom/error.h"
#include "headroom/gguf_model.h"

namespace headroom::gguf {
namespace {

// Per-layer values: a scalar for every layer, or an array of exactly n entries, each in [0, 2^20];
// nullopt when the key is absent.
std::optional<std::vector<int64_t>> per_layer(const Header& h, const std::string& key, int64_t n) {
  auto v = h.get_int_or_array(key);
  if (!v) return std::nullopt;
  for (int64_t x : *v)
    if (x < 0 || x > (1 << 20)) fail_input(h.source, key, fmt::format("{} is out of range [0, {}]", x, 1 << 20));
  if (h.find(key)->type != ValueType::Array) return std::vector<int64_t>(static_cast<size_t>(n), v->front());
  if (static_cast<int64_t>(v->size()) != n)
    fail_input(h.source, key, fmt::format("array of {} entries, expected one per layer ({})", v->size(), n));
  return v;
}

int64_t nonneg(const Header& h, const std::string& key, int64_t fallback, int64_t max = int64_t{1} << 40) {
  auto v = h.get_int(key);
  if (!v) return fallback;
  if (*v < 0 || *v > max) fail_input(h.source, key, fmt::format("{} is out of range [0, {}]", *v, max));
  return *v;
}

}  // namespace

std::string file_type_name(int64_t ftype) {
  // llama.h enum llama_ftype (LLAMA_FTYPE_MOSTLY_*); 4-6 and 33-35 were removed.
  static const std::map<int64_t, const char*> kNames = {
      {0, "F32"}, {1, "F16"}, {2, "Q4_0"}, {3, "Q4_1"}, {7, "Q8_0"}, {8, "Q5_0"}, {9, "Q5_1"},
      {10, "Q2_K"}, {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"}, {15, "Q4_K_M"},
      {16, "Q5_K_S"}, {17, "Q5_K_M"}, {18, "Q6_K"}, {19, "IQ2_XXS"}, {20, "IQ2_XS"}, {21, "Q2_K_S"},
      {22, "IQ3_XS"}, {23, "IQ3_XXS"}, {24, "IQ1_S"}, {25, "IQ4_NL"}, {26, "IQ3_S"}, {27, "IQ3_M"},
      {28, "IQ2_S"}, {29, "IQ2_M"}, {30, "IQ4_XS"}, {31, "IQ1_M"}, {32, "BF16"}, {36, "TQ1_0"},
      {37, "TQ2_0"}, {38, "MXFP4_MOE"}, {39, "NVFP4"}, {40, "Q1_0"}, {1024, "GUESSED"}};
  auto it = kNames.find(ftype);
  return it == kNames.end() ? fmt::format("file type {}", ftype) : it->second;
}

ModelSummary summarize(const ModelFiles& files) {
  ModelSummary s;
  const Header& h = files.meta();
  for (const auto& p : files.parts) s.files.push_back(p.source);
  s.notes = files.notes;
  s.version = h.version;
  auto arch = h.get_string("general.architecture");
  if (!arch || arch->empty()) fail_input(h.source, "general.architecture", "missing: llama.cpp needs it to load the model");
  s.architecture = *arch;
  s.name = h.get_string("general.name").value_or("");
  if (auto ft = h.get_int("general.file_type")) s.file_type = file_type_name(*ft);
  const std::string a = s.architecture + ".";
  s.context_length = nonneg(h, a + "context_length", 0);
  s.block_count = nonneg(h, a + "block_count", 0, 1 << 16);
  s.embedding_length = nonneg(h, a + "embedding_length", 0);
  s.expert_count = nonneg(h, a + "expert_count", 0, 1 << 20);
  s.expert_used_count = nonneg(h, a + "expert_used_count", 0, 1 << 20);
  s.sliding_window = nonneg(h, a + "attention.sliding_window", 0);
  if (auto ff = h.get_int_or_array(a + "feed_forward_length"); ff && !ff->empty())
    s.feed_forward_length = *std::max_element(ff->begin(), ff->end());
  s.head_count_per_layer = per_layer(h, a + "attention.head_count", s.block_count).value_or(std::vector<int64_t>(static_cast<size_t>(s.block_count), 0));
  s.head_count = s.head_count_per_layer.empty() ? 0 : *std::max_element(s.head_count_per_layer.begin(), s.head_count_per_layer.end());
  // attention.head_count_kv defaults to attention.head_count, layer by layer.
  s.head_count_kv = per_layer(h, a + "attention.head_count_kv", s.block_count).value_or(s.head_count_per_layer);
  // llama.cpp: n_embd_head_k = n_embd / n_head() (n_head of layer 0) unless the key says otherwise.
  const int64_t head0 = s.head_count_per_layer.empty() ? 0 : s.head_count_per_layer.front();
  const int64_t by_head = head0 > 0 ? s.embedding_length / head0 : 0;
  s.key_length = nonneg(h, a + "attention.key_length", by_head, 1 << 20);
  s.value_length = nonneg(h, a + "attention.value_length", by_head, 1 << 20);
  if (auto n = h.get_int(a + "vocab_size")) s.vocab_size = *n;
  else if (auto c = h.array_count("tokenizer.ggml.tokens")) s.vocab_size = static_cast<int64_t>(*c);

  s.mla = h.find(a + "attention.kv_lora_rank") != nullptr;
  for (const auto& kv : h.kv)
    for (std::string_view part : {".ssm.", ".wkv.", ".shortconv."})
      if (kv.key.rfind(a, 0) == 0 && kv.key.find(part) != std::string::npos) s.recurrent = true;
  if (s.sliding_window > 0)
    s.notes.push_back(fmt::format("{}.attention.sliding_window = {}: the f16 KV bytes per token count every layer at full "
                                  "context; llama.cpp caps its sliding-window layers (llamacpp_kv, docs/llamacpp-kv.md)", s.architecture, s.sliding_window));

  std::map<GgmlType, TypeTotal> by;
  double routed = 0;
  for (const auto& part : files.parts) {
    for (const auto& t : part.tensors) {
      auto& row = by[t.type];
      row.type = t.type;
      row.tensors += 1;
      row.params += t.elements;
      row.bytes += t.bytes;
      if (__builtin_add_overflow(s.params_total, t.elements, &s.params_total) ||
          __builtin_add_overflow(s.checkpoint_bytes, t.bytes, &s.checkpoint_bytes))
        fail_input(part.source, t.name, "model totals overflow 64 bits");
      ++s.tensors;
      if (t.name.find("_exps.") != std::string::npos) routed += static_cast<double>(t.elements);
    }
  }
  for (auto& [k, v] : by) s.by_type.push_back(v);
  std::stable_sort(s.by_type.begin(), s.by_type.end(), [](const TypeTotal& x, const TypeTotal& y) { return x.bytes > y.bytes; });
  s.params_active = s.params_total;
  if (s.expert_count > 0 && routed > 0) {
    double idle = routed * static_cast<double>(s.expert_count - std::min(s.expert_used_count, s.expert_count)) /
                  static_cast<double>(s.expert_count);
    s.params_active = s.params_total - static_cast<int64_t>(idle + 0.5);
  }
  return s;
}

ModelSummary read_model_summary(const std::string& path) { return summarize(read_model_files(path)); }

}  // namespace headroom::gguf
