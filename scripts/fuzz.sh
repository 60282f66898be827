#!/usr/bin/env bash
# Fuzzes what Longtail parses from outside: `scripts/fuzz.sh TARGET MINUTES`, with TARGET one of
#   ir_decode      IR file bytes, every format, through the decoder and the IR checks;
#   ir_file_set    one IR file per input (2 to 9 files cut from the input), into a matrix;
#   state_restore  the IR in a project state (JSON) through the state restore;
#   recording_read a recording's bytes through `deconvolve`'s reader and checks (seeded with
#                  ir_decode's seeds: the same first byte picks the same extension).
# Installs what it needs (the Debian packages of scripts/deps.sh, cargo-fuzz; the nightly
# toolchain must be there: `rustup toolchain install nightly`), writes the seed corpus (the
# mutation test's seeds: plugin/tests/support/seeds.rs) into plugin/fuzz/seeds, and runs
# libFuzzer for MINUTES (default 10) with a 2 GB RSS limit, a 1 GB single-allocation limit
# (an allocation above it is a crash: no outside length may size one) and a 10 s timeout per
# input. New inputs go to plugin/fuzz/corpus/TARGET, crashes to plugin/fuzz/artifacts/TARGET.
# FUZZ_SANITIZER=address builds with AddressSanitizer (slower); the default is none, since the
# decoding path is safe Rust and the limits above are libFuzzer's own.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh ir_decode|ir_file_set|state_restore|recording_read [MINUTES]}
minutes=${2:-10}
case "$target" in
    ir_decode | ir_file_set | state_restore | recording_read) ;;
    *)
        echo "fuzz: unknown target '$target'; the targets are ir_decode, ir_file_set, state_restore and recording_read" >&2
        exit 2
        ;;
esac

source scripts/deps.sh
longtail_install_deps
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "fuzz: the nightly toolchain is missing: rustup toolchain install nightly" >&2
    exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

# The seeds, written by the mutation test on the stable toolchain (its normal test build).
LONGTAIL_FUZZ_SEEDS="$PWD/plugin/fuzz/seeds" cargo test --quiet -p longtail --test ir_mutation \
    -- --ignored --exact write_fuzz_seeds --nocapture
cd plugin/fuzz
mkdir -p "corpus/$target"
seeds="seeds/$target"
if [ "$target" = recording_read ]; then
    seeds=seeds/ir_decode
fi
cargo +nightly fuzz run --sanitizer "${FUZZ_SANITIZER:-none}" --fuzz-dir . "$target" \
    "corpus/$target" "$seeds" -- \
    -max_total_time=$((minutes * 60)) -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
    -print_final_stats=1
