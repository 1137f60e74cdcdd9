// GGUF headers from the Hub by Range requests: a ByteSource that fetches the file's prefix in
// growing blocks as the reader asks (the header can be tens of MiB with a large vocabulary; a
// 200 GB file costs only its header), and the choice of the file a quant tag names.
#include "model/gguf_hub.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

#include "headroom/error.h"
#include "model/hub_client.h"
#include "model/hub_env.h"

namespace headroom::hub {
namespace {

constexpr int64_t kFirstBlock = 1 << 20;        // most headers fit the first MiB
constexpr int64_t kMaxHeaderBytes = 512LL << 20;  // past this a "header" is not read from the Hub

std::string upper(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return o;
}
bool ends_with(std::string_view s, std::string_view t) { return s.size() >= t.size() && s.substr(s.size() - t.size()) == t; }
std::string base_name(const std::string& f) { return f.substr(f.rfind('/') == std::string::npos ? 0 : f.rfind('/') + 1); }
bool is_projector(const std::string& f) { return upper(base_name(f)).rfind("MMPROJ", 0) == 0; }

// A Hub file read by Range requests: the bytes [0, loaded) kept, grown (doubling) as reads pass them.
class HubSource final : public gguf::ByteSource {
 public:
  HubSource(HubClient& c, std::string repo, std::string sha, std::string file)
      : c_(c), repo_(std::move(repo)), sha_(std::move(sha)), file_(std::move(file)), name_(fmt::format("{}@{} {}", repo_, sha_.substr(0, 12), file_)) {
    HubClient::Range r = c_.fetch_range(repo_, sha_, file_, 0, kFirstBlock);
    size_ = r.file_size;
    buf_ = std::move(r.bytes);
  }
  const std::string& name() const override { return name_; }
  int64_t size() const override { return size_; }
  void read_at(int64_t off, char* dst, int64_t n) override {
    const int64_t end = off + n;
    if (end > static_cast<int64_t>(buf_.size())) grow(end);
    std::copy_n(buf_.data() + off, n, dst);
  }
  int64_t loaded() const { return static_cast<int64_t>(buf_.size()); }

 private:
  void grow(int64_t end) {
    if (end > kMaxHeaderBytes)
      fail_input(name_, "header", fmt::format("reaches past {} MiB: not read from the Hub (download the file and give its path)", kMaxHeaderBytes >> 20));
    const int64_t have = static_cast<int64_t>(buf_.size());
    const int64_t want = std::min({std::max(end, 2 * have), size_, kMaxHeaderBytes});
    HubClient::Range r = c_.fetch_range(repo_, sha_, file_, have, want - have);
    if (static_cast<int64_t>(r.bytes.size()) < end - have)
      fail_input(name_, "header", fmt::format("the Hub sent {} of the {} bytes asked at offset {}", r.bytes.size(), want - have, have));
    buf_ += r.bytes;
  }

  HubClient& c_;
  std::string repo_, sha_, file_, name_;
  int64_t size_ = 0;
  std::string buf_;
};

}  // namespace

std::optional<GgufRef> parse_gguf_ref(std::string_view spec) {
  const size_t colon = spec.rfind(':');
  if (colon == std::string_view::npos || colon + 1 >= spec.size()) return std::nullopt;
  const std::string_view tag = spec.substr(colon + 1);
  if (tag.size() > 64 || !std::all_of(tag.begin(), tag.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
      }))
    return std::nullopt;
  auto ref = parse_repo_ref(spec.substr(0, colon));
  if (!ref || ref->repo.find('/') == std::string::npos) return std::nullopt;
  return GgufRef{*ref, std::string(tag)};
}

