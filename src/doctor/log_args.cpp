// Server arguments and versions in a log: SGLang's `server_args=ServerArgs(...)` dump, vLLM's
// "non-default args: {...}", "args: Namespace(...)" and "Initializing a V1 LLM engine (vX) with
// config: ..." lines, and launch command lines (sglang.launch_server, sglang serve, vllm serve,
// vllm.entrypoints.openai.api_server, trtllm-serve), turned into flags spelled as the engine
// spells them on its command line.
#include <algorithm>
#include <cctype>

#include "doctor/log_parse.h"
#include "headroom/cli.h"
#include "headroom/error.h"

namespace headroom::logscan_detail {

std::vector<std::string> shell_split(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  bool have = false;
  for (size_t i = 0; i < s.size() && out.size() < 512; ++i) {
    char ch = s[i];
    if (ch == ' ' || ch == '\t') {
      if (have) out.push_back(std::move(cur));
      cur.clear();
      have = false;
    } else if (ch == '\'' || ch == '"') {
      size_t e = s.find(ch, i + 1);
      if (e == std::string_view::npos) e = s.size();
      cur.append(s.substr(i + 1, e - i - 1));
      have = true;
      i = e;
    } else if (ch == '\\' && i + 1 < s.size()) {
      cur.push_back(s[++i]);
      have = true;
    } else {
      cur.push_back(ch);
      have = true;
    }
  }
  if (have) out.push_back(std::move(cur));
  return out;
}

namespace {

// A Python literal dict / list as the logs print them ({'image': 0, 'x': True}) as JSON, the form
// the engines' JSON-valued flags take on the command line: quotes become double quotes, True /
// False / None become true / false / null outside strings.
std::string py_literal_to_json(std::string_view v) {
  std::string out;
  char in = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const char ch = v[i];
    if (in) {
      if (ch == '\\' && i + 1 < v.size()) {
        out += ch;
        out += v[++i];
      } else if (ch == in) {
        out += '"';
        in = 0;
      } else if (ch == '"') {
        out += "\\\"";
      } else {
        out += ch;
      }
      continue;
    }
    if (ch == '\'' || ch == '"') {
      in = ch;
      out += '"';
      continue;
    }
    auto word = [&](std::string_view w) { return v.substr(i, w.size()) == w && (i + w.size() == v.size() || !std::isalnum(static_cast<unsigned char>(v[i + w.size()]))); };
    if (word("True")) { out += "true"; i += 3; }
    else if (word("False")) { out += "false"; i += 4; }
    else if (word("None")) { out += "null"; i += 3; }
    else out += ch;
  }
  return out;
}

// Python repr value → flag value. nullopt = None (dropped).
std::optional<std::string> normalise(std::string_view v) {
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v == "None") return std::nullopt;
  if (v == "True") return std::string("true");
  if (v == "False") return std::string("false");
  if (!v.empty() && (v.front() == '{' || v.front() == '[')) return py_literal_to_json(v);
  if (v.size() > 6 && v.substr(0, 6) == "torch.") {
    bool ident = std::all_of(v.begin() + 6, v.end(), [](char ch) { return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); });
    if (ident) return std::string(v.substr(6));
  }
  return std::string(v);
}

std::string flag_name(std::string_view key) {
  std::string f = "--";
  for (char ch : key) f.push_back(ch == '_' ? '-' : ch);
  return f;
}

// SGLang and vLLM accept several spellings; the canonical ones are those the corpus and CONTRACT use.
std::string canonical(LogEngine e, std::string f) {
  if (e == LogEngine::SGLang) {
    if (f == "--tp" || f == "--tensor-parallel-size") return "--tp-size";
    if (f == "--dp" || f == "--data-parallel-size") return "--dp-size";
    if (f == "--ep" || f == "--expert-parallel-size") return "--ep-size";
    if (f == "--pp" || f == "--pipeline-parallel-size") return "--pp-size";
    if (f == "--model") return "--model-path";
  } else if (e == LogEngine::VLLM) {
    if (f == "-tp") return "--tensor-parallel-size";
    if (f == "-pp") return "--pipeline-parallel-size";
    if (f == "-dp") return "--data-parallel-size";
    if (f == "-q") return "--quantization";
    if (f == "--max-seq-len") return "--max-model-len";
  }
  return f;
}

