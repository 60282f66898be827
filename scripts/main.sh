#!/usr/bin/env bash
# The main job: installs what is missing, builds the CLAP and VST3 bundles and the standalone
# (target/bundled/), then renders the built-in demo into demo-out/ and prints what ran.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
longtail_install_deps

# The Vulkan loader complains (harmlessly) on every instance without a runtime directory, and
# Auto looks for a GPU adapter once per process.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
    XDG_RUNTIME_DIR=$(mktemp -d)
    export XDG_RUNTIME_DIR
fi

cargo xtask bundle longtail --release
ls -l target/bundled/
./target/release/longtail-cli demo --output demo-out
