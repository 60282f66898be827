#!/usr/bin/env bash
# The Windows build, cross-built from Linux and tested under Wine: installs mingw-w64 and Wine
# when missing, adds Rust's x86_64-pc-windows-gnu target, makes a Wine prefix under the target
# dir, builds the Windows test binaries (the dev profile of scripts/test.sh, in the same target
# dir) and runs, under Wine, the tests that need no display, audio device, JACK or GPU:
# the plugin's unit tests, the IR tests, the CLI tests (among them the Windows
# `longtail-cli.exe render` against the Linux render of the same files, >= 100 dB), the engine
# accuracy tests and the CLAP and VST3 host tests on the Windows plugin library. Run by
# scripts/test.sh after the Linux suite; runs alone too.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
# The Linux packages too: the script builds the Linux CLI for the reference render, and runs
# Wine under Xvfb.
longtail_install_packages "${LONGTAIL_APT_PACKAGES[@]}" "${LONGTAIL_WINDOWS_APT_PACKAGES[@]}"

# Every Wine process of this script runs on one X display (nice-plug's Windows event loop needs a
# message window, which Wine creates only with a display) and so under one wineserver
# (scripts/wine/setup.sh says why; in CI the standalone below once exited with 1 without it,
# "X connection to :99 broken").
if [ -z "${LONGTAIL_WINE_XVFB:-}" ]; then
    export LONGTAIL_WINE_XVFB=1
    exec xvfb-run -a bash "$PWD/scripts/windows.sh" "$@"
fi

readonly TARGET=x86_64-pc-windows-gnu
longtail_add_windows_target

target_dir=$(realpath -m "${CARGO_TARGET_DIR:-target}")
windows_dir="$target_dir/windows"
source scripts/wine/setup.sh
longtail_wine_setup "$target_dir"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$WINE"

# The Linux render the Windows one must equal: the Linux CLI's demo files (a dry signal and
# the built-in IRs), the hall rendered by the Linux CLI. LONGTAIL_LINUX_CLI names a Linux CLI
# built already (scripts/test.sh passes the one its workspace tests just built: building the
# CLI alone here took another 75 s, a variant without the tests' features); else it is built.
linux_render="$windows_dir/linux-render"
linux_cli=${LONGTAIL_LINUX_CLI:-}
if [ -z "$linux_cli" ]; then
    cargo build --locked -p longtail --bin longtail-cli
    linux_cli="$target_dir/debug/longtail-cli"
fi
"$linux_cli" demo --output "$linux_render" >/dev/null
"$linux_cli" render --ir "$linux_render/ir-hall.wav" \
    --input "$linux_render/dry.wav" --output "$linux_render/linux.wav" >/dev/null
export LONGTAIL_LINUX_RENDER="$linux_render"

# One build, as in scripts/test.sh, with nice-plug's assert_process_allocs on: the plugin's unit
# tests, the IR tests, the CLI, then the end-to-end tests: the engine against float64, no
# allocation on the audio thread, the CLAP host loading the Windows plugin library (the file the
# bundler ships as Longtail.clap) and the VST3 host. The IR tests' allocation guard is Linux's
# data limit in this build (plugin/tests/support/alloc_guard.rs), so here they run without it:
# the decoder is the same code, guarded in the Linux run. (They had a build of their own without
# the feature: 84 s more in CI.) Left out: the standalone and JACK tests (they stop the
# standalone with a POSIX signal; Wine has no JACK), the editor and the soak (not tried under
# Wine yet), and in clap_host the thread and descriptor counts, which read /proc/self (Linux
# only; under Wine that is the Wine process's own /proc).
plugin_tests=(-p longtail --lib --test ir_formats --test ir_layouts --test ir_edit
    --test ir_resample --test ir_mutation --test ir_state --test thermal --test cli)
engine_tests=(-p longtail-tests --test engine_accuracy --test realtime_no_alloc --test ir_state
    --test clap_host --test vst3_host --test engine_gpu)
engine_skips=(--skip many_instances_leave_no_threads_or_fds_behind)
# The GPU tests skip where Wine shows no adapter (`status` below says which it found), so CI's
# LONGTAIL_REQUIRE_GPU is for the Linux suite only.
unset LONGTAIL_REQUIRE_GPU
# One cargo invocation for both sets: cargo resolves features per invocation, so the plugin's
# tests run alone would build the plugin again without the feature.
all_tests=("${plugin_tests[@]}" "${engine_tests[@]}")

# Cargo.toml's dev profile builds a few dependencies at opt-level 3 for the tests that feel
# their speed: wgpu's core and HAL (the GPU tests on lavapipe) and vello (the editor's
# rasteriser). Under Wine neither runs (no GPU adapter, no editor test), so this build keeps
# them at the profile's 1: about a minute of CPU less.
speed_args=()
for crate in wgpu-core wgpu-hal vello_cpu vello_common fearless_simd; do
    speed_args+=(--config "profile.dev.package.$crate.opt-level=1")
done
all_tests=("${speed_args[@]}" "${all_tests[@]}")

start=$SECONDS
cargo test --target "$TARGET" --locked "${all_tests[@]}" --no-run
build_s=$((SECONDS - start))
start=$SECONDS
# What the Windows build finds under Wine: the GPU adapters (if any) and the thermal sources.
"$WINE" "$target_dir/$TARGET/debug/longtail-cli.exe" status
# The standalone starts headless on its dummy backend and keeps running until stopped.
rc=0
timeout 5 "$WINE" "$target_dir/$TARGET/debug/longtail.exe" --headless --backend dummy \
    >"$windows_dir/standalone.log" 2>&1 || rc=$?
if [ "$rc" -ne 124 ]; then
    echo "windows: the standalone exited with $rc instead of running; it printed:" >&2
    cat "$windows_dir/standalone.log" >&2
    exit 1
fi
cargo test --target "$TARGET" --locked "${all_tests[@]}" -- "${engine_skips[@]}"
run_s=$((SECONDS - start))

echo "windows: build ${build_s} s, tests under Wine ${run_s} s"
