# Precompiled headers (docs/build.md, "Build time"): the large external headers that nearly every file of
# a target parses (Eigen, the standard library, nlohmann/json, GoogleTest, Dear ImGui) are compiled once
# per target instead of once per file. Only external headers: a change to the project's own headers
# never rebuilds a precompiled header.
#
# ON by default, except when a compiler launcher is set (ccache): ccache does not cache a compile that
# reads a precompiled header unless it is told to be sloppy about it, and with ccache each file is cached
# anyway. CI builds from a fresh clone without ccache, so CI gets them.
if(CMAKE_CXX_COMPILER_LAUNCHER)
  set(STEPFORMER_PCH_DEFAULT OFF)
else()
  set(STEPFORMER_PCH_DEFAULT ON)
endif()
option(STEPFORMER_PCH "Precompiled headers for core, the CLI, the app and the tests" ${STEPFORMER_PCH_DEFAULT})

# What every Eigen-using target precompiles: Eigen and the standard headers core's files include most.
set(STEPFORMER_PCH_HEADERS <Eigen/Core> <algorithm> <cmath> <cstdint> <functional> <map> <memory> <optional>
                           <set> <string> <utility> <vector>)

# stepformer_precompile(TARGET [HEADER...]): TARGET precompiles the common headers and the HEADERs given
# (e.g. <gtest/gtest.h> for a test program), when STEPFORMER_PCH is ON.
function(stepformer_precompile target)
  if(STEPFORMER_PCH)
    target_precompile_headers(${target} PRIVATE ${STEPFORMER_PCH_HEADERS} ${ARGN})
  endif()
endfunction()
