// Speed of the log readers (issue 5: "reads a 1 GB log in under 5 s on one core"). A synthetic
// server log is generated in memory: SGLang and vLLM startup lines, then request logs (decode
// batches, HTTP access lines, vLLM metrics) with a crash at the end, the shape of a real
// long-running server's log. BM_LogScan1GiB feeds the 64 MiB buffer 16 times = 1 GiB.
#include <benchmark/benchmark.h>

#include <string>

#include "headroom/logscan.h"

namespace {

const std::string& synthetic_log() {
  static const std::string log = [] {
    std::string s;
    s.reserve(64u << 20);
    s += "[2026-01-10 10:00:00] server_args=ServerArgs(model_path='nvidia/GLM-5-NVFP4', tp_size=8, "
         "mem_fraction_static=0.95, cuda_graph_max_bs=None, kv_cache_dtype='auto')\n";
    for (int tp = 0; tp < 8; ++tp) {
      std::string p = "[2026-01-10 10:00:01 TP" + std::to_string(tp) + "] ";
      s += p + "Init torch distributed ends. mem usage=1.02 GB\n";
      s += p + "Load weight begin. avail mem=93.50 GB\n";
      s += p + "Load weight end. type=GlmMoeDsaForCausalLM, avail mem=41.10 GB, mem usage=52.40 GB.\n";
      s += p + "KV Cache is allocated. #tokens: 525312, KV size: 35.10 GB\n";
      s += p + "Memory pool end. avail mem=1.10 GB\n";
      s += p + "Capture cuda graph begin. This can take up to several minutes. avail mem=0.96 GB\n";
    }
    long i = 0;
    while (s.size() < (64u << 20) - 4096) {
      switch (i % 4) {
        case 0:
          s += "[2026-01-10 10:05:11 TP0] Decode batch. #running-req: 37, #token: 123456, token usage: 0.23, "
               "cuda graph: True, gen throughput (token/s): 1450.67, #queue-req: 0, \n";
          break;
        case 1:
          s += "[2026-01-10 10:05:11] INFO:     10.0.0.12:51234 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n";
          break;
        case 2:
          s += "[2026-01-10 10:05:12 TP0] Prefill batch. #new-seq: 1, #new-token: 2048, #cached-token: 512, token "
               "usage: 0.23, #running-req: 36, #queue-req: 0, \n";
          break;
        default:
          s += "(APIServer pid=1) INFO 01-10 10:05:12 [loggers.py:123] Engine 000: Avg prompt throughput: 2048.0 "
               "tokens/s, Avg generation throughput: 1450.3 tokens/s, Running: 37 reqs, Waiting: 0 reqs, GPU KV cache "
               "usage: 23.1%, Prefix cache hit rate: 41.0%\n";
      }
      ++i;
    }
    s += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 694.00 MiB. GPU 4 has a total capacity of "
         "94.97 GiB of which 247.44 MiB is free. Including non-PyTorch memory, this process has 94.72 GiB memory in "
         "use. Of the allocated memory 87.43 GiB is allocated by PyTorch, and 6.44 GiB is reserved by PyTorch but "
         "unallocated.\n";
    return s;
  }();
  return log;
}

void BM_LogScan64MiB(benchmark::State& state) {
  const std::string& log = synthetic_log();
  for (auto _ : state) {
    headroom::LogScanner sc("bench");
    for (size_t i = 0; i < log.size(); i += 1 << 20) sc.feed(std::string_view(log).substr(i, 1 << 20));
    headroom::LogScan s = sc.finish();
    benchmark::DoNotOptimize(s.ooms.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(log.size()));
}
BENCHMARK(BM_LogScan64MiB)->Unit(benchmark::kMillisecond);

void BM_LogScan1GiB(benchmark::State& state) {
  const std::string& log = synthetic_log();
  for (auto _ : state) {
    headroom::LogScanner sc("bench");
    for (int rep = 0; rep < 16; ++rep)
      for (size_t i = 0; i < log.size(); i += 1 << 20) sc.feed(std::string_view(log).substr(i, 1 << 20));
    headroom::LogScan s = sc.finish();
    benchmark::DoNotOptimize(s.ooms.size());
    state.counters["evidence"] = static_cast<double>(s.evidence.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 16 * static_cast<int64_t>(log.size()));
}
BENCHMARK(BM_LogScan1GiB)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
