// A safe, bounded reader for Python pickles of plain data (protocols 2-5): dicts, lists, tuples,
// str, bytes, int, float, bool, None — what torch.cuda.memory._dump_snapshot writes. It never
// executes anything: GLOBAL/STACK_GLOBAL/REDUCE are accepted only for collections.OrderedDict()
// (an empty dict); every other opcode, a truncated stream, nesting deeper than the limit, or a
// size beyond the input is an InputError naming the byte offset.
// Opcode semantics follow CPython Lib/pickle.py / Modules/_pickle.c (Unpickler.load_*).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::pickle {

enum class Kind : uint8_t { None, Bool, Int, Float, Str, Bytes, List, Tuple, Dict, Global };

struct Node {
  Kind kind = Kind::None;
  bool big = false;             // Int that did not fit int64 (value saturated to INT64_MAX/MIN)
  uint16_t depth = 0;           // containers: 1 + deepest child
  int64_t i = 0;                // Int, Bool
  double f = 0;                 // Float
  std::string s;                // Str, Bytes, Global ("module.name")
  std::vector<uint32_t> items;  // List/Tuple: elements; Dict: key, value, key, value, ...
};

struct Limits {
  size_t max_input = size_t{16} << 30;  // bytes
  uint16_t max_depth = 64;              // container nesting
  size_t max_stack = size_t{1} << 26;   // values on the unpickling stack
};

class Document {
 public:
  const Node& root() const { return nodes_[root_]; }
  const Node& node(uint32_t id) const { return nodes_[id]; }
  uint32_t root_id() const { return root_; }
  size_t node_count() const { return nodes_.size(); }
  int protocol() const { return protocol_; }
  // Dict lookup by string key (nullptr when absent or not a dict).
  const Node* get(const Node& dict, std::string_view key) const;

 private:
  friend Document parse(std::string_view, std::string_view, const Limits&);
  std::vector<Node> nodes_;
  uint32_t root_ = 0;
  int protocol_ = 0;
};

// Parses one pickle. `source` names the input in errors ("snapshot.pickle: pickle: ...").
Document parse(std::string_view bytes, std::string_view source, const Limits& limits = {});

}  // namespace headroom::pickle
