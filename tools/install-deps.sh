#!/usr/bin/env bash
# Installs what building and testing need on Debian or Ubuntu (the CUDA toolkit itself,
# nvcc with NVRTC and cuBLAS, is expected to be installed already, under /usr/local/cuda).
set -euo pipefail
packages=(meson ninja-build pkg-config g++ make libboost-program-options-dev libgtest-dev
          libsqlite3-dev sqlite3 python3 python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
# Through env: sudo resets the environment, and a debconf question (tzdata's) would wait
# unseen for an answer.
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