void add_set(Ctx& c, LogArgSet set) {
  if (set.flags.empty() || c.scan.arg_sets.size() >= 16) return;
  c.scan.arg_sets.push_back(std::move(set));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> parse_py_kwargs(std::string_view s, bool dict) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  auto spaces = [&] { while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i; };
  while (i < s.size() && out.size() < 2000) {
    spaces();
    if (i >= s.size() || s[i] == ')' || s[i] == '}') break;
    // key
    std::string key;
    if (dict) {
      if (s[i] != '\'' && s[i] != '"') break;
      char q = s[i];
      size_t e = s.find(q, i + 1);
      if (e == std::string_view::npos) break;
      key = std::string(s.substr(i + 1, e - i - 1));
      i = e + 1;
      spaces();
      if (i >= s.size() || s[i] != ':') break;
      ++i;
    } else {
      size_t e = i;
      while (e < s.size() && (s[e] == '_' || (s[e] >= 'a' && s[e] <= 'z') || (s[e] >= 'A' && s[e] <= 'Z') || (s[e] >= '0' && s[e] <= '9'))) ++e;
      if (e == i || e >= s.size() || s[e] != '=') break;
      key = std::string(s.substr(i, e - i));
      i = e + 1;
    }
    spaces();
    // value
    std::string value;
    bool quoted = false, complete = false;
    if (i < s.size() && (s[i] == '\'' || s[i] == '"')) {
      char q = s[i++];
      quoted = true;
      while (i < s.size() && s[i] != q) {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        value.push_back(s[i++]);
      }
      complete = i < s.size();
      if (complete) ++i;
    } else {
      int depth = 0;
      char in_quote = 0;
      size_t start = i;
      for (; i < s.size(); ++i) {
        char ch = s[i];
        if (in_quote) {
          if (ch == '\\') ++i;
          else if (ch == in_quote) in_quote = 0;
          continue;
        }
        if (ch == '\'' || ch == '"') in_quote = ch;
        else if (ch == '(' || ch == '[' || ch == '{') ++depth;
        else if (ch == ')' || ch == ']' || ch == '}') {
          if (depth == 0) break;
          --depth;
        } else if (ch == ',' && depth == 0) break;
      }
      complete = i < s.size() && depth == 0;
      value = std::string(s.substr(start, i - start));
    }
    if (!complete && !quoted) break;  // a value cut by the end of a truncated line
    if (!complete) break;
    if (quoted) out.emplace_back(std::move(key), std::move(value));
    else if (auto v = normalise(value)) out.emplace_back(std::move(key), std::move(*v));
    spaces();
    if (i < s.size() && s[i] == ',') ++i;
  }
  return out;
}

// Where a llama.cpp launch starts ("/models/llama.cpp/llama-server -m F ..."): the start of the
// program's path; npos when the mention is not a command (no flag follows it).
size_t llama_program_start(std::string_view b, LogEngine& eng) {
  size_t at = std::string_view::npos;
  for (std::string_view p : {"llama-server", "llama-cli", "ollama runner", "ollama_llama_server"})
    if (size_t f = ifind(b, p); f < at) at = f;
  if (at == std::string_view::npos || b.find(" -", at) == std::string_view::npos) return std::string_view::npos;
  while (at > 0 && b[at - 1] != ' ' && b[at - 1] != '`' && b[at - 1] != '"' && b[at - 1] != '=' && b[at - 1] != '$') --at;
  eng = LogEngine::LlamaCpp;
  return at;
}

// llama-server / llama-cli / Ollama's runner words -> flags in llama-server's long spellings
// (cli/args.cpp reads the short ones: -ngl, -c, -ctk, ...); -m and -hf as --model / --hf-repo.
std::vector<std::pair<std::string, std::string>> llama_command_flags(const std::vector<std::string>& tok) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  while (i < tok.size() && tok[i].find("llama-") == std::string::npos && tok[i].find("ollama") == std::string::npos) ++i;
  if (i < tok.size() && tok[i].find("ollama") != std::string::npos && i + 1 < tok.size() && tok[i + 1] == "runner") ++i;
  auto is_flag = [](const std::string& t) { return t.size() >= 2 && t[0] == '-' && !(t[1] >= '0' && t[1] <= '9'); };
  for (++i; i < tok.size() && out.size() < 256; ++i) {
    std::string t = tok[i];
    while (!t.empty() && (t.back() == '`' || t.back() == '"')) t.pop_back();  // a command quoted in Markdown
    if (t == "&&" || t == "|" || t == "&" || t == ";" || t == ">" || t == "2>&1") break;
    if (!is_flag(t)) continue;
    std::string value;
    if (auto eq = t.find('='); eq != std::string::npos) {
      value = t.substr(eq + 1);
      t.resize(eq);
    }
    std::string name = t == "-m" ? "--model" : t == "-hf" || t == "-hfr" ? "--hf-repo" : t;
    if (name[1] != '-') {
      try {
        const Args one = Args::parse({name, "x"});
        if (!one.options().empty()) name = one.options().front().first;
      } catch (const InputError&) {
      }
    }
    if (value.empty()) {
      std::string next = i + 1 < tok.size() ? tok[i + 1] : std::string();
      while (!next.empty() && (next.back() == '`' || next.back() == '"')) next.pop_back();
      const bool optional = name == "--flash-attn" && next != "on" && next != "off" && next != "auto";
      if (is_boolean_flag(name) || optional || next.empty() || is_flag(next)) value = "true";
      else {
        value = next;
        ++i;
      }
    }
    out.emplace_back(name, value);
  }
  return out;
}

