// `headroom validate`: plans every case of a real-log corpus (corpus/README.md format) and
// measures the forecast against what the engines printed.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace headroom {

// Reads a corpus .jsonl file and returns the validate JSON of CONTRACT.md. Throws InputError
// for a missing/unreadable file or a malformed line (naming the line).
nlohmann::ordered_json validate_corpus(const std::string& path);
// What a vLLM log's own lines say about the environment no flag carries, as deployment arguments:
// the FlashInfer sampler, the interconnect, the torch.compile cache (cold / warm), the model runner.
// `env_given`: NAME=VALUE already set (a variable given wins).
std::vector<std::string> vllm_environment_from_log(const std::string& raw, const std::vector<std::string>& env_given);

}  // namespace headroom
