// same_but_budget(): field by field over the whole Deployment (a field added there must be
// added here: the size checks below fail the build until it is).
#include "engines/plan_memo.h"

#include <algorithm>

namespace headroom {

#if defined(__GLIBCXX__) && defined(__x86_64__)
static_assert(sizeof(Deployment) == 568, "Deployment changed: compare the new field in same_but_budget()");
static_assert(sizeof(GpuSpec) == 256, "GpuSpec changed: compare the new field in same_gpu()");
static_assert(sizeof(Parallel) == 20, "Parallel changed: compare the new field in same_but_budget()");
#endif

namespace {

bool same_gpu(const GpuSpec& a, const GpuSpec& b) {
  return a.name == b.name && a.display == b.display && a.aliases == b.aliases && a.vendor == b.vendor && a.arch == b.arch && a.sm == b.sm &&
         a.capacity_bytes == b.capacity_bytes && a.smi_total_mib == b.smi_total_mib && a.fp8 == b.fp8 && a.fp4 == b.fp4 &&
         a.bandwidth_tbs == b.bandwidth_tbs && a.interconnect == b.interconnect && a.source == b.source;
}

}  // namespace

bool same_but_budget(const Deployment& a, const Deployment& b, std::span<const std::string_view> budget) {
  if (a.engine != b.engine || a.model != b.model || a.capacity_bytes != b.capacity_bytes || a.gpus != b.gpus) return false;
  if (a.par.tp != b.par.tp || a.par.pp != b.par.pp || a.par.ep != b.par.ep || a.par.dp != b.par.dp || a.par.dp_attention != b.par.dp_attention)
    return false;
  if (a.env != b.env || a.compile_cache != b.compile_cache || a.host_memory_bytes != b.host_memory_bytes) return false;
  if (a.held_by_others != b.held_by_others || a.host_state_source != b.host_state_source) return false;
  // a.calibration: not compared. The engines apply a host profile after the terms kept here
  // (vllm_plan.cpp calibrated_ranks works on copies), so the kept terms hold with or without one.
  if (a.flags.size() != b.flags.size() || a.engine_version != b.engine_version || a.model_spec != b.model_spec) return false;
  for (size_t i = 0; i < a.flags.size(); ++i) {
    if (a.flags[i].first != b.flags[i].first) return false;
    if (a.flags[i].second != b.flags[i].second && std::find(budget.begin(), budget.end(), a.flags[i].first) == budget.end()) return false;
  }
  if (a.gpu_list.size() != b.gpu_list.size()) return false;
  for (size_t i = 0; i < a.gpu_list.size(); ++i)
    if (!same_gpu(a.gpu_list[i], b.gpu_list[i])) return false;
  return same_gpu(a.gpu, b.gpu);
}

}  // namespace headroom
