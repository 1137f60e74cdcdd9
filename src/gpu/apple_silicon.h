// Apple Silicon GPUs by name and memory ("apple-m3-max-64gb", "m2-ultra-192gb"): the capacity is
// Metal's recommendedMaxWorkingSetSize for that RAM (docs/gpus.md, "Apple Silicon").
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/gpu.h"

namespace headroom::apple {

// Metal's recommendedMaxWorkingSetSize on a Mac with this much unified memory: 2/3 of it up to
// 32 GiB, 3/4 above, rounded up to whole 16 KiB pages.
int64_t working_set_bytes(int64_t ram_bytes);

// The GPU a catalog-style name (lower case, '-' between words) spells, or nullptr. A name that is an
// Apple chip but cannot be used (no memory size, a size the chip does not ship with) is nullptr
// with `why` set to the fix (one line, without the name); `why` stays empty for a name that is no
// Apple chip.
const GpuSpec* find(std::string_view key, std::string& why);

// Every chip and memory size of the line-ups, as names find() takes ("apple-m3-max-64gb"), for lists
// (`headroom gpus --json`, the web page's GPU picker).
std::vector<std::string> lineup_names();

}  // namespace headroom::apple
