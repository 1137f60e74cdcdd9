// Which local paths headroom may open for the input it is given (issue 31). The CLI opens any
// path its user names. `headroom serve` runs each request inside a FileReachScope: on that
// thread only the request's own private folder (its uploaded config, its log) may be opened;
// a model folder, draft model or log path named in a request's arguments, or in the launch
// line of an uploaded log, is refused as if it were not there, and never stat'ed.
#pragma once
#include <string>
#include <string_view>

namespace headroom {

class FileReachScope {
 public:
  // `dir`: the one folder (and what lies under it) this thread may open; "" = none at all.
  explicit FileReachScope(std::string dir);
  ~FileReachScope();
  FileReachScope(const FileReachScope&) = delete;
  FileReachScope& operator=(const FileReachScope&) = delete;

 private:
  const std::string* prev_;
  std::string dir_;
};

// True when no scope is active on this thread, or `path` lies inside the scope's folder.
bool may_open_path(std::string_view path);
// Throws InputError(path, field, "not opened: ...") when may_open_path() is false.
void require_path_reach(std::string_view path, std::string_view field);

}  // namespace headroom
