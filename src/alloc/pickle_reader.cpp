// The bounded pickle reader (see include/headroom/pickle_reader.h). A stack machine over the
// opcodes of protocols 2-5 that plain data uses; no recursion, every length checked against the
// bytes left, container depth capped, nothing is ever called or imported.
#include <bit>
#include <fmt/format.h>

#include "headroom/error.h"
#include "headroom/pickle_reader.h"

namespace headroom::pickle {

const Node* Document::get(const Node& dict, std::string_view key) const {
  if (dict.kind != Kind::Dict) return nullptr;
  for (size_t k = 0; k + 1 < dict.items.size(); k += 2) {
    const Node& kn = nodes_[dict.items[k]];
    if (kn.kind == Kind::Str && kn.s == key) return &nodes_[dict.items[k + 1]];
  }
  return nullptr;
}

namespace {

Node mk(Kind k) {
  Node n;
  n.kind = k;
  return n;
}

const char* opcode_name(uint8_t op) {
  switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 0x82: case 0x83: case 0x84: return "EXT";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 'I': return "INT";
    case 'L': return "LONG";
    case 'F': return "FLOAT";
    case 'S': return "STRING";
    case 'V': return "UNICODE";
    case 'p': return "PUT";
    case 'g': return "GET";
    default: return "unknown";
  }
}

class Reader {
 public:
  Reader(std::string_view in, std::string_view source, const Limits& lim, std::vector<Node>& nodes)
      : in_(in), source_(source), lim_(lim), nodes_(nodes) {}

  [[noreturn]] void fail(size_t at, std::string_view why) const {
    fail_input(source_, "pickle", fmt::format("{} (at byte {})", why, at));
  }

  const uint8_t* take(size_t n) {
    if (n > in_.size() - pos_) fail(pos_, fmt::format("truncated: needs {} more bytes, {} left", n, in_.size() - pos_));
    const auto* p = reinterpret_cast<const uint8_t*>(in_.data() + pos_);
    pos_ += n;
    return p;
  }
  uint64_t le(size_t n) {
    const uint8_t* p = take(n);
    uint64_t v = 0;
    for (size_t k = 0; k < n; ++k) v |= static_cast<uint64_t>(p[k]) << (8 * k);
    return v;
  }
  size_t length(size_t width) {
    const size_t at = pos_;
    uint64_t n = le(width);
    if (n > in_.size() - pos_) fail(at, fmt::format("length {} runs past the end of the input ({} bytes left)", n, in_.size() - pos_));
    return static_cast<size_t>(n);
  }

