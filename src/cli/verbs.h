// Entry points of the verbs (each in its own verb_*.cpp); the table is in verb_table.cpp.
#pragma once
#include <iosfwd>

#include "headroom/cli.h"

namespace headroom {

int verb_gpus(const Args& args, std::ostream& out, std::ostream& err);
int verb_plan(const Args& args, std::ostream& out, std::ostream& err);
int verb_validate(const Args& args, std::ostream& out, std::ostream& err);
int verb_doctor(const Args& args, std::ostream& out, std::ostream& err);
int verb_serve(const Args& args, std::ostream& out, std::ostream& err);
int verb_replay(const Args& args, std::ostream& out, std::ostream& err);
int verb_compare(const Args& args, std::ostream& out, std::ostream& err);
int verb_diff(const Args& args, std::ostream& out, std::ostream& err);
int verb_rules(const Args& args, std::ostream& out, std::ostream& err);
int verb_model(const Args& args, std::ostream& out, std::ostream& err);
int verb_tune(const Args& args, std::ostream& out, std::ostream& err);
int verb_fit(const Args& args, std::ostream& out, std::ostream& err);
int verb_calibrate(const Args& args, std::ostream& out, std::ostream& err);

}  // namespace headroom
