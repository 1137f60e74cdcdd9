// `headroom model <id|dir|config.json>`: parameters, checkpoint bytes by component and dtype,
// and for an engine + parallelism the weight bytes and KV bytes per token of every rank.
#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/verb_model_gguf.h"
#include "cli/verbs.h"
#include "headroom/deployment.h"
#include "headroom/error.h"
#include "headroom/gpu.h"
#include "headroom/kv.h"
#include "headroom/layout.h"
#include "headroom/model.h"
#include "headroom/units.h"

namespace headroom {
namespace {

constexpr std::string_view kUsage =
    "usage: headroom model <HF_ID|DIR|config.json|FILE.gguf|ORG/NAME:QUANT> [--engine sglang|vllm[@VER]] [--tp N] [--pp N] [--ep N]\n"
    "                      [--dp N] [--enable-dp-attention] [--kv-cache-dtype X] [--gpu NAME] [--json]\n"
    "Parameters, checkpoint bytes (by component and dtype), and per GPU rank the weight bytes and\n"
    "KV-cache bytes per token as the engine lays them out. Catalog ids: data/models (case-insensitive).\n"
    "A Hugging Face id ORG/NAME[@REVISION] is looked up in the local Hugging Face cache, headroom's cache,\n"
    "the catalog, then the Hub (config files and safetensors headers only); --offline sends no request.\n"
    "A GGUF file (or split set, or a folder of one), or a Hub GGUF repo's file (ORG/NAME:Q4_K_M, or ORG/NAME\n"
    "--gguf FILE.gguf: its header by Range requests) is read from its header: bytes by ggml type, for llama.cpp,\n"
    "and the KV cache llama-server allocates: [--engine llamacpp[@bNNNN]] [--ctx-size N] [--parallel N]\n"
    "[--cache-type-k T] [--cache-type-v T].\n";

std::string_view role_component(TensorRole r) { return tensor_role_component(r); }

std::string gb(int64_t b) { return fmt::format("{:.2f} GB", static_cast<double>(b) / 1e9); }
std::string billions(int64_t p) { return fmt::format("{:.2f}B", static_cast<double>(p) / 1e9); }
std::string with_commas(int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v), o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) o += ',';
    o += s[i];
  }
  return v < 0 ? "-" + o : o;
}

struct RankRow {
  RankWeights w;
  KvPerToken kv;
  std::pair<int, int> layers;
};

}  // namespace

