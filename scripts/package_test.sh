#!/usr/bin/env bash
# The package's CI test (docs/packaging.md): builds the .deb (scripts/package.sh), checks it with lintian
# (any E: fails), installs it with apt, runs the installed programs from a folder outside the repository
# (stepformer-cli --version and demo; the app under Xvfb with a screenshot that must not be blank, and
# the bundled BERT example and a lesson opened from the installed data), checks that the man pages list
# every option, then removes the package and checks that its files are gone.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
start=$(date +%s)

PACKAGES=(lintian xvfb xauth python3-pil)   # lintian; the app's run; the screenshot's colour count
# shellcheck source=scripts/install_missing.sh
source scripts/install_missing.sh
install_missing package_test "${PACKAGES[@]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

fail() {
  echo "package_test: FAILED: $*"
  exit 1
}

mkdir -p build-pkg
bash scripts/package.sh | tee build-pkg/package.out
deb=$(tail -n 1 build-pkg/package.out)
built=$(date +%s)

# lintian: errors fail; warnings are printed (docs/packaging.md lists those left and why).
lintian --fail-on error --tag-display-limit 0 "$deb" | tee build-pkg/lintian.log || fail "lintian reported errors"

# Install; from here on the package is removed however the test ends.
installed=0
remove() { if ((installed)); then $sudo apt-get remove -y -qq stepformer > /dev/null; fi; }
trap remove EXIT
# --reinstall: a package of the same version left installed (by hand, or a run cut short) is replaced.
DEBIAN_FRONTEND=noninteractive $sudo apt-get install --reinstall -y -qq "$deb" > build-pkg/apt-install.log 2>&1 ||
  { cat build-pkg/apt-install.log; fail "apt-get install $deb"; }
installed=1

# Run from a fresh folder outside the repository, with no data folder given: the programs must find
# their data from the installed prefix (/usr/bin → /usr/share/stepformer), not from the build tree.
run=$(mktemp -d)
cd "$run"
unset STEPFORMER_DATA_DIR STEPFORMER_SHADERS
/usr/bin/stepformer-cli --version | tee version.txt
grep -qx "data: /usr/share/stepformer (from the installed prefix)" version.txt ||
  fail "stepformer-cli --version does not read its data from /usr/share/stepformer"
if [ -z "${STEPFORMER_PACKAGE_BUILD:-}" ]; then
  grep -qx "instruction set: -march=x86-64-v2" version.txt || fail "the package is not the portable x86-64-v2 build"
fi

/usr/bin/stepformer-cli demo > demo.txt || fail "stepformer-cli demo exited with status $?"
grep -q "^model: /usr/share/stepformer/assets/default.safetensors" demo.txt ||
  fail "stepformer-cli demo did not load the installed default model: $(head -n 5 demo.txt)"
grep -q "^Algorithm 14, y ← DInference" demo.txt || fail "stepformer-cli demo printed no sampled continuation"
echo "package_test: stepformer-cli demo ran on /usr/share/stepformer/assets/default.safetensors"
# The bundled draft model (Algorithm 14-S, speculative decoding) is installed beside the default one.
assets=/usr/share/stepformer/assets
/usr/bin/stepformer-cli sample --model $assets/default.safetensors --draft $assets/draft.safetensors --speculate 4 \
  --prompt "dcab=" --tau 0 --gen 5 > speculate.txt || fail "stepformer-cli sample --draft exited with status $?"
grep -q "^target passes: " speculate.txt || fail "stepformer-cli sample --draft printed no counts: $(cat speculate.txt)"

/usr/bin/stepformer --version > app-version.txt
grep -qx "data: /usr/share/stepformer (from the installed prefix)" app-version.txt ||
  fail "stepformer --version does not read its data from /usr/share/stepformer"
