// A deployment from a launch command exactly as a user runs it (`headroom plan --host`): the
// doctor's reading of a pasted launch line for vLLM, SGLang and TensorRT-LLM; llama-server's
// own flags for llama.cpp.
#include <algorithm>
#include <fmt/format.h>

#include "doctor/doctor_internal.h"
#include "doctor/log_parse.h"
#include "headroom/error.h"

namespace headroom {

namespace {
bool is_llama_server(const std::vector<std::string>& words) {
  for (const auto& w : words) {
    if (w.find('=') != std::string::npos && w.front() != '-') continue;  // VAR=value prefix
    const std::string base = w.substr(w.rfind('/') == std::string::npos ? 0 : w.rfind('/') + 1);
    return base == "llama-server" || base == "llama-cli";
  }
  return false;
}

// llama-server's model options as headroom's: -m/--model FILE, -hf/--hf-repo REPO[:QUANT].
Deployment llama_deployment(const std::vector<std::string>& words, std::vector<std::string> options, std::string_view source) {
  std::vector<std::string> a = std::move(options);
  if (std::find(a.begin(), a.end(), "--engine") == a.end()) a.insert(a.end(), {"--engine", "llamacpp"});
  bool started = false;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (!started) {
      started = w.find("llama-") != std::string::npos;
      continue;
    }
    const bool has_value = i + 1 < words.size();
    if ((w == "-m" || w == "--model") && has_value) {
      a.insert(a.end(), {"--model", words[++i]});
    } else if ((w == "-hf" || w == "--hf-repo") && has_value) {
      const std::string repo = words[++i];
      const size_t colon = repo.find(':');
      std::string model = repo.substr(0, colon);
      // A "-GGUF" repository holds quantizations of the model of the same name: its config plans it.
      if (model.size() > 5 && model.substr(model.size() - 5) == "-GGUF") model.resize(model.size() - 5);
      a.insert(a.end(), {"--model", model});
      if (colon != std::string::npos) a.insert(a.end(), {"--quant", repo.substr(colon + 1)});
    } else {
      a.push_back(w);
    }
  }
  if (std::find(a.begin(), a.end(), "--model") == a.end()) fail_input(source, "command", "llama-server names no model (-m FILE.gguf or -hf REPO:QUANT)");
  return parse_deployment(Args::parse(a));
}
}  // namespace

Deployment deployment_from_command(std::string_view command, const std::vector<std::string>& options, std::string_view source) {
  const auto words = logscan_detail::shell_split(command);
  if (is_llama_server(words)) return llama_deployment(words, options, source);
  const LogScan scan = scan_log_text(command, source);
  const bool read = std::any_of(scan.arg_sets.begin(), scan.arg_sets.end(), [](const LogArgSet& s) { return s.source == "command"; });
  if (!read)
    fail_input(source, "command",
               "is not a launch command headroom reads (vllm serve MODEL, python -m sglang.launch_server --model-path M, trtllm-serve MODEL, llama-server -m F)");
  // The command's model is the one to plan, read from the Hub when it is not on this machine (the
  // doctor only takes a model from a log when it can load it offline).
  std::vector<std::string> opts = options;
  for (const char* k : {"--model-path", "--model"})
    if (auto it = scan.flags.find(k); it != scan.flags.end() && std::find(opts.begin(), opts.end(), "--model") == opts.end())
      opts.insert(opts.end(), {"--model", it->second});
  RebuiltArgs r = rebuild_args(scan, Args::parse(opts));
  if (!r.has_model) fail_input(source, "command", "names no model");
  return parse_deployment(Args::parse(r.args));
}

}  // namespace headroom
