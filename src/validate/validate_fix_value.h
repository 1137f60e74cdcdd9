// doctor_fix_value (validate): is the value of the doctor's first fix within the range the thread's
// resolution shows? The range runs from the value that failed to the value that worked (inclusive),
// plus a small tolerance beyond the working value (the smallest change that works, give or take the
// margin a fix may add). Tolerances, per knob kind, in kFixValueKnobs (validate_fix_value.cpp).
#pragma once
#include <optional>
#include <string>

namespace headroom {

struct FixValueVerdict {
  bool agree = false;
  double low = 0, high = 0;  // the accepted interval
  std::string why;           // one line: the interval and how it was formed
};

// `failed`: the flag's value in the run that failed ("" when the case does not say); `working`: the
// thread's value; `ours`: the doctor's. nullopt when the values are not comparable (a value that is
// not a number on either side is compared as text: equal agrees).
std::optional<FixValueVerdict> judge_fix_value(const std::string& flag, const std::string& ours, const std::string& failed,
                                               const std::string& working);

}  // namespace headroom
