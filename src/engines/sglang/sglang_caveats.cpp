// Settings that move SGLang's CUDA-graph capture memory and that the plan does not model: each is
// named in the notes, and with any of them a plan that fits is at most at risk (issue 28: the
// verdict of a deployment that may die in capture must not read "fits" with a margin).
#include <fmt/format.h>

#include "engines/sglang/sglang_rules.h"

namespace headroom::sglang {

bool flag_on(const Deployment& d, std::string_view name) {
  const std::string* v = d.flag(name);
  return v && *v != "false" && *v != "0";
}

std::vector<std::string> unmodelled_capture_settings(const Deployment& d, const std::string& spec_algo, bool draft_counted) {
  std::vector<std::string> out;
  if (const std::string* b = d.flag("--moe-a2a-backend"); b && *b != "none")
    out.push_back(fmt::format("--moe-a2a-backend {}: the all-to-all dispatch buffers are allocated at the first MoE dispatch (warm-up or "
                              "capture) and are not modelled",
                              *b));
  for (const auto& [name, value] : d.env)
    if (name.rfind("SGLANG_DEEPEP_", 0) == 0)
      out.push_back(fmt::format("{}={}: sizes DeepEP's buffers, allocated during warm-up or capture; not modelled", name, value));
  if (flag_on(d, "--enable-two-batch-overlap")) out.push_back("--enable-two-batch-overlap: two micro-batches per captured graph; not modelled");
  if (flag_on(d, "--enable-torch-compile"))
    out.push_back("--enable-torch-compile: torch.compile runs in the graph pool for batch sizes up to --torch-compile-max-bs; its temporaries are not modelled");
  if (flag_on(d, "--enable-symm-mem")) out.push_back("--enable-symm-mem: the symmetric-memory pool allocated after capture is not modelled");
  if (!spec_algo.empty() && spec_algo != "NGRAM" && !draft_counted)
    out.push_back(fmt::format("--speculative-algorithm {}: the draft model's weights, KV and graphs are not counted", spec_algo));
  return out;
}

}  // namespace headroom::sglang
