#!/usr/bin/env bash
# The main job: installs what is missing, builds the CLAP and VST3 bundles and the standalone
# (target/bundled/x86_64-unknown-linux-gnu/; each target has its own folder, see
# xtask/src/main.rs), then renders the built-in demo into demo-out/ and prints what ran.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
longtail_install_deps

cargo xtask bundle longtail --release
ls -l "target/bundled/$(rustc -vV | sed -n 's/^host: //p')/"
./target/release/longtail-cli demo --output demo-out
