// Quantization of a checkpoint, from config.json's quantization_config (fp8, mxfp4, awq, gptq,
// compressed-tensors, modelopt) or ModelOpt's hf_quant_config.json, and the per-module lookup
// (exclude lists with fnmatch patterns, "re:" regexes, mixed-precision module maps).
#include <algorithm>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <regex>
#include <unordered_map>

#include "headroom/error.h"
#include "model/model_internal.h"

namespace headroom {

std::string_view quant_method_name(QuantMethod m) {
  switch (m) {
    case QuantMethod::None: return "none";
    case QuantMethod::Fp8PerTensor: return "fp8 (per-tensor)";
    case QuantMethod::Fp8Block: return "fp8 (block)";
    case QuantMethod::Nvfp4: return "nvfp4";
    case QuantMethod::Mxfp4: return "mxfp4";
    case QuantMethod::Awq: return "awq int4";
    case QuantMethod::Gptq: return "gptq int4";
    case QuantMethod::Other: return "other";
    case QuantMethod::Fp8PerChannel: return "fp8 (per-channel)";
    case QuantMethod::CtInt4: return "int4 (compressed-tensors)";
  }
  return "other";
}

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative fnmatch with single-star backtracking: linear-ish, no recursion (hostile patterns are safe).
  size_t pi = 0, ti = 0, star_p = std::string_view::npos, star_t = 0;
  while (ti < t.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star_p = pi++;
      star_t = ti;
      continue;
    }
    if (pi < p.size() && p[pi] == '[') {
      size_t close = p.find(']', pi + 1);
      if (close != std::string_view::npos) {
        bool neg = pi + 1 < close && (p[pi + 1] == '!' || p[pi + 1] == '^');
        bool hit = false;
        for (size_t k = pi + 1 + (neg ? 1 : 0); k < close; ++k) {
          if (k + 2 < close && p[k + 1] == '-') {
            if (t[ti] >= p[k] && t[ti] <= p[k + 2]) hit = true;
            k += 2;
          } else if (p[k] == t[ti]) {
            hit = true;
          }
        }
        if (hit != neg) {
          pi = close + 1;
          ++ti;
          continue;
        }
      }
    } else if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
      continue;
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p + 1;
    ti = ++star_t;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

// compressed-tensors "re:" patterns, compiled once (thread-safe cache). Patterns with a quantified
// group ("(a+)+") could backtrack exponentially and are refused at parse time.
static std::shared_ptr<const std::regex> compiled(const std::string& pat) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const std::regex>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(pat);
  if (it != cache.end()) return it->second;
  std::shared_ptr<const std::regex> re;
  try {
    re = std::make_shared<const std::regex>(pat);
  } catch (const std::exception&) {
    re = nullptr;  // a bad regex matches nothing
  }
  // Bounded in bytes too: the server plans uploaded configs, whose patterns can be any text
  // (issue 31); real ones are a few dozen characters, longer ones are compiled per use.
  if (cache.size() < 4096 && pat.size() <= 256) cache.emplace(pat, re);
  return re;
}

static bool pattern_matches(const std::string& pat, std::string_view module) {
  if (pat.rfind("re:", 0) == 0) {
    auto re = compiled(pat.substr(3));
    return re && std::regex_match(module.begin(), module.end(), *re);
  }
  // A pattern excludes the module itself or any of its parents/children by name
  // ("lm_head", "model.layers.*.self_attn" excludes "model.layers.0.self_attn.q_proj").
  if (glob_match(pat, module)) return true;
  std::string_view m = module;
  while (true) {
    auto dot = m.rfind('.');
    if (dot == std::string_view::npos) break;
    m = m.substr(0, dot);
    if (glob_match(pat, m)) return true;
  }
  return false;
}

