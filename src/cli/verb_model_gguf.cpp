// `headroom model FILE.gguf | SPLIT-00001-of-0000N.gguf | DIR`: a GGUF model's facts from its
// header (architecture, context, layers, heads) and its parameters and bytes by ggml type, exact;
// the rank row gives llama.cpp's f16 K+V bytes per token (llama-kv-cache.cpp: per layer
// (n_embd_k_gqa + n_embd_v_gqa) x 2 B), and the KV cache llama-server would allocate for
// --ctx-size / --parallel / --cache-type-k/-v (llamacpp_kv.h). Other engines are not modelled here.
#include <algorithm>
#include <cctype>
#include <optional>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/verb_model_gguf.h"
#include "cli/verbs.h"
#include "headroom/error.h"
#include "headroom/gguf_model.h"
#include "headroom/llamacpp_kv.h"
#include "headroom/units.h"
#include "model/gguf_hub.h"

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

// "b8157" / "8157" -> 8157; 0 (newest rules) for anything else.
int build_number(const std::string& v) {
  size_t i = !v.empty() && (v[0] == 'b' || v[0] == 'B') ? 1 : 0;
  int n = 0;
  for (; i < v.size() && n < 1000000; ++i) {
    if (v[i] < '0' || v[i] > '9') return 0;
    n = n * 10 + (v[i] - '0');
  }
  return n;
}

gguf::GgmlType cache_type(const Args& args, std::string_view opt) {
  auto v = args.get(opt);
  if (!v) return gguf::GgmlType::F16;
  std::string want = *v;
  for (char& c : want) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& t : gguf::all_type_traits()) {
    std::string name(t.name);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name == want) return t.type;
  }
  fail_input("command line", opt, fmt::format("'{}' is not a ggml type", *v));
}

// A local file, split set or folder; else a Hub GGUF repo's file (ORG/NAME:TAG, or ORG/NAME with
// --gguf FILE): its header only, by Range requests (model/gguf_hub.cpp), as plan reads it.
gguf::ModelSummary summary_of(const std::string& spec, const Args& args) {
  const auto file = args.get("--gguf");
  if (!file && gguf::is_gguf_path(spec)) return gguf::read_model_summary(spec);
  const auto w = hub::gguf_want(spec, file ? &*file : nullptr);
  if (!w) fail_input("command line", "--model", fmt::format("'{}' is not a GGUF file, nor a Hub repo's file (ORG/NAME:QUANT or --gguf FILE)", spec));
  const hub::HubGguf g = hub::read_hub_gguf(w->ref, w->want);
  gguf::ModelSummary s = gguf::summarize(g.files);
  s.notes.insert(s.notes.begin(), fmt::format("from the Hugging Face Hub: {}@{} {}, its header read by Range requests ({:.1f} KiB), no tensor data",
                                              g.repo, g.sha.substr(0, 12), g.file, static_cast<double>(g.bytes_read) / 1024.0));
  return s;
}

}  // namespace

std::optional<std::string> gguf_model_spec(const Args& args) {
  std::string spec;
  if (!args.positionals().empty()) spec = args.positionals()[0];
  if (auto m = args.get("--model")) spec = *m;
  if (spec.empty()) return std::nullopt;
  if (gguf::is_gguf_path(spec) || hub::parse_gguf_ref(spec) || args.has("--gguf")) return spec;
  return std::nullopt;
}

int verb_model_gguf(const std::string& spec, const Args& args, std::ostream& out) {
  // --engine llamacpp[@bNNNN] only (headroom plan --engine llamacpp forecasts the whole start).
  std::string version;
  if (auto e = args.get("--engine")) {
    auto at = e->find('@');
    std::string name = e->substr(0, at);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name != "llamacpp" && name != "llama.cpp")
      fail_input("command line", "--engine", "a GGUF model is reported for llama.cpp only (--engine llamacpp)");
    if (at != std::string::npos) version = e->substr(at + 1);
  }
  args.reject_unknown({"--engine", "--json", "--model", "--gguf", "--ctx-size", "--parallel", "--cache-type-k", "--cache-type-v", "--tp", "--pp", "--ep",
                       "--dp", "--tensor-parallel-size", "--pipeline-parallel-size", "--ep-size", "--dp-size", "--kv-cache-dtype"},
                      "model FILE.gguf");
  if (args.positionals().size() > 1) fail_input("command line", args.positionals()[1], "unexpected extra argument");
  for (auto opt : {"--tp", "--pp", "--ep", "--dp", "--tensor-parallel-size", "--pipeline-parallel-size", "--ep-size", "--dp-size"})
    if (auto v = args.get_int(opt, 1, 4096); v && *v > 1) fail_input("command line", opt, "parallel layouts of a GGUF model are not modelled yet");
  if (args.has("--kv-cache-dtype")) fail_input("command line", "--kv-cache-dtype", "llama.cpp spells it --cache-type-k / --cache-type-v; not modelled here yet");

  const gguf::ModelSummary s = summary_of(spec, args);
  const int64_t kv_per_token = f16_kv_bytes_per_token(s);
  // The cache llama-server would allocate (-c 0 = the model's context; no -np = its default slots).
  llamacpp::KvSettings ks;
  ks.build = build_number(version);
  ks.ctx_size = args.get_int("--ctx-size", 0, int64_t{1} << 32).value_or(0);
  ks.n_parallel = static_cast<int>(args.get_int("--parallel", 1, 4096).value_or(-1));
  ks.type_k = cache_type(args, "--cache-type-k");
  ks.type_v = cache_type(args, "--cache-type-v");
  std::string kv_why;
  std::optional<llamacpp::KvCache> cache;
  if (auto km = llamacpp::kv_model_from_gguf(s, &kv_why)) cache = llamacpp::kv_cache_size(*km, ks);
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
    if (cache) {
      j["llamacpp_kv"] = {{"n_ctx", cache->n_ctx}, {"n_ctx_seq", cache->n_ctx_seq}, {"n_seq_max", cache->n_seq_max},
                          {"n_stream", cache->n_stream}, {"cells", cache->base.cells}, {"layers", cache->base.layers},
                          {"k_bytes", cache->base.k_bytes}, {"v_bytes", cache->base.v_bytes}, {"bytes", cache->bytes()},
                          {"log", llamacpp::kv_cache_log_line(*cache, cache->base, ks)}};
      if (cache->swa.layers > 0)
        j["llamacpp_kv"]["swa"] = {{"cells", cache->swa.cells}, {"layers", cache->swa.layers}, {"k_bytes", cache->swa.k_bytes},
                                   {"v_bytes", cache->swa.v_bytes}, {"log", llamacpp::kv_cache_log_line(*cache, cache->swa, ks)}};
    } else {
      j["llamacpp_kv"] = {{"not_modelled", kv_why}};
    }
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
  if (cache)
    out << fmt::format("  llama-server{} at --ctx-size {}{}{} (this line in the newest builds' format):\n    {}\n",
                       version.empty() ? "" : " " + version, ks.ctx_size,
                       ks.ctx_size == 0 ? fmt::format(" (the model's {})", s.context_length) : "",
                       ks.n_parallel < 0 ? "" : fmt::format(" --parallel {}", ks.n_parallel), llamacpp::kv_cache_log_line(*cache, cache->base, ks));
  if (cache && cache->swa.layers > 0) out << "    " << llamacpp::kv_cache_log_line(*cache, cache->swa, ks) << "  (sliding-window cache)\n";
  else
    out << "  llama.cpp KV cache size not computed: " << kv_why << "\n";
  for (const auto& n : s.notes) out << "  note: " << n << "\n";
  return kExitOk;
}

}  // namespace headroom
