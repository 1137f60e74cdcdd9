// `headroom model` for a GGUF file, split set or folder (verb_model_gguf.cpp).
#pragma once
#include <iosfwd>
#include <optional>
#include <string>

#include "headroom/cli.h"

namespace headroom {

// The GGUF model `headroom model` was given (positional or --model), or nullopt for other models.
std::optional<std::string> gguf_model_spec(const Args& args);
int verb_model_gguf(const std::string& spec, const Args& args, std::ostream& out);

}  // namespace headroom
