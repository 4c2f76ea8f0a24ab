#!/usr/bin/env bash
# Renders the icon's PNGs (48, 128 and 256 pixels) from the hand-drawn SVG beside this script; run it
# after editing the SVG and commit the PNGs (the package build uses the committed files, so it needs no
# SVG renderer). Needs rsvg-convert (Debian package librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")"
name=io.github.stepformer.Stepformer
for size in 48 128 256; do
  rsvg-convert --width "$size" --height "$size" "$name.svg" --output "$name-$size.png"
done
