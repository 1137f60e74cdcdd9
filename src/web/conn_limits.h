// Limits of one `headroom serve` connection and of the server as a whole (issue 31): how long a
// client may take to send a request or read an answer, how many bytes a request may bring, how
// many connections are served at once and how many wait. A trickling or idle client holds one
// worker for at most these times, and never the worker another client needs.
#pragma once
#include <chrono>
#include <cstddef>

#include "web/web.h"

namespace headroom::web {

struct ConnLimits {
  // Workers = connections served at once; past `max_waiting` more, a connection gets 503.
  std::size_t workers = 128;
  std::size_t max_waiting = 256;
  // A request (line, headers, body) must arrive within `request_deadline` of its first byte,
  // with no gap longer than `read_idle`; an answer must be taken within `write_deadline` of its
  // first byte.
  std::chrono::milliseconds request_deadline{10'000};
  std::chrono::milliseconds read_idle{5'000};
  std::chrono::milliseconds write_deadline{30'000};
  // A kept-alive connection waits this long for its next request (a new one, `read_idle` for
  // its first), and not at all while other connections wait for a worker.
  std::chrono::milliseconds keep_alive_idle{5'000};
  std::size_t max_requests_per_connection = 1000;
  // Bytes one request may bring: headers and chunk framing on top of the body cap.
  std::size_t request_bytes = kMaxBodyBytes + (256u << 10);
  // Connections the kernel holds for accept() (cpp-httplib's own is 5).
  int listen_backlog = 512;
};

}  // namespace headroom::web