std::string pick_gguf_file(const std::vector<std::string>& files, const std::string& want, const std::string& repo) {
  std::vector<std::string> models;  // model files: single files and the first part of each split set
  for (const auto& f : files) {
    if (!ends_with(upper(f), ".GGUF") || is_projector(f)) continue;
    if (auto sn = gguf::parse_split_name(f); sn && sn->no != 1) continue;
    models.push_back(f);
  }
  std::vector<std::string> hits;
  if (ends_with(upper(want), ".GGUF")) {
    for (const auto& f : files)
      if (f == want) return f;
    for (const auto& f : models)
      if (base_name(f) == want) hits.push_back(f);
  } else {
    // The tag as a word of the name: "Qwen3-8B-Q4_K_M.gguf", "Q4_K_M/Qwen3-8B-Q4_K_M-00001-of-00002.gguf".
    const std::string t = upper(want);
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (const auto& f : models) {
      const std::string u = upper(f);
      for (size_t at = u.find(t); at != std::string::npos; at = u.find(t, at + 1)) {
        const bool left = at == 0 || !word(u[at - 1]);
        const bool right = at + t.size() >= u.size() || !word(u[at + t.size()]);
        if (left && right) {
          hits.push_back(f);
          break;
        }
      }
    }
    // "Q4_K_M" names the plain file when a "UD-Q4_K_M" one is there too (llama.cpp -hf picks the first match; be exact).
    if (hits.size() > 1) {
      std::vector<std::string> plain;
      for (const auto& f : hits)
        if (upper(base_name(f)).find("UD-" + t) == std::string::npos) plain.push_back(f);
      if (plain.size() == 1) hits = plain;
    }
  }
  if (hits.size() == 1) return hits.front();
  std::string list;
  for (size_t i = 0; i < models.size() && i < 12; ++i) list += (i ? ", " : "") + models[i];
  if (models.size() > 12) list += fmt::format(", ... ({} in all)", models.size());
  if (hits.empty())
    fail_input(repo, want, models.empty() ? std::string("the repository holds no GGUF model file")
                                          : fmt::format("no GGUF file of the repository matches (it has: {})", list));
  std::string many;
  for (const auto& h : hits) many += (many.empty() ? "" : ", ") + h;
  fail_input(repo, want, fmt::format("matches {} files ({}): name one with --gguf FILE", hits.size(), many));
}

std::optional<GgufWant> gguf_want(std::string_view spec, const std::string* file) {
  const auto tagged = parse_gguf_ref(spec);
  if (!file && !tagged) return std::nullopt;
  if (file && tagged) fail_input("command line", "--gguf", fmt::format("'{}' already names its file by the tag ':{}': give one", spec, tagged->tag));
  const std::optional<RepoRef> ref = tagged ? std::optional<RepoRef>(tagged->ref) : parse_repo_ref(spec);
  if (!ref || ref->repo.find('/') == std::string::npos)
    fail_input("command line", "--model", fmt::format("'{}' is not a Hub repo ORG/NAME[@REVISION] (--gguf names a file of one)", spec));
  GgufWant w{*ref, file ? *file : tagged->tag};
  if (w.want.empty()) fail_input("command line", "--gguf", "is empty (a file name of the repo, e.g. Qwen3-8B-Q4_K_M.gguf)");
  return w;
}

HubGguf read_hub_gguf(const RepoRef& ref, const std::string& want) {
  if (offline())
    fail_input(ref.repo, "gguf", fmt::format("offline: the header of {}'s {} is read from the Hub (unset HF_HUB_OFFLINE), "
                                             "or download the file and give its path", ref.repo, want));
  HubClient c;
  const RepoInfo info = c.revision_info(ref);
  HubGguf out;
  out.repo = ref.repo;
  out.sha = info.sha;
  out.file = pick_gguf_file(info.files, want, ref.repo);
  auto read = [&](const std::string& file) {
    HubSource src(c, ref.repo, info.sha, file);
    gguf::Header h = gguf::read_header(src);
    out.bytes_read += src.loaded();
    return h;
  };
  if (auto sn = gguf::parse_split_name(out.file)) {
    out.files = gguf::read_split_parts(*sn, [&](const std::string& part) {
      if (std::find(info.files.begin(), info.files.end(), part) == info.files.end())
        fail_input(fmt::format("{}@{}", ref.repo, info.sha.substr(0, 12)), part, "this part of the split set is not in the repository");
      return read(part);
    });
  } else {
    out.files.parts.push_back(read(out.file));
    if (auto count = out.files.meta().get_int("split.count"); count && *count > 1)
      fail_input(out.file, "split.count", fmt::format("part of a {}-file split set, but the name lacks -NNNNN-of-NNNNN", *count));
  }
  return out;
}

}  // namespace headroom::hub
