// The GPU tab's table: every MHAttention call of the last traced Forward run (its line, layer,
// kind, max |Ṽ_gpu − Ṽ_cpu| and clocks), each a tree node that opens on its dispatches.
#pragma once
#include "app/app.hpp"

namespace sf {

// Clicking a call's name puts the cursor on it (its Algorithm 5 in the stepper); its row is
// highlighted while the cursor is inside it.
void draw_gpu_calls_table(App& app);

}  // namespace sf
