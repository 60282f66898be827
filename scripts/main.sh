#!/usr/bin/env bash
# The main job: installs what is missing, builds the CLAP and VST3 bundles and the standalone
# (target/bundled/), then renders the built-in demo into demo-out/ and prints what ran.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
longtail_install_deps

cargo xtask bundle longtail --release
ls -l target/bundled/
./target/release/longtail-cli demo --output demo-out
