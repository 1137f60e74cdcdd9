// `headroom model FILE.gguf | SPLIT-00001-of-0000N.gguf | DIR`: a GGUF model's facts from its
// header (architecture, context, layers, heads) and its parameters and bytes by ggml type, exact;
// the rank row gives llama.cpp's f16 K+V bytes per token (llama-kv-cache.cpp: per layer
// (n_embd_k_gqa + n_embd_v_gqa) x 2 B). Parallel layouts and other engines are not modelled here.
#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/verb_model_gguf.h"
#include "cli/verbs.h"
#include "headroom/error.h"
#include "headroom/gguf_model.h"
#include "headroom/units.h"

namespace headroom {
namespace {

std::string gb(int64_t b) { return fmt::format("{:.2f} GB", static_cast<double>(b) / 1e9); }
std::string billions(int64_t p) { return fmt::format("{:.2f}B", static_cast<double>(p) / 1e9); }
std::string with_commas(int64_t v) {
  std::string s = std::to_string(v), o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) o += ',';
    o += s[i];
  }
  return o;
}

// llama.cpp's default (f16) K and V bytes per token over every layer with a KV cache.
int64_t f16_kv_bytes_per_token(const gguf::ModelSummary& s) {
  int64_t sum = 0;
  for (int64_t kv : s.head_count_kv) sum += kv * (s.key_length + s.value_length) * 2;
  return sum;
}

}  // namespace

int verb_model_gguf(const std::string& spec, const Args& args, std::ostream& out) {
  // --engine llamacpp[@bNNNN] only (parse_engine_spec still refuses llamacpp: no forecasts yet).
  std::string version;
  if (auto e = args.get("--engine")) {
    auto at = e->find('@');
    std::string name = e->substr(0, at);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name != "llamacpp" && name != "llama.cpp")
      fail_input("command line", "--engine", "a GGUF model is reported for llama.cpp only (--engine llamacpp)");
    if (at != std::string::npos) version = e->substr(at + 1);
  }
  for (auto opt : {"--tp", "--pp", "--ep", "--dp", "--tensor-parallel-size", "--pipeline-parallel-size", "--ep-size", "--dp-size"})
    if (auto v = args.get_int(opt, 1, 4096); v && *v > 1) fail_input("command line", opt, "parallel layouts of a GGUF model are not modelled yet");
  if (args.has("--kv-cache-dtype")) fail_input("command line", "--kv-cache-dtype", "llama.cpp spells it --cache-type-k / --cache-type-v; not modelled here yet");

  const gguf::ModelSummary s = gguf::read_model_summary(spec);
  const int64_t kv_per_token = f16_kv_bytes_per_token(s);
  const bool uniform_kv = std::adjacent_find(s.head_count_kv.begin(), s.head_count_kv.end(), std::not_equal_to<>()) == s.head_count_kv.end();

  if (args.has("--json")) {
    using oj = nlohmann::ordered_json;
    oj j;
    j["model"] = spec;
    j["format"] = "gguf";
    j["files"] = s.files;
    j["gguf_version"] = s.version;
    j["architecture"] = s.architecture;
    j["name"] = s.name;
    j["file_type"] = s.file_type;
    j["context_length"] = s.context_length;
    j["layers"] = {{"total", s.block_count}};
    j["embedding_length"] = s.embedding_length;
    j["feed_forward_length"] = s.feed_forward_length;
    j["head_count"] = s.head_count;
    if (uniform_kv) j["head_count_kv"] = s.head_count_kv.empty() ? 0 : s.head_count_kv.front();
    else j["head_count_kv"] = s.head_count_kv;
    j["key_length"] = s.key_length;
    j["value_length"] = s.value_length;
    j["vocab_size"] = s.vocab_size;
    j["expert_count"] = s.expert_count;
    j["expert_used_count"] = s.expert_used_count;
    j["sliding_window"] = s.sliding_window;
    j["params_total"] = s.params_total;
    j["params_active"] = s.params_active;
    j["checkpoint_bytes"] = s.checkpoint_bytes;
    j["tensors"] = s.tensors;
    oj bytes = oj::object(), params = oj::object(), count = oj::object();
    for (const auto& t : s.by_type) {
      std::string n(gguf::type_traits(t.type).name);
      bytes[n] = t.bytes;
      params[n] = t.params;
      count[n] = t.tensors;
    }
    j["bytes_by_type"] = bytes;
    j["params_by_type"] = params;
    j["tensors_by_type"] = count;
    j["engine"] = {{"name", "llamacpp"}, {"version", version}};
    j["ranks"] = oj::array({{{"rank", 0}, {"weight_bytes", s.checkpoint_bytes}, {"kv_bytes_per_token", kv_per_token},
                             {"kv_cache_type", "f16"}}});
    j["notes"] = s.notes;
    out << j.dump(2) << "\n";
    return kExitOk;
  }

  out << fmt::format("{}  {}  [{}]  GGUF v{}, {} file{}\n", s.name.empty() ? spec : s.name, s.architecture,
                     s.file_type.empty() ? "file type not stated" : s.file_type, s.version, s.files.size(), s.files.size() == 1 ? "" : "s");
  std::string kv = uniform_kv ? std::to_string(s.head_count_kv.empty() ? 0 : s.head_count_kv.front())
                              : fmt::format("[{}]", fmt::join(s.head_count_kv, ","));
  std::string shape = fmt::format("{} layers", s.block_count);
  if (s.expert_count) shape += fmt::format(" ({} experts, top-{})", s.expert_count, s.expert_used_count);
  if (s.sliding_window) shape += fmt::format(", sliding window {}", s.sliding_window);
  out << fmt::format("  {}; {} heads, {} KV heads, head dim {}/{}; embedding {}, feed-forward {}, vocab {}; context {}\n", shape,
                     s.head_count, kv, s.key_length, s.value_length, s.embedding_length, s.feed_forward_length, s.vocab_size,
                     s.context_length);
  out << fmt::format("  parameters  {} total ({}), {} active per token ({}); {} tensors\n", with_commas(s.params_total), billions(s.params_total),
                     with_commas(s.params_active), billions(s.params_active), s.tensors);
  out << fmt::format("  checkpoint  {} bytes ({}, {} GiB)  [from the GGUF header]\n", with_commas(s.checkpoint_bytes), gb(s.checkpoint_bytes),
                     gib2(s.checkpoint_bytes));
  out << fmt::format("\n  {:<9} {:>8} {:>16} {:>16}\n", "ggml type", "tensors", "parameters", "bytes");
  for (const auto& t : s.by_type)
    out << fmt::format("  {:<9} {:>8} {:>16} {:>16}\n", gguf::type_traits(t.type).name, t.tensors, t.params, t.bytes);
  out << fmt::format("\n  llama.cpp KV cache, f16 K and V: {} bytes per token\n", kv_per_token);
  for (const auto& n : s.notes) out << "  note: " << n << "\n";
  return kExitOk;
}

}  // namespace headroom
