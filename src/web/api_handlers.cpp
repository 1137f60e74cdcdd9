// The API endpoints as plain functions (no HTTP here): each request becomes the CLI's own
// argument list and goes through run_cli(), so the web answers are the CLI's by construction.
// Everything a request touches is local to the call: no state is shared between requests, and
// no file is opened outside the request's private folder.
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include <algorithm>
#include <filesystem>

#include "headroom/calibrate.h"
#include "headroom/cli.h"
#include "headroom/engine_traits.h"
#include "headroom/error.h"
#include "headroom/file_reach.h"
#include "headroom/version.h"
#include "model/hub_env.h"
#include "web/private_dir.h"
#include "web/web.h"

namespace headroom::web {

namespace {

bool has_verb(std::string_view verb) {
  for (const auto& v : verb_table())
    if (v.name == verb) return true;
  return false;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

// The CLI's one-line error ("headroom: source: field: problem") without the program prefix.
std::string error_line(std::string err) {
  while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
  constexpr std::string_view kPrefix = "headroom: ";
  if (err.rfind(kPrefix, 0) == 0) err.erase(0, kPrefix.size());
  return err.empty() ? std::string("no message") : err;
}

struct CliRun {
  int rc;
  std::string out, err;
};

CliRun run(const std::vector<std::string>& argv) {
  std::ostringstream out, err;
  int rc = run_cli(argv, out, err);
  return {rc, out.str(), err.str()};
}

Reply json_reply(int status, const nlohmann::ordered_json& j) {
  return {status, "application/json", j.dump(), {}};
}

// Maps a CLI run to HTTP: 0/1 -> 200 with the CLI's JSON (1 = the forecast says it fails,
// which is an answer, not an HTTP error), 2 -> 400, 3 and anything else -> 500.
Reply from_cli(const CliRun& r) {
  if (r.rc == kExitOk || r.rc == kExitFails) {
    if (nlohmann::json::accept(r.out)) {
      Reply rep{200, "application/json", r.out, {{"X-Headroom-Exit-Code", std::to_string(r.rc)}}};
      return rep;
    }
    return error_reply(500, "the CLI did not print JSON (exit code " + std::to_string(r.rc) + ")");
  }
  Reply rep = error_reply(r.rc == kExitBadInput ? 400 : 500, error_line(r.err));
  rep.headers.emplace_back("X-Headroom-Exit-Code", std::to_string(r.rc));
  return rep;
}

}  // namespace

Reply error_reply(int status, std::string_view message) {
  return json_reply(status, nlohmann::ordered_json{{"error", std::string(message)}});
}

Reply api_run(std::string_view verb, std::string_view body) {
  if (verb != "plan" && verb != "tune" && verb != "doctor" && verb != "diff") return error_reply(404, "no such endpoint");
  if (!has_verb(verb)) return error_reply(501, "this build of headroom has no '" + std::string(verb) + "' verb yet");
  ApiRequest req;
  try {
    req = parse_api_request(verb, body);
  } catch (const InputError& e) {
    return error_reply(400, e.what());
  }
  try {
    std::optional<PrivateDir> dir;
    std::vector<std::string> argv{std::string(verb)};
    if (req.log) {
      dir.emplace();
      argv.push_back(dir->write("crash.log", *req.log));
    }
    if (req.config) {
      if (!dir) dir.emplace();
      dir->write("config.json", *req.config);
      if (req.hf_quant_config) dir->write("hf_quant_config.json", *req.hf_quant_config);
      argv.push_back("--model");
      argv.push_back(dir->path());
    }
    if (req.host_state) {
      if (!dir) dir.emplace();
      argv.insert(argv.end(), {"--host-state", dir->write("host-state.csv", *req.host_state)});
    }
    if (req.host) {
      if (!dir) dir.emplace();
      argv.insert(argv.end(), {"--host", dir->write("host.yaml", *req.host)});
    }
    argv.insert(argv.end(), req.args.begin(), req.args.end());
    if (req.to) argv.insert(argv.end(), {"--to", *req.to});
    argv.push_back("--json");
    // A model named in the request is an id, never a server folder (the upload's folder excepted),
    // and the CLI opens no path but this request's own folder (file_reach.h): a model, draft model
    // or tokenizer path in the args or in the uploaded log's launch line is not the server's.
    hub::LocalPathsScope paths(req.config.has_value());
    FileReachScope reach(dir ? dir->path() : std::string());
    CliRun r = run(argv);
    if (dir) {
      // The private folder means nothing to the client: name the uploads as it sent them.
      replace_all(r.out, dir->path(), "upload");
      replace_all(r.err, dir->path(), "upload");
    }
    return from_cli(r);
  } catch (const std::exception& e) {
    return error_reply(500, std::string("internal error: ") + e.what());
  }
}

Reply api_gpus() { return from_cli(run({"gpus", "--json"})); }

Reply api_profiles() {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  std::error_code ec;
  std::string dir;
  try {
    dir = profile_dir();
  } catch (const InputError&) {
    return json_reply(200, nlohmann::ordered_json{{"profiles", list}});  // no HOME: no profiles
  }
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json" && names.size() < 256) names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    try {
      const HostProfile p = load_profile(n);
      list.push_back({{"name", n}, {"gpu", p.terms.gpu}, {"engine", p.terms.engine}, {"engine_version", p.engine_version}, {"logs", p.logs.size()}});
    } catch (const InputError& e) {
      list.push_back({{"name", n}, {"error", e.what()}});
    }
  }
  return json_reply(200, nlohmann::ordered_json{{"profiles", list}});
}

Reply api_models() {
  return json_reply(200, nlohmann::ordered_json{{"models", catalog_model_ids()}});
}

// Each engine as the page needs it (engine_traits.h): its names, launch command, the flags it
// accepts and its knobs, spelled as it spells them.
nlohmann::ordered_json engine_traits_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& t : engine_traits()) {
    nlohmann::ordered_json flags = nlohmann::ordered_json::array();
    for (auto f : t.flags()) flags.push_back(std::string(f));
    nlohmann::ordered_json e{{"name", t.name},         {"display", t.display},   {"launch", t.launch},
                             {"tp_flag", t.tp_flag},   {"context_flag", t.context_flag},
                             {"memory_flag", t.memory_flag}, {"version_example", t.version_example}, {"flags", flags}};
    if (!t.memory_flag.empty()) e["memory_range"] = {t.memory_lo, t.memory_hi};
    out.push_back(std::move(e));
  }
  return out;
}

Reply api_meta() {
  nlohmann::ordered_json verbs = nlohmann::ordered_json::array();
  for (const auto& v : verb_table()) verbs.push_back(std::string(v.name));
  nlohmann::ordered_json engines = nlohmann::ordered_json::array();
  for (const auto& t : engine_traits()) engines.push_back(std::string(t.name));
  return json_reply(200, nlohmann::ordered_json{
                             {"name", "headroom"},
                             {"version", kVersion},
                             {"verbs", verbs},
                             {"engines", engines},
                             {"engine_traits", engine_traits_json()},
                             {"limits", {{"body_bytes", kMaxBodyBytes}, {"args", kMaxArgs}, {"arg_chars", kMaxArgChars}}}});
}

}  // namespace headroom::web
