#!/usr/bin/env bash
# Tells apart the hypotheses of docs/gpu.md ("Why the teaching form was wrong on an NVIDIA H200") on a machine
# with the GPU, in one go: builds gpu_tests and runs the teaching form's stage-by-stage test (GpuDiagnose, with
# ℓ = 1024) and the two tests that failed on the H200 in session 16, with four shader folders:
#   1. shaders/ as committed (softmax_columns.comp's reduction unrolled in session 17: barrier() outside loops);
#   2. the same with session 16's softmax_columns.comp (barrier() inside the reduction loops);
#   3. the same with scripts/gpu_diagnose/softmax_columns_serial.comp (one invocation a column, no shared memory);
#   4. the same with the serial softmax AND session 16's other shaders (shaders/ at 719e3e6).
# Each run prints, per shape, timed (glFinish around every dispatch) and untimed, every stage's largest
# |GPU − core| over the heads (Q, K, V, S, masked S, A, Ṽ^h) and the heads where a stage is wrong.
# Usage: scripts/gpu_diagnose.sh [BUILD_DIR] 2>&1 | tee gpu-diagnose.txt   (STEPFORMER_GPU_DIAGNOSE=0: without ℓ = 1024,
# for llvmpipe, where this takes about a minute)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
OLD=719e3e6  # the commit whose shaders the H200 ran in session 16
make -C "$BUILD" -j"$(nproc)" gpu_tests > /dev/null || { echo "gpu_tests did not build" >&2; exit 1; }
TESTS="$BUILD/tests/gpu/gpu_tests"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

folder() {  # folder NAME: a copy of shaders/ in $WORK/NAME
  mkdir -p "$WORK/$1" && cp "$ROOT"/shaders/*.comp "$WORK/$1/"
  echo "$WORK/$1"
}
run() {  # run TITLE FOLDER
  echo "== $1 ($2)"
  STEPFORMER_GPU_DIAGNOSE=${STEPFORMER_GPU_DIAGNOSE:-1} STEPFORMER_SHADERS="$2" "$TESTS" \
    --gtest_filter='GpuDiagnose.*:GpuRelativeBias.BothFormsMatchCoreWithBBitForBit:MHAttention.CrossAttentionWithExplicitMask' \
    2>&1 | grep -E '^\[diagnose\]|^\[device\]|Failure|actual|head [0-9]|^\[  (FAILED|PASSED|  OK) '
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
"$TESTS" --gtest_filter='GpuRuntime.ReportsAnOpenGL43Device' 2>&1 | grep '^\[device\]'
run "1. shaders/ as committed" "$ROOT/shaders"
D=$(folder s16_softmax) && git -C "$ROOT" show "$OLD:shaders/softmax_columns.comp" > "$D/softmax_columns.comp"
run "2. session 16's softmax_columns.comp" "$D"
D=$(folder serial_softmax) && cp "$ROOT/scripts/gpu_diagnose/softmax_columns_serial.comp" "$D/softmax_columns.comp"
run "3. serial softmax (no shared memory, no barrier)" "$D"
D=$(folder s16_all_serial_softmax)
for f in scores mask apply_values; do git -C "$ROOT" show "$OLD:shaders/$f.comp" > "$D/$f.comp"; done
cp "$ROOT/scripts/gpu_diagnose/softmax_columns_serial.comp" "$D/softmax_columns.comp"
run "4. session 16's scores, mask, apply_values with the serial softmax" "$D"
cat <<'TXT'
Reading it (docs/gpu.md):
- timed right and untimed wrong: a race between dispatches (H1);
- S or masked S already wrong: scores.comp or mask.comp (H3, H5); only A wrong: softmax_columns.comp (H2);
  only Ṽ^h wrong: apply_values.comp (H5);
- 1 right and 2 wrong: barrier() inside loops was the cause (H2), fixed by the unrolled reduction;
- 1 and 2 wrong, 3 right: the softmax's shared-memory reduction itself (H2');
- 3 wrong too: not the softmax's reduction; see which stage the lines name.
TXT
