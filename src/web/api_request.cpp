// Validation of the JSON bodies of POST /api/plan|tune|doctor|diff: shape, field names, limits,
// and the rule that a web request never makes the CLI read a file of the server's choosing
// (no paths, no positionals; models are catalog ids, Hugging Face ids or uploaded config text).
#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "headroom/cli.h"
#include "headroom/embedded.h"
#include "headroom/error.h"
#include "model/gguf_hub.h"
#include "model/repo_ref.h"
#include "web/web.h"

namespace headroom::web {

namespace {

constexpr std::string_view kSource = "request";
constexpr int kMaxJsonDepth = 32;

// Nesting depth of a JSON text, counted outside strings; stops early past `limit`.
int json_depth(std::string_view s, int limit) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char c : s) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
      if (max_depth > limit) return max_depth;
    } else if (c == ']' || c == '}') --depth;
  }
  return max_depth;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Options whose value the CLI treats as a model location.
bool is_model_option(std::string_view name) {
  return name == "--model" || name == "--model-path" || name == "--tokenizer-path";
}

// A value the CLI could take as a file name: home- or dot-relative (".88" is a number, not a
// path), or named like a data file. Values with a slash are checked against the catalog.
bool looks_like_file(std::string_view v) {
  if (v.empty()) return false;
  if (v[0] == '~') return true;
  if (v[0] == '.' && (v.size() == 1 || !std::isdigit(static_cast<unsigned char>(v[1])))) return true;
  static constexpr std::string_view kExts[] = {".json", ".jsonl", ".log", ".txt", ".gguf", ".safetensors", ".pickle", ".pkl", ".bin", ".pt"};
  const std::string lv = lower(v);
  return std::any_of(std::begin(kExts), std::end(kExts), [&](std::string_view e) {
    return lv.size() > e.size() && lv.compare(lv.size() - e.size(), e.size(), e) == 0;
  });
}

// Options whose value the CLI never opens, though it may look like a path: llama-server's
// --override-tensor takes regexes ("blk\.[0-9]+\.ffn_.*=CPU"), and --mmproj is read by its file
// name only (the projector's type: mmproj-BF16.gguf), so a bare name is accepted, never a path;
// --gguf names a file of the Hub repo, never a local one.
bool value_is_not_opened(std::string_view name, std::string_view value) {
  if (name == "--override-tensor") return true;
  // --gguf: a file of the Hub repo --model names (a folder inside it allowed), read by Range requests.
  if (name == "--gguf")
    return !value.empty() && value.find("..") == std::string_view::npos && value.find('\\') == std::string_view::npos &&
           value[0] != '/' && value[0] != '.' && value[0] != '~';
  if (name == "--mmproj")
    return !value.empty() && value.find('/') == std::string_view::npos && value.find('\\') == std::string_view::npos &&
           value[0] != '.' && value[0] != '~';
  return false;
}

std::string take_text(const nlohmann::json& j, std::string_view field) {
  if (!j.is_string()) fail_input(kSource, field, "must be a string");
  return j.get<std::string>();
}

// diff's second version, [ENGINE@]VERSION: "0.10.2", "vllm@0.10.2", "main@2026-03-15", "b8157".
void check_version(std::string_view field, std::string_view v) {
  if (v.empty()) fail_input(kSource, field, "is empty (the version to compare with, e.g. \"0.10.2\" or \"vllm@0.10.2\")");
  if (v.size() > kMaxVersionChars) fail_input(kSource, field, fmt::format("longer than {} characters", kMaxVersionChars));
  for (char c : v)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_' && c != '@' && c != ':' && c != '+')
      fail_input(kSource, field, fmt::format("'{}' is not a version like 0.10.2, vllm@0.10.2 or main@2026-03-15", v));
}

}  // namespace

