#!/usr/bin/env bash
# Installs the dependencies (tools/install-deps.sh), then configures and builds into build/.
# Safe to re-run: an existing build/ is reconfigured, not wiped.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
if [ -f build/build.ninja ]; then
  meson setup --reconfigure build
else
  meson setup build
fi
meson compile -C build
