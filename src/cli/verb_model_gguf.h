// `headroom model` for a GGUF file, split set or folder (verb_model_gguf.cpp).
#pragma once
#include <iosfwd>
#include <string>

#include "headroom/cli.h"

namespace headroom {

int verb_model_gguf(const std::string& spec, const Args& args, std::ostream& out);

}  // namespace headroom