QuantMethod quant_for_module(const Quantization& q, std::string_view module) {
  if (q.method == QuantMethod::None) return QuantMethod::None;
  if (!q.per_module.empty()) {
    // Exact module, or a listed parent ("...mlp.experts" covers "...mlp.experts.3.up_proj").
    // per_module is sorted by name (parse time), so each lookup is a binary search.
    std::string_view m = module;
    while (true) {
      auto it = std::lower_bound(q.per_module.begin(), q.per_module.end(), m,
                                 [](const std::pair<std::string, QuantMethod>& e, std::string_view k) { return e.first < k; });
      if (it != q.per_module.end() && it->first == m) return it->second;
      auto dot = m.rfind('.');
      if (dot == std::string_view::npos) return QuantMethod::None;
      m = m.substr(0, dot);
    }
  }
  for (const auto& pat : q.exclude) {
    // Fast reject: the module (and so any parent) must start with the pattern's literal prefix.
    if (pat.rfind("re:", 0) != 0) {
      bool reject = false;
      for (size_t i = 0; i < pat.size() && pat[i] != '*' && pat[i] != '?' && pat[i] != '['; ++i)
        if (i >= module.size() || module[i] != pat[i]) {
          reject = true;
          break;
        }
      if (reject) continue;
    }
    if (pattern_matches(pat, module)) return QuantMethod::None;
  }
  return q.method;
}

