// `headroom serve` under load (issue 31's target: >= 1,000 `plan` requests/s with keep-alive,
// p99 under 100 ms, RSS flat): the server in-process on 127.0.0.1, 50 keep-alive clients each
// posting 40 plans; counters report requests/s, p99 and the RSS growth over the run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "web/web.h"

#ifdef HEADROOM_HAVE_HTTPLIB
#include <httplib.h>

namespace {

long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

void BM_KeepAlivePlanLoad(benchmark::State& state) {
  headroom::web::HttpServer server(headroom::web::ServerOptions{"127.0.0.1", 0, {}});
  const int port = server.bind();
  std::thread serving([&] { server.serve(); });
  const std::string body = R"({"args":["--model","Qwen/Qwen3-0.6B","--gpu","h100"]})";
  constexpr int kClients = 50, kEach = 40;
  {  // warm the catalog and the plan path once
    httplib::Client c("127.0.0.1", port);
    c.Post("/api/plan", body, "application/json");
  }
  const long rss0 = rss_kib();
  std::vector<double> latencies;
  std::mutex mu;
  std::atomic<int> failed{0};
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> clients;
    for (int t = 0; t < kClients; ++t)
      clients.emplace_back([&] {
        httplib::Client c("127.0.0.1", port);
        c.set_keep_alive(true);
        c.set_tcp_nodelay(true);  // as browsers and curl send
        c.set_read_timeout(10, 0);
        std::vector<double> mine;
        for (int i = 0; i < kEach; ++i) {
          const auto s = std::chrono::steady_clock::now();
          auto r = c.Post("/api/plan", body, "application/json");
          mine.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
          if (!r || r->status != 200) ++failed;
        }
        std::lock_guard<std::mutex> lock(mu);
        latencies.insert(latencies.end(), mine.begin(), mine.end());
      });
    for (auto& t : clients) t.join();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  server.stop();
  serving.join();
  std::sort(latencies.begin(), latencies.end());
  const double p99 = latencies.empty() ? 0 : latencies[static_cast<size_t>(0.99 * static_cast<double>(latencies.size() - 1))];
  state.counters["req_per_s"] = static_cast<double>(latencies.size()) / std::max(seconds, 1e-9);
  state.counters["p99_ms"] = p99;
  state.counters["failed"] = failed.load();
  state.counters["rss_growth_kib"] = static_cast<double>(rss_kib() - rss0);
}
BENCHMARK(BM_KeepAlivePlanLoad)->Iterations(10)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
#endif

namespace {
// The API call alone, without HTTP: what one `plan` request costs the server's CPU.
void BM_ApiPlan(benchmark::State& state) {
  const std::string body = R"({"args":["--model","Qwen/Qwen3-0.6B","--gpu","h100"]})";
  for (auto _ : state) benchmark::DoNotOptimize(headroom::web::api_run("plan", body));
}
BENCHMARK(BM_ApiPlan)->Unit(benchmark::kMicrosecond);
}  // namespace
