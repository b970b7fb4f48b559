#!/usr/bin/env bash
# The anchors' toolchains: clang++-19 from Debian's packages, numba from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang++-19 >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-19
fi
pip install -q -e ".[bench]"