namespace model_detail {

static QuantMethod modelopt_algo(std::string_view algo, std::string_view source) {
  if (algo == "NVFP4" || algo == "W4A16_NVFP4" || algo == "NVFP4_AWQ") return QuantMethod::Nvfp4;
  if (algo == "FP8") return QuantMethod::Fp8PerTensor;
  if (algo == "FP8_PER_CHANNEL_PER_TOKEN") return QuantMethod::Fp8PerChannel;
  fail_input(source, "quant_algo", fmt::format("unsupported ModelOpt algorithm '{}' (supported: NVFP4, W4A16_NVFP4, FP8, FP8_PER_CHANNEL_PER_TOKEN)", algo));
}

static std::string kv_from_scheme(const json* v) {
  if (!v) return {};
  if (v->is_string()) return v->get<std::string>();
  if (v->is_object()) {
    auto nb = v->find("num_bits");
    if (nb != v->end() && nb->is_number_integer() && nb->get<int>() == 8) return "FP8";
  }
  return {};
}

// The KV-cache quantization a config.json quantization_config states, as vLLM's ModelOpt
// from_config reads its flat format: kv_cache_quant_algo, else kv_cache_scheme (FP8 when
// {"type": "float", "num_bits": 8}, or the scheme's name).
static std::string kv_from_config_json(const std::vector<const json*>& s, std::string_view src) {
  if (auto kv = get_string(s, "kv_cache_quant_algo", src)) return *kv;
  return kv_from_scheme(find_key(s, "kv_cache_scheme"));
}

static Quantization from_hf_quant(std::string_view text, std::string_view source) {
  Quantization q;
  json root = parse_json(text, source);
  if (!root.is_object()) fail_input(source, "json", "must be an object");
  const json* qj = find_key({&root}, "quantization");
  if (!qj || !qj->is_object()) fail_input(source, "quantization", "missing or not an object");
  std::vector<const json*> s{qj};
  auto algo = get_string(s, "quant_algo", source);
  if (!algo) fail_input(source, "quantization.quant_algo", "missing");
  q.raw_method = "modelopt";
  q.source = std::string(source);
  if (auto kv = get_string(s, "kv_cache_quant_algo", source)) q.kv_cache_quant = *kv;
  q.exclude = get_string_list(find_key(s, "exclude_modules"), "exclude_modules", source);
  if (*algo == "MIXED_PRECISION") {
    const json* layers = find_key(s, "quantized_layers");
    if (!layers || !layers->is_object()) fail_input(source, "quantized_layers", "missing for MIXED_PRECISION");
    bool any_fp4 = false;
    for (auto it = layers->begin(); it != layers->end(); ++it) {
      if (!it->is_object()) fail_input(source, "quantized_layers." + it.key(), "must be an object");
      auto a = get_string({&*it}, "quant_algo", source);
      if (!a) fail_input(source, "quantized_layers." + it.key() + ".quant_algo", "missing");
      QuantMethod m = modelopt_algo(*a, source);
      any_fp4 |= m == QuantMethod::Nvfp4;
      q.per_module.emplace_back(it.key(), m);
    }
    std::sort(q.per_module.begin(), q.per_module.end());
    q.method = any_fp4 ? QuantMethod::Nvfp4 : QuantMethod::Fp8PerTensor;
  } else {
    q.method = modelopt_algo(*algo, source);
  }
  if (q.method == QuantMethod::Nvfp4) {
    q.bits = 4;
    q.group_size = static_cast<int>(get_int(s, "group_size", source, 1, 1024).value_or(16));
  } else {
    q.bits = 8;
  }
  return q;
}

static Quantization from_config(const json& qc, std::string_view source) {
  Quantization q;
  std::string src = std::string(source) + ":quantization_config";
  if (!qc.is_object()) fail_input(src, "", "must be an object");
  std::vector<const json*> s{&qc};
  auto method = get_string(s, "quant_method", src);
  if (!method) fail_input(src, "quant_method", "missing");
  q.raw_method = *method;
  q.source = src;
  for (const char* k : {"modules_to_not_convert", "ignored_layers", "ignore", "exclude_modules"})
    for (auto& e : get_string_list(find_key(s, k), k, src)) {
      if (e.rfind("re:", 0) == 0) {
        bool nested = e.size() > 256;
        for (size_t i = 1; i < e.size(); ++i)
          if (e[i - 1] == ')' && (e[i] == '*' || e[i] == '+' || e[i] == '{' || e[i] == '?')) nested = true;
        if (nested) fail_input(src, k, fmt::format("regex '{}' is too long or repeats a group (refused: it could take exponential time)", e.substr(0, 60)));
      }
      q.exclude.push_back(e);
    }
  q.kv_cache_quant = kv_from_config_json(s, src);
  const std::string& m = q.raw_method;
  if (m == "fp8") {
    q.bits = 8;
    const json* wbs = find_key(s, "weight_block_size");
    if (wbs) {
      if (!wbs->is_array() || wbs->size() != 2 || !(*wbs)[0].is_number_integer() || !(*wbs)[1].is_number_integer() ||
          (*wbs)[0].get<int64_t>() < 1 || (*wbs)[1].get<int64_t>() < 1 || (*wbs)[0].get<int64_t>() > 65536 ||
          (*wbs)[1].get<int64_t>() > 65536)
        fail_input(src, "weight_block_size", "must be two positive integers like [128, 128]");
      q.method = QuantMethod::Fp8Block;
      q.block_n = (*wbs)[0].get<int>();
      q.block_k = (*wbs)[1].get<int>();
    } else {
      q.method = QuantMethod::Fp8PerTensor;
    }
  } else if (m == "mxfp4") {
    q.method = QuantMethod::Mxfp4;
    q.bits = 4;
    q.group_size = 32;
  } else if (m == "awq" || m == "gptq") {
    q.method = m == "awq" ? QuantMethod::Awq : QuantMethod::Gptq;
    auto bits = get_int(s, "bits", src, 2, 8);
    if (!bits) bits = get_int(s, "w_bit", src, 2, 8);
    q.bits = static_cast<int>(bits.value_or(4));
    if (q.bits != 4 && q.bits != 8) fail_input(src, "bits", "only 4- and 8-bit AWQ/GPTQ are supported");
    auto gs = get_int(s, "group_size", src, -1, 1 << 20);
    if (!gs) gs = get_int(s, "q_group_size", src, -1, 1 << 20);
    q.group_size = static_cast<int>(gs.value_or(128));
    q.desc_act = get_bool(s, "desc_act", src).value_or(false);
    q.awq_zero_point = get_bool(s, "zero_point", src).value_or(true);
  } else if (m == "compressed-tensors" || m == "modelopt") {
    auto algo = get_string(s, "quant_algo", src);
    const json* groups = find_key(s, "config_groups");
    if (m == "modelopt" && algo && *algo != "MIXED_PRECISION") {
      q.method = modelopt_algo(*algo, src);
      q.bits = q.method == QuantMethod::Nvfp4 ? 4 : 8;
      q.group_size = q.method == QuantMethod::Nvfp4 ? 16 : 0;
      return q;
    }
    if (!groups || !groups->is_object() || groups->empty()) fail_input(src, "config_groups", "missing");
    const json& g0 = groups->begin().value();
    const json* w = g0.is_object() ? find_key({&g0}, "weights") : nullptr;
    if (!w || !w->is_object()) fail_input(src, "config_groups.weights", "missing");
    std::vector<const json*> ws{w};
    int nb = static_cast<int>(get_int(ws, "num_bits", src, 1, 32).value_or(0));
    std::string type = get_string(ws, "type", src).value_or("int");
    std::string strategy = get_string(ws, "strategy", src).value_or("");
    int gs = static_cast<int>(get_int(ws, "group_size", src, 1, 1 << 20).value_or(0));
    q.bits = nb;
    q.group_size = gs;
    if (type == "float" && nb == 4) {
      q.method = QuantMethod::Nvfp4;
      q.group_size = gs ? gs : 16;
    } else if (type == "float" && nb == 8) {
      if (strategy == "block") {
        const json* bs = find_key(ws, "block_structure");
        if (!bs || !bs->is_array() || bs->size() != 2 || !(*bs)[0].is_number_integer() || !(*bs)[1].is_number_integer() ||
            (*bs)[0].get<int64_t>() < 1 || (*bs)[1].get<int64_t>() < 1 || (*bs)[0].get<int64_t>() > 65536 || (*bs)[1].get<int64_t>() > 65536)
          fail_input(src, "block_structure", "must be two positive integers");
        q.method = QuantMethod::Fp8Block;
        q.block_n = (*bs)[0].get<int>();
        q.block_k = (*bs)[1].get<int>();
      } else if (strategy == "channel") {
        q.method = QuantMethod::Fp8PerChannel;
      } else {
        q.method = QuantMethod::Fp8PerTensor;
      }
    } else if (type == "int" && nb == 4 && (strategy == "group" || strategy.empty()) && gs > 0) {
      q.method = QuantMethod::CtInt4;
      q.awq_zero_point = !get_bool(ws, "symmetric", src).value_or(true);
    } else {
      fail_input(src, "config_groups.weights", fmt::format("unsupported scheme: {}-bit {} strategy '{}'", nb, type, strategy));
    }
    // Explicit per-module targets (ModelOpt mixed precision written as config_groups).
    for (auto it = groups->begin(); it != groups->end(); ++it) {
      if (!it->is_object()) continue;
      auto targets = get_string_list(find_key({&*it}, "targets"), "targets", src);
      for (const auto& t : targets)
        if (t != "Linear" && t.find('.') != std::string::npos) q.per_module.emplace_back(t, q.method);
    }
    std::sort(q.per_module.begin(), q.per_module.end());
  } else {
    fail_input(src, "quant_method", fmt::format("unsupported quantization method '{}' (supported: fp8, mxfp4, awq, gptq, compressed-tensors, modelopt)", m));
  }
  return q;
}

Quantization parse_quantization(const json* qc, std::string_view source, std::string_view hf_quant_text,
                                std::string_view hf_quant_source) {
  if (!hf_quant_text.empty()) {
    Quantization q = from_hf_quant(hf_quant_text, hf_quant_source);
    if (qc && qc->is_object()) q.kv_cache_quant_config_json = kv_from_config_json({qc}, std::string(source) + ":quantization_config");
    // config.json may carry a fuller exclude list ("ignore") than hf_quant_config.json.
    if (qc && qc->is_object() && q.per_module.empty()) {
      for (const char* k : {"ignore", "modules_to_not_convert"})
        for (auto& e : get_string_list(find_key({qc}, k), k, source)) q.exclude.push_back(e);
    }
    return q;
  }
  if (qc) return from_config(*qc, source);
  return Quantization{};
}

}  // namespace model_detail
}  // namespace headroom
