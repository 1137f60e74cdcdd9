// WorkerPool: lazily started threads, a bounded wait list, overflow marked for a 503.
#include "web/worker_pool.h"

#ifdef HEADROOM_HAVE_HTTPLIB

namespace headroom::web {

namespace {
thread_local bool tl_overloaded = false;
}

bool WorkerPool::overloaded() { return tl_overloaded; }

WorkerPool::WorkerPool(std::size_t workers, std::size_t max_waiting) : max_threads_(workers), max_waiting_(max_waiting) {}

WorkerPool::~WorkerPool() { shutdown(); }

void WorkerPool::enqueue(std::function<void()> fn) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!stopping_ && jobs_.size() < max_waiting_) {
      jobs_.push_back(std::move(fn));
      if (idle_ + starting_ < jobs_.size() && threads_.size() < max_threads_) {
        ++starting_;
        threads_.emplace_back([this] { work(); });
      }
      update_starved();
      lock.unlock();
      cv_.notify_one();
      return;
    }
  }
  tl_overloaded = true;  // no room: answer 503 here and close
  fn();
  tl_overloaded = false;
}

void WorkerPool::shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (auto& t : threads) t.join();
}

void WorkerPool::update_starved() {
  starved_ = jobs_.size() > idle_ + starting_ && threads_.size() >= max_threads_;
}

void WorkerPool::work() {
  bool started = false;
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!started) {
        started = true;
        --starting_;
      }
      ++idle_;
      update_starved();
      cv_.wait(lock, [this] { return !jobs_.empty() || stopping_; });
      --idle_;
      if (jobs_.empty()) return;  // stopping, nothing left
      fn = std::move(jobs_.front());
      jobs_.pop_front();
      update_starved();
    }
    fn();
  }
}

}  // namespace headroom::web
#endif