# The app: the default model at Algorithm 4 line 6 with the Attention tab, then the bundled BERT
# (File › Examples, read from the installed examples.json), lesson 2 (the installed lessons/) and the
# GPU attention (the installed shaders/, on Mesa's llvmpipe under Xvfb).
app_actions="open:attention,goto:4:6,screenshot:$run/app.png,dump-state:$run/default.json,example:2"
app_actions+=",dump-state:$run/bert.json,lesson-open:02-one-attention-head,dump-state:$run/lesson.json"
app_actions+=",open:gpu,attention:gpu"
xvfb-run -a -s "-screen 0 1280x720x24" /usr/bin/stepformer --no-ini --size 1280x720 --frames 14 \
  --actions "$app_actions" --dump-state "$run/gpu.json" > app.log 2>&1 ||
  { status=$?; cat app.log; fail "the installed app exited with status $status"; }
/usr/bin/python3 - "$run" <<'PY' || fail "the installed app's screenshot or state"
import json, sys
from PIL import Image
run = sys.argv[1]
# A frame that drew nothing is one colour and ImGui's empty windows a dozen (backgrounds, borders, title
# bars); Algorithm 4 with the Attention tab has heatmaps and anti-aliased text in thousands of colours.
colours = len(Image.open(f"{run}/app.png").convert("RGB").getcolors(1 << 24))
print(f"package_test: the installed app's screenshot has {colours} distinct colours")
assert colours >= 256, f"the screenshot looks blank: {colours} distinct colours"
default, bert, lesson, gpu = (json.load(open(f"{run}/{n}.json")) for n in ("default", "bert", "lesson", "gpu"))
assert default["arch"] == "gpt" and default["event"]["alg"] == 4, default.get("event")
assert bert["arch"] == "bert", f"File › Examples' second model is not BERT: {bert['arch']}"
lessons = "/usr/share/stepformer/assets/lessons/"
assert lesson["lesson"]["active"] and lesson["lesson"]["path"].startswith(lessons), lesson["lesson"]["path"]
assert gpu["attention_backend"] == "gpu" and gpu["gpu_dispatches"] > 0, gpu["notice"]
print("package_test: the installed app opened BERT, lesson 2 and the GPU attention from /usr/share/stepformer")
PY

# Every option of both programs, and every command of the CLI, is in its man page.
man_text() { zcat "/usr/share/man/man1/$1.1.gz" | sed 's/\\-/-/g'; }
app_man=$(man_text stepformer)
cli_man=$(man_text stepformer-cli)
# Whether TEXT names OPTION whole (--context must not be found in --context-tokens).
has_option() { grep -qE -- "$1([^a-z0-9-]|\$)" <<< "$2"; }
for opt in $(/usr/bin/stepformer --help | grep -o '^  --[a-z0-9-]*'); do
  has_option "$opt" "$app_man" || fail "stepformer.1 lacks $opt"
done
for cmd in $(/usr/bin/stepformer-cli --help | sed -n 's/^  \([a-z]*\)  .*/\1/p'); do
  grep -q "^\.SS $cmd" <<< "$cli_man" || fail "stepformer-cli.1 lacks the command $cmd"
  [ "$cmd" = help ] && continue
  for opt in $(/usr/bin/stepformer-cli help "$cmd" | grep -o '^  --[a-z0-9-]*'); do
    has_option "$opt" "$cli_man" || fail "stepformer-cli.1 lacks $cmd's option $opt"
  done
done
echo "package_test: the man pages list every option of stepformer and of each stepformer-cli command"

cd "$repo"
cp "$run/app.png" build-pkg/installed-app.png   # kept to look at
rm -rf "$run"
$sudo apt-get remove -y -qq stepformer > /dev/null
installed=0
for f in /usr/bin/stepformer /usr/bin/stepformer-cli /usr/share/stepformer; do
  [ ! -e "$f" ] || fail "$f is still there after apt-get remove"
done
echo "package_test: $deb built, lintian-clean (no errors), installed, run and removed in" \
  "$(($(date +%s) - start)) s (package build $((built - start)) s)"
