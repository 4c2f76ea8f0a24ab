# Unity builds (docs/build.md, "Build time"): each big target (core, the CLI, the app, its headless
# library, the test programs) compiles its .cpp files in batches, one compiler run per batch, so Eigen,
# GoogleTest and the templates they instantiate are parsed and compiled once per batch instead of once
# per file. With the precompiled headers (cmake/pch.cmake) on or off.
#
# OFF by default: a developer with ccache rebuilds only the files an edit touches, which a batch would
# undo. scripts/setup.sh (CI's main build, from a fresh clone without ccache) turns it on; only the test
# programs call stepformer_unity() so far. Each file's helpers live in a namespace of the file's own (or an
# anonymous one with names no other file of the target uses), so any batch of files compiles together.
option(STEPFORMER_UNITY "Unity builds of core, the CLI, the app and the tests (CI; OFF keeps per-file builds)" OFF)
set(STEPFORMER_UNITY_BATCH 16 CACHE STRING "Source files per unity batch (STEPFORMER_UNITY)")

# stepformer_unity(TARGET): TARGET is compiled in batches of STEPFORMER_UNITY_BATCH files, when STEPFORMER_UNITY is ON.
function(stepformer_unity target)
  if(STEPFORMER_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${STEPFORMER_UNITY_BATCH})
  endif()
endfunction()
