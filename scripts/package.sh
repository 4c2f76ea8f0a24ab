#!/usr/bin/env bash
# Builds the Debian package stepformer_VERSION-1_amd64.deb in the repository root (docs/packaging.md):
# a portable Release build (-march=x86-64-v2, no native) of stepformer and stepformer-cli in build-pkg,
# installed with `cmake --install --strip` into a staging tree (build-pkg/root, prefix /usr), the
# Debian-only files added (compressed man pages, copyright, changelog, DEBIAN/control with the
# dependencies dpkg-shlibdeps finds), and `dpkg-deb --build --root-owner-group`.
# VERSION is CMake's project(VERSION); the metainfo's newest release and the Debian changelog's newest
# entry must name the same version (checked here). Prints the .deb's path on its last line.
# STEPFORMER_PACKAGE_BUILD=DIR packages the programs of an existing build tree instead (e.g. CI's main
# build, which saves building them twice; its -march is what DIR was configured with, not x86-64-v2).
set -euo pipefail
cd "$(dirname "$0")/.."

# What the package build needs besides what scripts/setup.sh installs for the normal build.
PACKAGES=(
  cmake g++ make pkg-config libeigen3-dev nlohmann-json3-dev libpcre2-dev   # core
  libimgui-dev libglfw3-dev python3-glad libgl-dev libegl-dev libstb-dev   # the app
  dpkg-dev                       # dpkg-shlibdeps (the Depends: field) and dpkg-deb
  desktop-file-utils appstream   # desktop-file-validate, appstreamcli validate
)
# shellcheck source=scripts/install_missing.sh
source scripts/install_missing.sh
install_missing package "${PACKAGES[@]}"

BUILD=${STEPFORMER_PACKAGE_BUILD:-build-pkg}
OUT=build-pkg   # the staging tree, logs and scratch files, whichever tree the programs come from
ROOT=$OUT/debian/stepformer   # where dpkg-shlibdeps expects a package's files (beside debian/control)
LOG=$OUT/build.log
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
APP_ID=io.github.stepformer.Stepformer
mkdir -p "$OUT"

# Debian's hardening flags (those of dpkg-buildflags that change no number: stack protector, fortified
# libc calls, read-only relocations bound at load), so that lintian finds them; not its -O2 -g.
HARDEN_C="-fstack-protector-strong -D_FORTIFY_SOURCE=2"
HARDEN_LD="-Wl,-z,relro -Wl,-z,now"
start=$(date +%s)
if [ -z "${STEPFORMER_PACKAGE_BUILD:-}" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSTEPFORMER_NATIVE=OFF -DSTEPFORMER_MARCH=x86-64-v2 \
    -DSTEPFORMER_TESTS=OFF -DSTEPFORMER_BENCH=OFF \
    -DCMAKE_C_FLAGS="$HARDEN_C" -DCMAKE_CXX_FLAGS="$HARDEN_C" -DCMAKE_EXE_LINKER_FLAGS="$HARDEN_LD" \
    > "$LOG" 2>&1 || { cat "$LOG"; exit 1; }
fi
cmake --build "$BUILD" -j"$JOBS" --target stepformer stepformer-cli >> "$LOG" 2>&1 ||
  { tail -n 60 "$LOG"; echo "package: build failed (full log: $LOG)"; exit 1; }
echo "package: built stepformer and stepformer-cli in $BUILD in $(($(date +%s) - start)) s"

VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
DEB_VERSION=$VERSION-1
grep -q "<release version=\"$VERSION\"" packaging/$APP_ID.metainfo.xml ||
  { echo "package: packaging/$APP_ID.metainfo.xml has no <release version=\"$VERSION\"> (CMake's version)"; exit 1; }
head -n 1 packaging/debian/changelog | grep -qF "stepformer ($DEB_VERSION)" ||
  { echo "package: packaging/debian/changelog's first entry is not stepformer ($DEB_VERSION)"; exit 1; }

# The staging tree: what `cmake --install` puts under /usr, then the Debian-only files.
rm -rf "$ROOT"
DESTDIR=$PWD/$ROOT cmake --install "$BUILD" --prefix /usr --strip > /dev/null
# What dh_strip also removes: the compiler's version notes, which no one reads at run time.
strip --remove-section=.comment --remove-section=.note "$ROOT"/usr/bin/stepformer "$ROOT"/usr/bin/stepformer-cli
gzip -9n "$ROOT"/usr/share/man/man1/*.1
doc=$ROOT/usr/share/doc/stepformer
install -d "$doc"
install -m 644 packaging/debian/copyright "$doc/copyright"
gzip -9nc packaging/debian/changelog > "$doc/changelog.Debian.gz"
chmod 644 "$doc/changelog.Debian.gz"
desktop-file-validate "$ROOT/usr/share/applications/$APP_ID.desktop"
appstreamcli validate --no-net --explain "$ROOT/usr/share/metainfo/$APP_ID.metainfo.xml" > "$OUT/appstream.log" ||
  { cat "$OUT/appstream.log"; exit 1; }

# Depends: the shared libraries the two programs link, as dpkg-shlibdeps names their packages (it reads
# a debian/control, written here beside the staging tree), and the font the app draws with.
install -d "$ROOT/DEBIAN"   # which also tells dpkg-shlibdeps where the package's root is
printf 'Source: stepformer\n\nPackage: stepformer\nArchitecture: amd64\n' > "$OUT/debian/control"
(cd "$OUT" && dpkg-shlibdeps -O debian/stepformer/usr/bin/stepformer debian/stepformer/usr/bin/stepformer-cli) \
  > "$OUT/shlibs.substvars"
SHLIBS=$(sed -n 's/^shlibs:Depends=//p' "$OUT/shlibs.substvars")
[ -n "$SHLIBS" ] || { echo "package: dpkg-shlibdeps found no dependencies"; exit 1; }
DEPENDS="$SHLIBS, fonts-dejavu-core"
INSTALLED_SIZE=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)

sed -e "s/@VERSION@/$DEB_VERSION/" -e "s/@DEPENDS@/$DEPENDS/" -e "s/@INSTALLED_SIZE@/$INSTALLED_SIZE/" \
  packaging/debian/control.in > "$ROOT/DEBIAN/control"
(cd "$ROOT" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
  > "$ROOT/DEBIAN/md5sums"
deb=stepformer_${DEB_VERSION}_amd64.deb
dpkg-deb --build --root-owner-group -Zxz "$ROOT" "$deb" > /dev/null
echo "package: $deb ($(du -k "$deb" | cut -f1) KiB; Depends: $DEPENDS)"
echo "$PWD/$deb"