std::vector<std::string> catalog_model_ids() {
  std::vector<std::string> ids;
  constexpr std::string_view kPrefix = "models/", kSuffix = "/config.json";
  for (std::string_view p : embedded_files(kPrefix)) {
    if (p.size() <= kPrefix.size() + kSuffix.size() || p.substr(p.size() - kSuffix.size()) != kSuffix) continue;
    std::string_view id = p.substr(kPrefix.size(), p.size() - kPrefix.size() - kSuffix.size());
    if (std::count(id.begin(), id.end(), '/') == 1) ids.emplace_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

ApiRequest parse_api_request(std::string_view verb, std::string_view body) {
  if (body.size() > kMaxBodyBytes)
    fail_input(kSource, "body", fmt::format("{} bytes is over the limit of {} bytes", body.size(), kMaxBodyBytes));
  if (json_depth(body, kMaxJsonDepth) > kMaxJsonDepth)
    fail_input(kSource, "body", fmt::format("JSON nested deeper than {} levels", kMaxJsonDepth));
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail_input(kSource, "body", "is not valid JSON");
  if (!j.is_object()) fail_input(kSource, "body", "must be a JSON object like {\"args\": [\"--model\", \"...\"]}");

  const bool doctor = verb == "doctor", diff = verb == "diff";
  const std::vector<std::string_view> allowed =
      doctor ? std::vector<std::string_view>{"args", "log", "config", "hf_quant_config"}
      : diff ? std::vector<std::string_view>{"args", "to", "config", "hf_quant_config", "host_state"}
             : std::vector<std::string_view>{"args", "config", "hf_quant_config", "host_state", "host"};
  for (const auto& [key, _] : j.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail_input(kSource, key, fmt::format("unknown field for /api/{} (allowed: {})", verb, list));
    }
  }

  ApiRequest req;
  if (!j.contains("args")) fail_input(kSource, "args", "missing (a list of the CLI's arguments, e.g. [\"--model\", \"Qwen/Qwen3-8B\"])");
  const auto& args = j["args"];
  if (!args.is_array()) fail_input(kSource, "args", "must be a list of strings");
  if (args.size() > kMaxArgs) fail_input(kSource, "args", fmt::format("{} items is over the limit of {}", args.size(), kMaxArgs));
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string field = fmt::format("args[{}]", i);
    if (!args[i].is_string()) fail_input(kSource, field, "must be a string");
    std::string a = args[i].get<std::string>();
    if (a.size() > kMaxArgChars) fail_input(kSource, field, fmt::format("longer than {} characters", kMaxArgChars));
    if (a.find('\0') != std::string::npos) fail_input(kSource, field, "contains a NUL character");
    req.args.push_back(std::move(a));
  }

  if (j.contains("config")) {
    req.config = take_text(j["config"], "config");
    if (req.config->empty()) fail_input(kSource, "config", "is empty (send the text of config.json)");
  }
  if (j.contains("hf_quant_config")) {
    if (!req.config) fail_input(kSource, "hf_quant_config", "only accepted together with config");
    req.hf_quant_config = take_text(j["hf_quant_config"], "hf_quant_config");
  }
  if (j.contains("host_state")) req.host_state = take_text(j["host_state"], "host_state");
  if (j.contains("host")) {
    req.host = take_text(j["host"], "host");
    if (req.config) fail_input(kSource, "host", "the servers' commands name their models: send no config with a host file");
  }
  if (doctor) {
    if (!j.contains("log")) fail_input(kSource, "log", "missing (the text of the crash or startup log)");
    req.log = take_text(j["log"], "log");
    if (req.log->empty()) fail_input(kSource, "log", "is empty");
  }

  // The same parse the CLI will do, to see options and positionals as it will.
  Args parsed = Args::parse(req.args);
  if (!parsed.positionals().empty())
    fail_input(kSource, "args", fmt::format("positional argument '{}' is not accepted over HTTP{}", parsed.positionals().front(),
                                            doctor ? " (send the log text in \"log\")" : ""));
  const auto ids = catalog_model_ids();
  for (const auto& [name, value] : parsed.options()) {
    if (name == "--help" || name == "--version") fail_input(kSource, name, "not accepted over HTTP");
    // The host's state and host files come as text (and `live`, this server's own GPUs).
    if (name == "--host") fail_input(kSource, name, "send the host file's text as \"host\"");
    if (name == "--host-state" && value != "live") fail_input(kSource, name, "send nvidia-smi's output as \"host_state\" (or the value live)");
    const std::string want = lower(value);
    const bool catalog = std::any_of(ids.begin(), ids.end(), [&](const std::string& id) { return lower(id) == want; });
    if (is_model_option(name)) {
      if (req.config) fail_input(kSource, name, "give either a catalog model or an uploaded config, not both");
      // A Hugging Face id resolves through the caches and the Hub, never as a server folder
      // (api_run turns local paths off: hub_env.h LocalPathsScope).
      if (!catalog && !hub::parse_repo_ref(value) && !hub::parse_gguf_ref(value))
        fail_input(kSource, name, fmt::format("'{}' is not a catalog model id (GET /api/models lists them) nor a Hugging Face id "
                                              "ORG/NAME[@REVISION] (ORG/NAME:QUANT for a GGUF repo's file); to use another model send its config.json text as \"config\"", value));
    } else if (value_is_not_opened(name, value)) {
      continue;
    } else if (!catalog && (value.find('/') != std::string::npos || value.find('\\') != std::string::npos || looks_like_file(value))) {
      fail_input(kSource, name, fmt::format("'{}' looks like a file path; the web API reads no files", value));
    }
  }
  if (diff) {
    if (j.contains("to")) {
      req.to = take_text(j["to"], "to");
      check_version("to", *req.to);
    }
    const auto& opts = parsed.options();
    const auto in_args = std::find_if(opts.begin(), opts.end(), [](const auto& o) { return o.first == "--to"; });
    if (in_args != opts.end()) {
      if (req.to) fail_input(kSource, "to", "given twice: send the second version as \"to\" or as --to in args, not both");
      check_version("--to", in_args->second);
    } else if (!req.to) {
      fail_input(kSource, "to", "missing (the version to compare with, e.g. \"0.10.2\" or \"vllm@0.10.2\")");
    }
  }
  return req;
}

}  // namespace headroom::web
