// `headroom serve [--host 127.0.0.1] [--port 8080]`: the local web page and its JSON API
// (src/web/), bound to loopback unless told otherwise. --port 0 picks a free port.
#include <ostream>

#include "cli/verbs.h"
#include "headroom/error.h"
#include "web/web.h"

namespace headroom {

int verb_serve(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.has("--help")) {
    out << "usage: headroom serve [--host 127.0.0.1] [--port 8080] [--allow-host NAME ...] [--offline]\n\n"
           "Serves the web page (plan, tune, doctor in a browser) and its JSON API:\n"
           "  GET  /                the page\n"
           "  POST /api/plan        {\"args\": [CLI arguments]}           -> the JSON of 'headroom plan --json'\n"
           "  POST /api/tune        {\"args\": [...]}                     -> 'headroom tune --json'\n"
           "  POST /api/doctor      {\"args\": [...], \"log\": \"<text>\"}  -> 'headroom doctor --json'\n"
           "  GET  /api/gpus, /api/models, /api/meta\n"
           "Bodies may also carry \"config\" (config.json text) instead of a catalog --model.\n"
           "--port 0 picks a free port; the address is printed on the first line.\n"
           "Requests must be addressed (Host) to localhost, 127.0.0.1 or [::1], with or without the port,\n"
           "or to a name given with --allow-host (repeatable); anything else gets 403, and so does a POST\n"
           "whose Origin is another site. Requests name catalog models, Hub ids or send config text: the server\n"
           "opens no path a request names.\n"
           "--offline (or HF_HUB_OFFLINE=1): models are answered from the caches and the catalog, never the Hub.\n";
    return kExitOk;
  }
  args.reject_unknown({"--host", "--port", "--allow-host"}, "serve");
  if (!args.positionals().empty()) fail_input("command line", args.positionals().front(), "unexpected argument for 'headroom serve'");
  web::ServerOptions opt;
  opt.host = args.get_or("--host", "127.0.0.1");
  opt.port = static_cast<int>(args.get_int("--port", 0, 65535).value_or(8080));
  for (const auto& name : args.get_all("--allow-host")) {
    if (name.empty() || name.find_first_of(" /\\@?#") != std::string::npos)
      fail_input("command line", "--allow-host", "'" + name + "' is not a host name");
    opt.allow_hosts.push_back(name);
  }
  if (!web::is_loopback_host(opt.host))
    err << "headroom serve: warning: listening on " << opt.host
        << ", not loopback: anyone who can reach this address can use the server\n";
  web::HttpServer server(opt);
  int port = server.bind();
  const bool v6 = opt.host.find(':') != std::string::npos;
  out << "headroom serve: listening on http://" << (v6 ? "[" : "") << opt.host << (v6 ? "]" : "") << ":" << port
      << "/ (Ctrl-C to stop)" << std::endl;
  server.serve();
  return kExitOk;
}

}  // namespace headroom
