// `headroom validate`: plans every case of a real-log corpus (corpus/README.md format) and
// measures the forecast against what the engines printed.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace headroom {

// Reads a corpus .jsonl file and returns the validate JSON of CONTRACT.md. Throws InputError
// for a missing/unreadable file or a malformed line (naming the line).
nlohmann::ordered_json validate_corpus(const std::string& path);

}  // namespace headroom
