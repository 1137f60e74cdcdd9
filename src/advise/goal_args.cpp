// The command-line options of tune and fit that are not deployment options: the goal
// (--target-context, --target-concurrency, --keep-free, --margin, --fix), read here, and the
// argument list without them, which parse_deployment() then reads.
#include "headroom/advise.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom {

TuneGoal parse_tune_goal(const Args& args) {
  TuneGoal g;
  g.target_context = args.get_int("--target-context", 1, int64_t{1} << 31);
  g.target_concurrency = args.get_int("--target-concurrency", 1, int64_t{1} << 24);
  if (auto v = args.get("--keep-free")) g.keep_free_bytes = parse_bytes(*v, "command line", "--keep-free");
  if (auto v = args.get("--margin")) g.margin_bytes = parse_bytes(*v, "command line", "--margin");
  for (std::string f : args.get_all("--fix")) {
    if (f.empty() || f == "-" || f == "--") fail_input("command line", "--fix", "expects an engine flag, e.g. --fix cuda-graph-max-bs");
    if (f[0] != '-') f = "--" + f;
    g.fixed.push_back(f);
  }
  return g;
}

Args strip_options(const Args& args, std::initializer_list<std::string_view> drop) {
  std::vector<std::string> argv;
  for (const auto& [k, v] : args.options()) {
    bool skip = false;
    for (auto d : kGoalOptions) skip = skip || k == d;
    for (auto d : drop) skip = skip || k == d;
    if (!skip) argv.push_back(k + "=" + v);
  }
  for (const auto& p : args.positionals()) argv.push_back(p);
  return Args::parse(argv);
}

}  // namespace headroom