  uint32_t add(Node n) {
    if (nodes_.size() >= 0x7fffffffu) fail(pos_, "too many values");
    nodes_.push_back(std::move(n));
    return static_cast<uint32_t>(nodes_.size() - 1);
  }
  void push(uint32_t id) {
    if (stack_.size() >= lim_.max_stack) fail(pos_, "unpickling stack exceeds its limit");
    stack_.push_back(id);
  }
  uint32_t pop(size_t at) {
    if (stack_.size() <= floor()) fail(at, "stack underflow");
    uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  uint32_t top(size_t at) {
    if (stack_.size() <= floor()) fail(at, "stack underflow");
    return stack_.back();
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<uint32_t> pop_mark(size_t at) {
    if (marks_.empty()) fail(at, "MARK expected on the stack");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  void add_child(uint32_t parent, uint32_t child, size_t at) {
    const uint16_t d = static_cast<uint16_t>(std::min<int>(nodes_[child].depth + 1, 0xffff));
    Node& p = nodes_[parent];
    if (d > p.depth) p.depth = d;
    if (p.depth > lim_.max_depth) fail(at, fmt::format("nesting deeper than {} levels", lim_.max_depth));
    p.items.push_back(child);
  }
  uint32_t container(Kind k, const std::vector<uint32_t>& items, size_t at) {
    uint32_t id = add(mk(k));
    for (uint32_t c : items) add_child(id, c, at);
    return id;
  }
  // Python's Pickler numbers memo entries in order (len(memo)), so a dense table is right; an
  // index far past the entries stored, or more entries than the input has PUT bytes for, can
  // only be a hostile "ladder" that makes the table itself the bomb (issue 31).
  void memo_put(uint64_t idx, size_t at) {
    if (idx > memo_.size() + (size_t{1} << 16) || idx >= (uint64_t{1} << 31) || idx > in_.size() / 2 + (size_t{1} << 16))
      fail(at, fmt::format("memo index {} out of range ({} entries stored)", idx, memo_.size()));
    if (idx >= memo_.size()) memo_.resize(static_cast<size_t>(idx) + 1, UINT32_MAX);
    memo_[static_cast<size_t>(idx)] = top(at);
  }
  void memo_get(uint64_t idx, size_t at) {
    if (idx >= memo_.size() || memo_[static_cast<size_t>(idx)] == UINT32_MAX) fail(at, fmt::format("memo key {} was never stored", idx));
    push(memo_[static_cast<size_t>(idx)]);
  }
  uint32_t make_int(const uint8_t* p, size_t n) {
    Node v = mk(Kind::Int);
    if (n == 0) return add(v);
    const bool neg = (p[n - 1] & 0x80) != 0;
    bool fits = true;
    for (size_t k = 8; k < n; ++k)
      if (p[k] != (neg ? 0xff : 0x00)) fits = false;
    if (n > 8 && ((p[7] & 0x80) != 0) != neg) fits = false;
    if (!fits) {
      v.big = true;
      v.i = neg ? INT64_MIN : INT64_MAX;
      return add(v);
    }
    uint64_t u = neg ? ~uint64_t{0} : 0;
    for (size_t k = 0; k < std::min<size_t>(n, 8); ++k) {
      u &= ~(uint64_t{0xff} << (8 * k));
      u |= static_cast<uint64_t>(p[k]) << (8 * k);
    }
    v.i = static_cast<int64_t>(u);
    return add(v);
  }
  void global(std::string module, std::string name, size_t at) {
    if (module == "collections" && name == "OrderedDict") {
      Node g = mk(Kind::Global);
      g.s = "collections.OrderedDict";
      push(add(std::move(g)));
      return;
    }
    fail(at, fmt::format("refusing to load global '{}.{}': a memory snapshot holds only plain data", module, name));
  }
  std::string line(size_t at) {
    size_t nl = in_.find('\n', pos_);
    if (nl == std::string_view::npos) fail(at, "truncated: GLOBAL without newline");
    if (nl - pos_ > 256) fail(at, "GLOBAL name too long");
    std::string s(in_.substr(pos_, nl - pos_));
    pos_ = nl + 1;
    return s;
  }

  uint32_t run(int& protocol) {
    if (in_.size() > lim_.max_input) fail(0, fmt::format("input of {} bytes exceeds the {} byte limit", in_.size(), lim_.max_input));
    if (in_.size() < 2 || static_cast<uint8_t>(in_[0]) != 0x80)
      fail(0, "not a pickle of protocol 2 or newer (expected PROTO opcode 0x80 first)");
    while (true) {
      const size_t at = pos_;
      const uint8_t op = *take(1);
      switch (op) {
        case 0x80: {  // PROTO
          protocol = *take(1);
          if (protocol < 2 || protocol > 5) fail(at, fmt::format("unsupported pickle protocol {}", protocol));
          break;
        }
        case 0x95: length(8); break;  // FRAME: a length hint; contents are read as usual
        case '.': {                   // STOP
          uint32_t r = pop(at);
          if (!marks_.empty()) fail(at, "STOP with an open MARK");
          return r;
        }
        case '(': marks_.push_back(stack_.size()); break;  // MARK
        case '0': pop(at); break;                           // POP
        case '1': pop_mark(at); break;                      // POP_MARK
        case '2': push(top(at)); break;                     // DUP
        case 'N': push(add(mk(Kind::None))); break;
        case 0x88: case 0x89: {  // NEWTRUE / NEWFALSE
          Node b = mk(Kind::Bool);
          b.i = op == 0x88;
          push(add(b));
          break;
        }
        case 'J': { Node n = mk(Kind::Int); n.i = static_cast<int32_t>(le32(take(4))); push(add(n)); break; }  // BININT
        case 'K': { Node n = mk(Kind::Int); n.i = *take(1); push(add(n)); break; }
        case 'M': { Node n = mk(Kind::Int); n.i = static_cast<int64_t>(le(2)); push(add(n)); break; }
        case 0x8a: { size_t n = length(1); push(make_int(take(n), n)); break; }  // LONG1
        case 0x8b: {                                                            // LONG4
          const size_t n = length(4);
          if (n > (size_t{1} << 31)) fail(at, "LONG4 length is negative or huge");
          push(make_int(take(n), n));
          break;
        }
        case 'G': {  // BINFLOAT, big-endian
          const uint8_t* p = take(8);
          uint64_t u = 0;
          for (int k = 0; k < 8; ++k) u = (u << 8) | p[k];
          Node n = mk(Kind::Float);
          n.f = std::bit_cast<double>(u);
          push(add(n));
          break;
        }
        case 0x8c: case 'X': case 0x8d:  // SHORT_BINUNICODE, BINUNICODE, BINUNICODE8
        case 'C': case 'B': case 0x8e: {  // SHORT_BINBYTES, BINBYTES, BINBYTES8
          const size_t w = (op == 0x8c || op == 'C') ? 1 : (op == 'X' || op == 'B') ? 4 : 8;
          const size_t n = length(w);
          Node s = mk((op == 0x8c || op == 'X' || op == 0x8d) ? Kind::Str : Kind::Bytes);
          s.s.assign(reinterpret_cast<const char*>(take(n)), n);
          push(add(std::move(s)));
          break;
        }
        case '}': push(add(mk(Kind::Dict))); break;   // EMPTY_DICT
        case ']': push(add(mk(Kind::List))); break;   // EMPTY_LIST
        case ')': push(add(mk(Kind::Tuple))); break;  // EMPTY_TUPLE
        case 'd': {                                     // DICT
          auto items = pop_mark(at);
          if (items.size() % 2) fail(at, "DICT with an odd number of items");
          push(container(Kind::Dict, items, at));
          break;
        }
        case 'l': push(container(Kind::List, pop_mark(at), at)); break;   // LIST
        case 't': push(container(Kind::Tuple, pop_mark(at), at)); break;  // TUPLE
        case 0x85: case 0x86: case 0x87: {                                 // TUPLE1/2/3
          const size_t n = op - 0x84u;
          std::vector<uint32_t> items(n);
          for (size_t k = n; k-- > 0;) items[k] = pop(at);
          push(container(Kind::Tuple, items, at));
          break;
        }
        case 'a': {  // APPEND
          uint32_t v = pop(at);
          uint32_t l = top(at);
          if (nodes_[l].kind != Kind::List) fail(at, "APPEND to something that is not a list");
          add_child(l, v, at);
          break;
        }
        case 'e': {  // APPENDS
          auto items = pop_mark(at);
          uint32_t l = top(at);
          if (nodes_[l].kind != Kind::List) fail(at, "APPENDS to something that is not a list");
          for (uint32_t v : items) add_child(l, v, at);
          break;
        }
        case 's': {  // SETITEM
          uint32_t v = pop(at), k = pop(at);
          uint32_t d = top(at);
          if (nodes_[d].kind != Kind::Dict) fail(at, "SETITEM on something that is not a dict");
          add_child(d, k, at);
          add_child(d, v, at);
          break;
        }
        case 'u': {  // SETITEMS
          auto items = pop_mark(at);
          if (items.size() % 2) fail(at, "SETITEMS with an odd number of items");
          uint32_t d = top(at);
          if (nodes_[d].kind != Kind::Dict) fail(at, "SETITEMS on something that is not a dict");
          for (uint32_t v : items) add_child(d, v, at);
          break;
        }
        case 0x94: memo_put(memo_.size(), at); break;  // MEMOIZE
        case 'q': memo_put(le(1), at); break;          // BINPUT
        case 'r': memo_put(le(4), at); break;          // LONG_BINPUT
        case 'h': memo_get(le(1), at); break;          // BINGET
        case 'j': memo_get(le(4), at); break;          // LONG_BINGET
        case 'c': {                                    // GLOBAL "module\nname\n"
          std::string module = line(at);
          std::string name = line(at);
          global(std::move(module), std::move(name), at);
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          uint32_t name = pop(at), module = pop(at);
          if (nodes_[name].kind != Kind::Str || nodes_[module].kind != Kind::Str) fail(at, "STACK_GLOBAL needs two strings");
          global(nodes_[module].s, nodes_[name].s, at);
          break;
        }
        case 'R': {  // REDUCE: only collections.OrderedDict() with no arguments
          uint32_t args = pop(at), fn = pop(at);
          if (nodes_[fn].kind != Kind::Global || nodes_[args].kind != Kind::Tuple || !nodes_[args].items.empty())
            fail(at, "REDUCE is only accepted as collections.OrderedDict()");
          push(add(mk(Kind::Dict)));
          break;
        }
        default:
          fail(at, fmt::format("unsupported pickle opcode 0x{:02x} ({}); a memory snapshot holds only plain data", op, opcode_name(op)));
      }
    }
  }

 private:
  static uint32_t le32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
  }

  std::string_view in_;
  std::string_view source_;
  const Limits& lim_;
  std::vector<Node>& nodes_;
  size_t pos_ = 0;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::vector<uint32_t> memo_;
};

}  // namespace

Document parse(std::string_view bytes, std::string_view source, const Limits& limits) {
  Document doc;
  doc.nodes_.reserve(std::min<size_t>(bytes.size() / 4 + 16, size_t{1} << 24));
  Reader r(bytes, source, limits, doc.nodes_);
  doc.root_ = r.run(doc.protocol_);
  return doc;
}

}  // namespace headroom::pickle