void finish_command(Ctx& c) {
  c.cmd_open = false;
  std::vector<std::string> tok = shell_split(c.cmd_text);
  c.cmd_text.clear();
  std::vector<std::string> env = std::move(c.cmd_env);
  c.cmd_env.clear();
  if (tok.empty()) return;
  LogArgSet set;
  set.source = "command";
  set.engine = c.cmd_engine;
  set.line = c.cmd_line;
  if (set.engine == LogEngine::LlamaCpp) {
    set.flags = llama_command_flags(tok);
    for (const auto& e : env) set.flags.emplace_back("--env:" + e.substr(0, e.find('=')), e.substr(e.find('=') + 1));
    add_set(c, std::move(set));
    return;
  }
  // tokens after the program: "sglang.launch_server", "serve", "vllm.entrypoints.openai.api_server", "trtllm-serve"
  size_t i = 0;
  for (; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    if (t.find("sglang.launch_server") != std::string::npos || t.find("api_server") != std::string::npos ||
        t == "trtllm-serve" || (t == "serve" && i > 0)) {
      ++i;
      break;
    }
  }
  bool positional_model = set.engine == LogEngine::VLLM || set.engine == LogEngine::TRTLLM ||
                          (i >= 1 && tok[i - 1] == "serve");
  for (; i < tok.size(); ++i) {
    std::string t = tok[i];
    if (t.size() >= 2 && t[0] == '-' && !(t[1] >= '0' && t[1] <= '9')) {
      std::string value = "true";
      if (auto eq = t.find('='); eq != std::string::npos && t.substr(0, 2) == "--") {
        value = t.substr(eq + 1);
        t.resize(eq);
      } else if (i + 1 < tok.size() && !(tok[i + 1].size() >= 2 && tok[i + 1][0] == '-' && !(tok[i + 1][1] >= '0' && tok[i + 1][1] <= '9')) &&
                 !(tok[i + 1] == "&&" || tok[i + 1] == "|" || tok[i + 1] == "&")) {
        value = tok[++i];
      }
      set.flags.emplace_back(canonical(set.engine, t), value);
    } else if (t == "&&" || t == "|" || t == "&" || t == ";" || t == ">" || t == "2>&1") {
      break;
    } else if (positional_model && set.flags.empty()) {
      set.flags.emplace_back(set.engine == LogEngine::SGLang ? "--model-path" : "--model", t);
    }
  }
  // One key per variable ("--env:NAME") so several survive the flag map; diagnose() turns them
  // back into --env NAME=VALUE.
  for (const auto& e : env) set.flags.emplace_back("--env:" + e.substr(0, e.find('=')), e.substr(e.find('=') + 1));
  add_set(c, std::move(set));
}

bool continue_command(Ctx& c, const Line& l) {
  // The message, not the raw line: a compose "name-1  | " or docker timestamp prefix on a
  // wrapped command line must not end the command.
  std::string_view t = l.body;
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  bool backslash = !c.cmd_text.empty() && c.cmd_text.back() == '\\';
  bool flag_line = t.size() >= 2 && t[0] == '-' && t.find("-->") == std::string_view::npos;
  if ((backslash || flag_line) && c.cmd_text.size() < 16384) {
    if (backslash) c.cmd_text.pop_back();
    c.cmd_text += ' ';
    c.cmd_text.append(t.substr(0, 4096));
    return true;
  }
  finish_command(c);
  return false;
}

