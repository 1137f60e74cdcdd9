// One client connection as cpp-httplib's Stream, with the limits of conn_limits.h enforced on
// every read and write (poll() with deadlines, a byte budget per request) and a read buffer
// that lives as long as the connection, so pipelined requests are not lost between requests.
#pragma once
#ifdef HEADROOM_HAVE_HTTPLIB
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <vector>

#include "web/conn_limits.h"

namespace headroom::web {

class ConnStream final : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;
  ConnStream(int sock, const ConnLimits& lim);

  // Waits up to `idle` for the next request's first byte, in short slices so that `give_up`
  // (the server stopping, or clients waiting for a worker) ends the wait early.
  template <class GiveUp>
  bool wait_for_request(std::chrono::milliseconds idle, GiveUp give_up) {
    const auto end = Clock::now() + idle;
    while (pos_ == len_) {
      if (give_up()) return false;
      const auto now = Clock::now();
      if (now >= end) return false;
      auto slice = std::min<std::chrono::milliseconds>(std::chrono::milliseconds(100),
                                                       std::chrono::duration_cast<std::chrono::milliseconds>(end - now) + std::chrono::milliseconds(1));
      int r = poll_in(slice);
      if (r < 0) return false;
      if (r > 0) return true;
    }
    return true;
  }
  // Starts a request's clock and byte budget.
  void begin_request();
  // True once a limit was hit (time or bytes): the connection is closed after the answer.
  bool limit_hit() const { return limit_hit_; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return sock_; }

 private:
  int poll_in(std::chrono::milliseconds timeout) const;
  std::chrono::milliseconds read_wait() const;  // the idle gap, cut to the request's deadline

  int sock_;
  const ConnLimits& lim_;
  std::vector<char> buf_;
  size_t pos_ = 0, len_ = 0;
  size_t request_bytes_ = 0;
  Clock::time_point read_deadline_;
  mutable Clock::time_point write_deadline_;
  mutable bool writing_ = false;
  mutable bool limit_hit_ = false;
};

}  // namespace headroom::web
#endif
