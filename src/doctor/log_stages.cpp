// Engine-neutral stage lines: where weight loading begins (and ends), CUDA-graph capture of
// older vLLM, a finished vLLM start, and the worker method that failed. A begin line marks the
// rank as inside its stage (LogRankMemory::stage_open) until a later stage line. Formats:
//   vLLM gpu_model_runner.py / V0 model_runner.py   "Starting to load model <name>..."
//   vLLM model_loader/default_loader.py              "Loading weights took S seconds"
//   vLLM/SGLang weight_utils.py tqdm                 "Loading safetensors checkpoint shards:  40% Completed | 2/5"
//   TensorRT-LLM _torch/models/modeling_utils.py     "Loading weights concurrently:  94%|..." /
//                                                    "Loading safetensors weights in parallel: ..."
//   vLLM V0 (<= 0.5) model_runner.py                 "Capturing the model for CUDA graphs. This may lead to ..."
//   vLLM entrypoints/openai/api_server.py            "Starting vLLM API server [N ]on http://..."
//   vLLM V0 worker_base.py                           "Error executing method init_device. This might cause deadlock ..."
//   vLLM V0 multiproc_worker_utils.py                "Exception in worker VllmWorkerProcess while processing method load_model: ..."
//   TensorRT-LLM model loader                        "[TRT-LLM] [RANK 7] [E] Error executing load_single_module with args (...): ..."
//   uvicorn (vLLM and SGLang HTTP servers)           "Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
//                                                    access log '... - "POST /v1/chat/completions HTTP/1.1" 200 OK'
#include "doctor/log_parse.h"

namespace headroom::logscan_detail {

namespace {

bool ident(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

// A progress bar of weight loading: the rank is loading weights unless it is already past them
// (a bar redrawn after the weights' end line does not move it back).
void weights_bar(Ctx& c, const Line& l, std::string_view kind) {
  const std::string& st = c.rank_mem(l.rank).stage;
  if (!st.empty() && st != "init" && st != "weights") return;
  if (st != "weights") c.keep(l, kind);
  c.stage(l, "weights", true);
}

}  // namespace

void read_stages(Ctx& c, const Line& l) {
  const auto& k = l.kw;
  std::string_view b = l.body;
  if (k[kVStartLoad]) {
    c.keep(l, "vllm.starting_to_load_model");
    c.stage(l, "weights", true);
    c.score_vllm += 1;
  }
  if (k[kLoadShards]) weights_bar(c, l, "load.checkpoint_shards");
  if (k[kTLoadConcurrently]) {
    weights_bar(c, l, "trtllm.loading_weights");
    c.score_trt += 1;
  }
  if (k[kVLoadWeightsTook]) {
    // The weights are in; what comes next depends on the engine (vLLM prints "Model loading
    // took" right after, which names the next stage): the rank is between stages.
    auto& m = c.rank_mem(l.rank);
    if (m.stage == "weights") m.stage_open = false;
    c.keep(l, "vllm.loading_weights_took");
  }
  if (k[kVCapturingModel]) {
    c.keep(l, "vllm.capturing_cuda_graphs");
    c.stage(l, "cuda_graph", true);
    c.score_vllm += 1;
  }
  if (k[kVStartingServer]) {
    c.keep(l, "vllm.startup_complete");
    c.stage(l, "ready");
    c.score_vllm += 1;
  }
  if (k[kUvicornRunning] || k[kHttpOk]) {
    if (k[kUvicornRunning]) c.keep(l, "http.serving");  // access lines are not kept: there may be millions
    c.stage(l, "ready");
  }
  if (k[kMethodFailed]) {
    // The method's name after "executing [method ]" / "processing method ": the worker was
    // running it, so it was in the stage that method belongs to.
    std::optional<std::string_view> a = after(b, "error executing ");
    if (!a) a = after(b, "while processing method ");
    if (a) {
      std::string_view s = *a;
      if (s.substr(0, 7) == "method ") s.remove_prefix(7);
      while (!s.empty() && (s.front() == '\'' || s.front() == '"' || s.front() == '`')) s.remove_prefix(1);  // 'initialize_cache'
      size_t e = 0;
      while (e < s.size() && ident(s[e])) ++e;
      std::string frame = ":" + std::string(s.substr(0, e));
      std::string_view st = e > 0 ? stage_of_function(frame) : std::string_view();
      if (!st.empty()) {
        c.keep(l, "error.worker_method");
        c.stage(l, st, true);
      }
    }
  }
}

}  // namespace headroom::logscan_detail
