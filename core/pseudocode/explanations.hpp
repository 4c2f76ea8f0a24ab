// Plain-words explanations of every pseudocode line, for the app's tooltips.
#pragma once

namespace sf {
// The explanation of line `line` of algorithm `alg`, or "" when there is none.
const char* explain_line(int alg, int line);
}  // namespace sf