int verb_model(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << kUsage;
    return kExitOk;
  }
  if (auto g = gguf_model_spec(args)) return verb_model_gguf(*g, args, out);  // llama.cpp's options, its own report
  args.reject_unknown({"--engine", "--tp", "--pp", "--ep", "--dp", "--enable-dp-attention", "--kv-cache-dtype", "--gpu", "--json",
                       "--model", "--tensor-parallel-size", "--pipeline-parallel-size", "--ep-size", "--dp-size"},
                      "model");
  std::string spec;
  if (!args.positionals().empty()) spec = args.positionals()[0];
  if (auto m = args.get("--model")) spec = *m;
  if (spec.empty()) fail_input("command line", "model", "missing model (a catalog id, a folder or a config.json)");
  if (args.positionals().size() > 1) fail_input("command line", args.positionals()[1], "unexpected extra argument");

  auto [engine, version] = parse_engine_spec(args.get_or("--engine", "sglang"));
  Parallel par;
  auto size = [&](std::initializer_list<std::string_view> names, int& dst) {
    for (auto n : names)
      if (auto v = args.get_int(n, 1, 4096)) dst = static_cast<int>(*v);
  };
  size({"--tp", "--tensor-parallel-size"}, par.tp);
  size({"--pp", "--pipeline-parallel-size"}, par.pp);
  size({"--ep", "--ep-size"}, par.ep);
  size({"--dp", "--dp-size"}, par.dp);
  par.dp_attention = args.has("--enable-dp-attention");
  std::string kv_dtype = args.get_or("--kv-cache-dtype", "auto");
  int sm = 0;
  std::string gpu_name;
  if (auto g = args.get("--gpu")) {
    const GpuSpec& spec_gpu = require_gpu(*g);
    sm = spec_gpu.sm;
    gpu_name = spec_gpu.name;
  }

  auto model = load_model(spec);
  const ModelConfig& c = model->config;
  auto ranks = weights_per_rank(*model, engine, par);
  const bool kv_modelled = engine == EngineKind::SGLang || engine == EngineKind::VLLM;
  std::vector<RankRow> rows;
  for (auto& w : ranks) {
    RankRow r;
    r.layers = pp_layer_range(static_cast<int>(c.num_layers), par.pp, w.pp_rank, engine);
    if (kv_modelled) r.kv = kv_per_token(c, engine, par, kv_dtype, sm, w.pp_rank);
    r.w = std::move(w);
    rows.push_back(std::move(r));
  }

  // Whole-checkpoint bytes by component and dtype (main model; MTP separately).
  std::map<std::string, int64_t> by_comp, by_dtype;
  for (const auto& t : model->tensors) {
    bool mtp = t.layer >= c.num_layers || t.role == TensorRole::Mtp;
    by_comp[mtp ? "mtp" : std::string(role_component(t.role))] += t.bytes;
    by_dtype[std::string(dtype_name(t.dtype))] += t.bytes;
  }
  auto sorted = [](const std::map<std::string, int64_t>& m) {
    std::vector<std::pair<std::string, int64_t>> v(m.begin(), m.end());
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return v;
  };
  int64_t moe_layers = std::count_if(c.layers.begin(), c.layers.end(), [](const LayerInfo& l) { return l.moe; });
  int64_t indexer_layers = std::count_if(c.layers.begin(), c.layers.end(), [](const LayerInfo& l) { return l.indexer; });
  std::string resolved_kv = rows.empty() || !kv_modelled ? "" : rows[0].kv.kv_dtype;

  if (args.has("--json")) {
    using oj = nlohmann::ordered_json;
    oj j;
    j["model"] = spec;
    j["hf_id"] = c.hf_id;
    j["architecture"] = c.architecture;
    j["family"] = c.family;
    j["dtype"] = dtype_name(c.dtype);
    j["quantization"] = {{"method", quant_method_name(c.quant.method)}, {"as_written", c.quant.raw_method},
                         {"kv_cache_quant", c.quant.kv_cache_quant}, {"source", c.quant.source}};
    j["layers"] = {{"total", c.num_layers}, {"full_attention", c.count_layers(AttnKind::Full)},
                   {"sliding", c.count_layers(AttnKind::Sliding)}, {"chunked", c.count_layers(AttnKind::Chunked)},
                   {"linear", c.count_layers(AttnKind::Linear)}, {"moe", moe_layers}, {"indexer", indexer_layers},
                   {"mtp", c.num_nextn_predict_layers}};
    j["params_total"] = model->params_total;
    j["params_active"] = model->params_active;
    j["params_mtp"] = model->params_mtp;
    j["checkpoint_bytes"] = model->checkpoint_bytes;
    j["checkpoint_bytes_mtp"] = model->checkpoint_bytes_mtp;
    j["from_safetensors"] = model->from_safetensors;
    j["tensors"] = model->tensors.size();
    oj comp = oj::object(), dt = oj::object();
    for (auto& [k, v] : sorted(by_comp)) comp[k] = v;
    for (auto& [k, v] : sorted(by_dtype)) dt[k] = v;
    j["bytes_by_component"] = comp;
    j["bytes_by_dtype"] = dt;
    j["engine"] = {{"name", engine_kind_name(engine)}, {"version", version}};
    j["parallel"] = {{"tp", par.tp}, {"pp", par.pp}, {"ep", par.ep}, {"dp", par.dp}, {"enable_dp_attention", par.dp_attention}};
    j["gpu"] = gpu_name;
    j["kv_cache_dtype"] = {{"requested", kv_dtype}, {"resolved", resolved_kv}};
    oj arr = oj::array();
    for (const auto& r : rows) {
      oj rc = oj::object();
      for (auto& [k, v] : r.w.by_component) rc[k] = v;
      oj row = {{"rank", r.w.rank}, {"tp_rank", r.w.tp_rank}, {"pp_rank", r.w.pp_rank},
                {"layers", {r.layers.first, r.layers.second}}, {"weight_bytes", r.w.bytes}, {"mtp_bytes", r.w.mtp_bytes}};
      if (kv_modelled) {
        row["kv_bytes_per_token"] = r.kv.total();
        row["kv"] = {{"full_bytes", r.kv.full_bytes}, {"swa_bytes", r.kv.swa_bytes},
                     {"state_bytes_per_request", r.kv.state_bytes_per_request}, {"full_layers", r.kv.full_layers},
                     {"swa_layers", r.kv.swa_layers}, {"linear_layers", r.kv.linear_layers}};
      } else {
        row["kv_bytes_per_token"] = nullptr;
      }
      row["by_component"] = rc;
      arr.push_back(std::move(row));
    }
    j["ranks"] = arr;
    j["notes"] = model->notes;
    out << j.dump(2) << "\n";
    return kExitOk;
  }

  // Text report.
  std::string quant = c.quant.method == QuantMethod::None ? std::string(dtype_name(c.dtype))
                                                          : fmt::format("{} ({})", quant_method_name(c.quant.method), c.quant.source);
  out << fmt::format("{}  {}  [{}]\n", c.hf_id.empty() ? spec : c.hf_id, c.architecture, quant);
  std::string attn = c.mla ? "MLA" : fmt::format("GQA {}/{} heads, head_dim {}", c.num_attention_heads, c.num_kv_heads, c.head_dim);
  std::string shape = fmt::format("{} layers", c.num_layers);
  if (moe_layers) shape += fmt::format(" ({} MoE: {} experts, top-{})", moe_layers, c.num_experts, c.experts_per_token);
  if (c.count_layers(AttnKind::Sliding)) shape += fmt::format(", {} sliding-window ({})", c.count_layers(AttnKind::Sliding), c.sliding_window);
  if (c.count_layers(AttnKind::Chunked)) shape += fmt::format(", {} chunked ({})", c.count_layers(AttnKind::Chunked), c.attention_chunk_size);
  if (c.count_layers(AttnKind::Linear)) shape += fmt::format(", {} linear-attention/Mamba", c.count_layers(AttnKind::Linear));
  if (indexer_layers) shape += fmt::format(", DSA indexer on {}", indexer_layers);
  if (c.num_nextn_predict_layers) shape += fmt::format(", {} MTP", c.num_nextn_predict_layers);
  out << fmt::format("  {}; {}; hidden {}, vocab {}\n", shape, attn, c.hidden_size, c.vocab_size);
  out << fmt::format("  parameters  {} total, {} active per token", billions(model->params_total), billions(model->params_active));
  if (model->params_mtp) out << fmt::format(", MTP {}", billions(model->params_mtp));
  out << "\n";
  int64_t main_bytes = model->checkpoint_bytes - model->checkpoint_bytes_mtp;
  out << fmt::format("  checkpoint  {} ({} GiB){}{}\n", gb(main_bytes), gib2(main_bytes),
                     model->checkpoint_bytes_mtp ? fmt::format(" + MTP {} ({} GiB)", gb(model->checkpoint_bytes_mtp), gib2(model->checkpoint_bytes_mtp)) : "",
                     model->from_safetensors ? "  [from safetensors headers]" : "  [derived from config]");
  out << "\n  by component                 by dtype\n";
  auto vc = sorted(by_comp), vd = sorted(by_dtype);
  for (size_t i = 0; i < std::max(vc.size(), vd.size()); ++i) {
    std::string l = i < vc.size() ? fmt::format("{:<17}{:>11}", vc[i].first, gb(vc[i].second)) : std::string(28, ' ');
    std::string r = i < vd.size() ? fmt::format("{:<9}{:>11}", vd[i].first, gb(vd[i].second)) : "";
    out << "  " << l << "  " << r << "\n";
  }

  out << fmt::format("\n  {}{}  tp {}  pp {}  ep {}{}  kv-cache-dtype {}{}\n", engine_kind_name(engine), version.empty() ? "" : "@" + version,
                     par.tp, par.pp, par.ep, par.dp_attention ? fmt::format("  dp-attention {}", par.dp) : "", kv_dtype,
                     resolved_kv.empty() || resolved_kv == kv_dtype ? "" : " -> " + resolved_kv);
  // Ranks, largest first; identical neighbours grouped.
  std::vector<const RankRow*> order;
  for (const auto& r : rows) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const RankRow* a, const RankRow* b) { return a->w.bytes > b->w.bytes; });
  out << fmt::format("  {:<10} {:>8}  {:>11}  {:>10}  {:>14}{}\n", "ranks", "layers", "weights GiB", "+ MTP GiB", "KV B/token",
                     c.has_linear_attention() ? "  state B/request" : "");
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;
    auto same = [&](const RankRow* a, const RankRow* b) {
      return a->w.bytes == b->w.bytes && a->w.mtp_bytes == b->w.mtp_bytes && a->kv.total() == b->kv.total() &&
             a->layers == b->layers && b->w.rank == a->w.rank + 1;
    };
    while (j < order.size() && same(order[j - 1], order[j])) ++j;
    const RankRow& r = *order[i];
    std::string label = j - i > 1 ? fmt::format("{}-{}", r.w.rank, order[j - 1]->w.rank) : std::to_string(r.w.rank);
    std::string kv = kv_modelled ? with_commas(r.kv.total()) : "n/a";
    if (kv_modelled && r.kv.swa_bytes) kv += fmt::format(" ({} swa)", with_commas(r.kv.swa_bytes));
    out << fmt::format("  {:<10} {:>8}  {:>11}  {:>10}  {:>14}{}\n", label, fmt::format("{}-{}", r.layers.first, r.layers.second - 1),
                       gib2(r.w.bytes), gib2(r.w.mtp_bytes), kv,
                       c.has_linear_attention() ? fmt::format("  {:>15}", with_commas(r.kv.state_bytes_per_request)) : "");
    i = j;
  }
  if (!rows.empty()) {
    std::string held;
    for (auto& [k, v] : order[0]->w.by_component) held += fmt::format("{}{} {}", held.empty() ? "" : ", ", k, gib2(v));
    out << "  rank " << order[0]->w.rank << " holds (GiB): " << held << "\n";
  }
  if (!kv_modelled) out << "  KV bytes per token are modelled for sglang and vllm only.\n";
  for (const auto& n : model->notes) out << "  note: " << n << "\n";
  return kExitOk;
}

}  // namespace headroom
