#!/usr/bin/env bash
# Builds the Debian package stepformer_VERSION-1_amd64.deb in the repository root (docs/packaging.md):
# a portable Release build (-march=x86-64-v2, no native) of stepformer and stepformer-cli in build-pkg,
# installed with `cmake --install --strip` into a staging tree (build-pkg/root, prefix /usr), the
# Debian-only files added (compressed man pages, copyright, changelog, DEBIAN/control with the
# dependencies dpkg-shlibdeps finds), and `dpkg-deb --build --root-owner-group`.
# VERSION is CMake's project(VERSION); the metainfo's newest release and the Debian changelog's newest
# entry must name the same version (checked here). Prints the .deb's path on its last line.
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

BUILD=build-pkg
ROOT=$BUILD/root
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
APP_ID=io.github.stepformer.Stepformer

# Debian's hardening flags (those of dpkg-buildflags that change no number: stack protector, fortified
# libc calls, read-only relocations bound at load), so that lintian finds them; not its -O2 -g.
HARDEN_C="-fstack-protector-strong -D_FORTIFY_SOURCE=2"
HARDEN_LD="-Wl,-z,relro -Wl,-z,now"
start=$(date +%s)
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSTEPFORMER_NATIVE=OFF -DSTEPFORMER_MARCH=x86-64-v2 \
  -DSTEPFORMER_TESTS=OFF -DSTEPFORMER_BENCH=OFF -DCMAKE_INSTALL_PREFIX=/usr \
  -DCMAKE_C_FLAGS="$HARDEN_C" -DCMAKE_CXX_FLAGS="$HARDEN_C" -DCMAKE_EXE_LINKER_FLAGS="$HARDEN_LD" \
  > "$BUILD.log" 2>&1 || { cat "$BUILD.log"; exit 1; }
cmake --build "$BUILD" -j"$JOBS" --target stepformer stepformer-cli >> "$BUILD.log" 2>&1 ||
  { tail -n 60 "$BUILD.log"; echo "package: build failed (full log: $BUILD.log)"; exit 1; }
echo "package: built stepformer and stepformer-cli (x86-64-v2) in $(($(date +%s) - start)) s"

VERSION=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
DEB_VERSION=$VERSION-1
grep -q "<release version=\"$VERSION\"" packaging/$APP_ID.metainfo.xml ||
  { echo "package: packaging/$APP_ID.metainfo.xml has no <release version=\"$VERSION\"> (CMake's version)"; exit 1; }
head -n 1 packaging/debian/changelog | grep -qF "stepformer ($DEB_VERSION)" ||
  { echo "package: packaging/debian/changelog's first entry is not stepformer ($DEB_VERSION)"; exit 1; }

# The staging tree: what `cmake --install` puts under /usr, then the Debian-only files.
rm -rf "$ROOT"
DESTDIR=$PWD/$ROOT cmake --install "$BUILD" --strip > /dev/null
gzip -9n "$ROOT"/usr/share/man/man1/*.1
doc=$ROOT/usr/share/doc/stepformer
install -d "$doc"
install -m 644 packaging/debian/copyright "$doc/copyright"
gzip -9nc packaging/debian/changelog > "$doc/changelog.Debian.gz"
chmod 644 "$doc/changelog.Debian.gz"
desktop-file-validate "$ROOT/usr/share/applications/$APP_ID.desktop"
appstreamcli validate --no-net --explain "$ROOT/usr/share/metainfo/$APP_ID.metainfo.xml" > "$BUILD/appstream.log" ||
  { cat "$BUILD/appstream.log"; exit 1; }

# Depends: the shared libraries the two programs link, as dpkg-shlibdeps names their packages (it reads
# debian/control, so it runs in a scratch folder that has one), and the font the app draws with.
scratch=$BUILD/shlibdeps
rm -rf "$scratch" && mkdir -p "$scratch/debian"
printf 'Source: stepformer\n\nPackage: stepformer\nArchitecture: amd64\n' > "$scratch/debian/control"
(cd "$scratch" && dpkg-shlibdeps -O "$OLDPWD/$ROOT/usr/bin/stepformer" "$OLDPWD/$ROOT/usr/bin/stepformer-cli") \
  > "$BUILD/shlibs.substvars"
SHLIBS=$(sed -n 's/^shlibs:Depends=//p' "$BUILD/shlibs.substvars")
[ -n "$SHLIBS" ] || { echo "package: dpkg-shlibdeps found no dependencies"; exit 1; }
DEPENDS="$SHLIBS, fonts-dejavu-core"
INSTALLED_SIZE=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)

install -d "$ROOT/DEBIAN"
sed -e "s/@VERSION@/$DEB_VERSION/" -e "s/@DEPENDS@/$DEPENDS/" -e "s/@INSTALLED_SIZE@/$INSTALLED_SIZE/" \
  packaging/debian/control.in > "$ROOT/DEBIAN/control"
deb=stepformer_${DEB_VERSION}_amd64.deb
dpkg-deb --build --root-owner-group -Zxz "$ROOT" "$deb" > /dev/null
echo "package: $deb ($(du -k "$deb" | cut -f1) KiB; Depends: $DEPENDS)"
echo "$PWD/$deb"
