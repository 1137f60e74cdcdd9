// The llama.cpp build released on a date (build_dates.cpp), for versions given as a date.
#pragma once

namespace headroom::llamacpp {

// The build released on yyyymmdd (interpolated between known release dates); 0 (the newest rules)
// after the last one known.
int build_for_date(int ymd);

}  // namespace headroom::llamacpp
