// The worker threads of `headroom serve` as cpp-httplib's TaskQueue: up to `workers` threads,
// started as connections arrive; at most `max_waiting` accepted connections wait for one, and
// one past that is run at once on the accepting thread with overloaded() true, so the server
// answers it 503 and closes it instead of queueing without bound.
#pragma once
#ifdef HEADROOM_HAVE_HTTPLIB
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace headroom::web {

class WorkerPool final : public httplib::TaskQueue {
 public:
  WorkerPool(std::size_t workers, std::size_t max_waiting);
  ~WorkerPool() override;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

  // True while accepted connections wait and every worker is taken: idle connections (kept
  // alive, or not yet sending) then yield theirs. A queue that an idle or new thread is about
  // to serve is not starved.
  bool starved() const { return starved_.load(); }
  // True on the thread running a connection the pool had no room for.
  static bool overloaded();

 private:
  void work();
  void update_starved();  // under mu_

  const std::size_t max_threads_, max_waiting_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0, starting_ = 0;  // threads waiting for a job; threads not yet running
  std::atomic<bool> starved_{false};
  bool stopping_ = false;
};

}  // namespace headroom::web
#endif