void read_args(Ctx& c, const Line& l) {
  const auto& k = l.kw;
  std::string_view b = l.body;

  if (k[kServerArgs]) {
    if (auto a = after(b, "ServerArgs(")) {
      LogArgSet set{"sglang_server_args", LogEngine::SGLang, l.no, {}};
      for (auto& [key, v] : parse_py_kwargs(*a, false)) set.flags.emplace_back(flag_name(key), std::move(v));
      add_set(c, std::move(set));
      c.keep(l, "sglang.server_args");
      c.score_sglang += 5;
    }
  }
  if (k[kVNonDefault]) {
    if (auto a = after(b, "non-default args:")) {
      std::string_view s = *a;
      skip_spaces(s);
      if (!s.empty() && s.front() == '{') {
        LogArgSet set{"vllm_non_default", LogEngine::VLLM, l.no, {}};
        for (auto& [key, v] : parse_py_kwargs(s.substr(1), true))
          set.flags.emplace_back(canonical(LogEngine::VLLM, flag_name(key)), std::move(v));
        add_set(c, std::move(set));
        c.keep(l, "vllm.non_default_args");
        c.score_vllm += 5;
      }
    }
  }
  if (k[kVNamespace]) {
    if (auto a = after(b, "args: Namespace(")) {
      LogArgSet set{"vllm_namespace", LogEngine::VLLM, l.no, {}};
      for (auto& [key, v] : parse_py_kwargs(*a, false))
        set.flags.emplace_back(canonical(LogEngine::VLLM, flag_name(key)), std::move(v));
      add_set(c, std::move(set));
      c.keep(l, "vllm.args_namespace");
      c.score_vllm += 3;
    }
  }
  if (k[kVWithConfig]) {
    // "Initializing a V1 LLM engine (v0.10.1.1) with config: model='...', ..."
    if (auto a = after(b, "engine (v")) {
      std::string_view v = *a;
      size_t e = v.find(')');
      if (e != std::string_view::npos && e < 80) c.version(v.substr(0, e), l.no);
      if (auto cfg = after(b, "with config:")) {
        LogArgSet set{"vllm_engine_config", LogEngine::VLLM, l.no, {}};
        for (auto& [key, val] : parse_py_kwargs(*cfg, false)) {
          std::string f = key == "max_seq_len" ? "--max-model-len" : flag_name(key);
          set.flags.emplace_back(std::move(f), std::move(val));
        }
        add_set(c, std::move(set));
        c.keep(l, "vllm.engine_config");
        c.score_vllm += 5;
      }
    }
  }
  if (k[kVApiVersion]) {
    if (auto a = after(b, "vllm api server version")) {
      std::string_view v = *a;
      skip_spaces(v);
      v = v.substr(0, v.find_first_of(" \t,"));
      c.version(v, l.no);
      c.keep(l, "vllm.version");
      c.score_vllm += 3;
    }
  } else if (k[kVersionWord]) {
    // "vLLM version: 0.10.1.1", "sglang version: 0.5.3" (collect_env / check_env output)
    for (auto [name, eng] : {std::pair<std::string_view, LogEngine>{"vllm version", LogEngine::VLLM},
                             {"sglang version", LogEngine::SGLang}}) {
      if (auto a = after(b, name)) {
        std::string_view v = *a;
        while (!v.empty() && (v.front() == ':' || v.front() == ' ' || v.front() == '=')) v.remove_prefix(1);
        v = v.substr(0, v.find_first_of(" \t,"));
        if (!v.empty() && v.front() >= '0' && v.front() <= '9') {
          c.version(v, l.no);
          c.keep(l, "version");
          if (eng == LogEngine::VLLM) c.score_vllm += 3;
          else c.score_sglang += 3;
        }
      }
    }
  }
  // launch commands
  if ((k[kLaunchServer] || k[kSglangServe] || k[kVllmServe] || k[kApiServerModule] || k[kTrtllmServe] || k[kLLaunch]) &&
      !icontains(b, "usage:") && !k[kFrame]) {
    if (c.cmd_open) finish_command(c);
    size_t start = std::string_view::npos;
    LogEngine eng = LogEngine::Unknown;
    // Start at the interpreter if there is one ("python3 -m sglang.launch_server ..."), else the program.
    if (k[kLaunchServer]) { start = ifind(b, "sglang.launch_server"); eng = LogEngine::SGLang; }
    else if (k[kSglangServe]) { start = ifind(b, "sglang serve "); eng = LogEngine::SGLang; }
    else if (k[kVllmServe]) { start = ifind(b, "vllm serve "); eng = LogEngine::VLLM; }
    else if (k[kApiServerModule]) { start = ifind(b, "vllm.entrypoints.openai.api_server"); eng = LogEngine::VLLM; }
    else if (k[kTrtllmServe]) { start = ifind(b, "trtllm-serve "); eng = LogEngine::TRTLLM; }
    else start = llama_program_start(b, eng);
    if (start != std::string_view::npos) {
      c.cmd_text = std::string(b.substr(start, 16384));
      // Environment set for the command the way a shell does: NAME=VALUE words right before the
      // program (after any prompt or "python3 -m"); passed on as --env NAME=VALUE.
      c.cmd_env.clear();
      for (const std::string& w : shell_split(std::string(b.substr(0, start)))) {
        auto eq = w.find('=');
        if (eq == std::string::npos || eq == 0 || !(w[0] >= 'A' && w[0] <= 'Z')) continue;
        if (std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(eq),
                        [](char ch) { return (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'; }))
          c.cmd_env.push_back(w);
      }
      c.cmd_line = l.no;
      c.cmd_engine = eng;
      c.cmd_open = true;
      c.keep(l, "command");
    }
  }
}

}  // namespace headroom::logscan_detail
