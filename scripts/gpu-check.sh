#!/usr/bin/env bash
# One command on a GPU machine: `scripts/gpu-check.sh OUTDIR`.
#
# Builds the release CLI and the GPU tests (when cargo is there; on a machine without Rust, the
# binaries built elsewhere under target/release are used as they are), then writes into OUTDIR:
#   status.json       the adapters found, the one the backend would use and its calibration;
#   gpu-tests.log     the GPU kernel and engine tests with LONGTAIL_REQUIRE_GPU=1 (a missing
#                     adapter fails them);
#   bench-gpu.json    one period's GPU batch alone (64 paths of P = 8192, the round-trip target),
#                     with its dispatches and GPU time (timestamps);
#   bench-gpu-radix2.json  the same with the radix-2 fallback kernels;
#   session-gpu.json  the session benchmark on the GPU: 256 instances of a stereo 10 s IR at
#   session-cpu.json  128-sample blocks over 8 paced host threads, 60 s; then the same on the CPU
#                     only (one JSON line per host thread, then the session's line);
#   summary.txt       a short table of the above.
# It expects the NVIDIA driver and the Vulkan loader (libvulkan1) to be installed; it installs
# nothing. GPU_CHECK_INSTANCES, GPU_CHECK_HOST_THREADS and GPU_CHECK_SECONDS shrink the session
# benchmark (for a try on lavapipe with LONGTAIL_GPU_ALLOW_CPU=1).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-check.sh OUTDIR}
mkdir -p "$out"
instances=${GPU_CHECK_INSTANCES:-256}
host_threads=${GPU_CHECK_HOST_THREADS:-8}
seconds=${GPU_CHECK_SECONDS:-60}
cli=target/release/longtail-cli
failed=0

if command -v cargo >/dev/null 2>&1; then
    cargo build --release --locked -p longtail --bin longtail-cli || exit 1
fi
if [ ! -x "$cli" ]; then
    echo "gpu-check: $cli is missing: build it (cargo build --release -p longtail --bin longtail-cli)" >&2
    exit 1
fi

echo "== adapters and calibration"
"$cli" status --backend gpu --json > "$out/status.json" || failed=1
cat "$out/status.json"

echo "== GPU tests"
if command -v cargo >/dev/null 2>&1; then
    LONGTAIL_REQUIRE_GPU=1 cargo test --release --locked -p longtail-gpu \
        -p longtail-tests --test engine_gpu --test engine_gpu_faults --test auto_placement \
        > "$out/gpu-tests.log" 2>&1 ||
        failed=1
    grep -E "^test result|FAILED|panicked" "$out/gpu-tests.log"
else
    echo "cargo is not here: the GPU tests did not run" | tee "$out/gpu-tests.log"
fi

echo "== bench-gpu (tiled kernels, then the radix-2 fallback)"
"$cli" bench-gpu --json > "$out/bench-gpu.json" || failed=1
cat "$out/bench-gpu.json"
"$cli" bench-gpu --kernels radix2 --json > "$out/bench-gpu-radix2.json" || failed=1
cat "$out/bench-gpu-radix2.json"

for backend in gpu cpu; do
    echo "== session on $backend: $instances instances, $host_threads host threads, $seconds s"
    "$cli" bench --ir-seconds 10 --block 128 --instances "$instances" \
        --host-threads "$host_threads" --seconds "$seconds" --paced --backend "$backend" \
        --variant "session-$backend" --json > "$out/session-$backend.json" || failed=1
    tail -n 1 "$out/session-$backend.json"
done

# The summary: a few fields of each JSON line, found with sed (no other tool needed).
field() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" <<<"$1" | tr -d '"'; }
{
    printf '%-14s %-8s %9s %9s %11s %11s %6s %8s\n' run backend rtf cpu_s p99/ddl max/ddl late gpu_rt99
    for backend in gpu cpu; do
        line=$(tail -n 1 "$out/session-$backend.json" 2>/dev/null)
        [ -n "$line" ] || continue
        printf '%-14s %-8s %9s %9s %11s %11s %6s %8s\n' "session-$backend" \
            "$(field "$line" backend)" "$(field "$line" rtf)" "$(field "$line" cpu_s)" \
            "$(field "$line" p99_over_deadline)" "$(field "$line" max_over_deadline)" \
            "$(field "$line" late_blocks)" "$(field "$line" gpu_rt_p99_us)"
    done
    for file in bench-gpu bench-gpu-radix2; do
        line=$(cat "$out/$file.json" 2>/dev/null)
        if [ -n "$line" ]; then
            echo
            echo "$file: $line"
        fi
    done
} > "$out/summary.txt"
cat "$out/summary.txt"
exit "$failed"
