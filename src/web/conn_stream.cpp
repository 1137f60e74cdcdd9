// ConnStream: recv/send behind poll() with the request's deadlines and byte budget.
#include "web/conn_stream.h"

#ifdef HEADROOM_HAVE_HTTPLIB
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace headroom::web {

namespace {

using std::chrono::milliseconds;

int poll_one(int sock, short events, milliseconds timeout) {
  pollfd p{sock, events, 0};
  for (;;) {
    int r = ::poll(&p, 1, static_cast<int>(std::max<milliseconds::rep>(0, timeout.count())));
    if (r < 0 && errno == EINTR) continue;
    if (r > 0 && (p.revents & (POLLERR | POLLNVAL))) return -1;
    return r;
  }
}

void address_of(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  int r = peer ? ::getpeername(sock, reinterpret_cast<sockaddr*>(&addr), &len) : ::getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &len);
  ip.clear();
  port = 0;
  if (r != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

}  // namespace

ConnStream::ConnStream(int sock, const ConnLimits& lim) : sock_(sock), lim_(lim), buf_(16 << 10) { begin_request(); }

void ConnStream::begin_request() {
  request_bytes_ = 0;
  const auto now = Clock::now();
  read_deadline_ = now + lim_.request_deadline;
  writing_ = false;  // the answer's clock starts at its first byte: planning time is not the client's
}

int ConnStream::poll_in(milliseconds timeout) const { return poll_one(sock_, POLLIN, timeout); }

milliseconds ConnStream::read_wait() const {
  auto left = std::chrono::duration_cast<milliseconds>(read_deadline_ - Clock::now());
  return std::max(milliseconds(0), std::min(left, lim_.read_idle));
}

bool ConnStream::is_readable() const {
  if (pos_ < len_) return true;
  if (poll_in(read_wait()) > 0) return true;
  limit_hit_ = true;
  return false;
}

bool ConnStream::is_writable() const {
  if (!writing_) {
    writing_ = true;
    write_deadline_ = Clock::now() + lim_.write_deadline;
  }
  auto left = std::chrono::duration_cast<milliseconds>(write_deadline_ - Clock::now());
  if (left.count() > 0 && poll_one(sock_, POLLOUT, left) > 0) return true;
  limit_hit_ = true;
  return false;
}

ssize_t ConnStream::read(char* ptr, size_t size) {
  if (pos_ == len_) {
    if (request_bytes_ >= lim_.request_bytes) {
      limit_hit_ = true;
      return -1;
    }
    if (!is_readable()) return -1;
    const size_t want = std::min(buf_.size(), lim_.request_bytes - request_bytes_);
    ssize_t n;
    do n = ::recv(sock_, buf_.data(), want, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return n;
    pos_ = 0;
    len_ = static_cast<size_t>(n);
    request_bytes_ += len_;
  }
  const size_t k = std::min(size, len_ - pos_);
  std::copy_n(buf_.data() + pos_, k, ptr);
  pos_ += k;
  return static_cast<ssize_t>(k);
}

ssize_t ConnStream::write(const char* ptr, size_t size) {
  if (!is_writable()) return -1;
  ssize_t n;
  do n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n;
}

void ConnStream::get_remote_ip_and_port(std::string& ip, int& port) const { address_of(sock_, true, ip, port); }
void ConnStream::get_local_ip_and_port(std::string& ip, int& port) const { address_of(sock_, false, ip, port); }

}  // namespace headroom::web
#endif
