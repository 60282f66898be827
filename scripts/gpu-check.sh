#!/usr/bin/env bash
# The GPU check: every GPU figure in one call on a lent GPU machine, which has no Rust and
# maybe no Vulkan loader. Two steps:
#
#   scripts/gpu-check.sh --pack [PACKDIR]    here, with cargo: builds the release longtail-cli
#       and the GPU test binaries (the gpu crate's tests, engine_gpu, engine_gpu_faults,
#       auto_placement, lone_reverb_memory; the test profile CI builds), strips them into one xz archive, downloads
#       the Vulkan and GL loader packages, and writes all of it to PACKDIR (gpu-pack/ by
#       default, git-ignored): about 15 MiB, under the device tool's 64 MiB with the working
#       tree. It prints the size, and the `carry` list and command for the device tool's `run`.
#   scripts/gpu-check.sh [--from PACKDIR] OUTDIR    there: unpacks the loaders into a private
#       folder (nothing is installed) when the machine has none, finds the NVIDIA ICD, runs
#       the test binaries with LONGTAIL_REQUIRE_GPU=1, then status, bench-gpu (tiled and
#       radix-2) and the session benchmark on the GPU and on the CPU. Without --from, on a
#       machine with cargo, it builds the same binaries here and runs them in place.
#
# OUTDIR gets at most 8 files, summary.txt first:
#   summary.txt      what was found (glibc, loader, ICD, GPU), the tests' results, a table,
#                    and where the hub's time went in the paced GPU runs (its thread's CPU,
#                    submit / wait / readback, the wait's CPU share, round trips by batch);
#   status.json      the adapters, the one the backend would use and its calibration;
#   gpu-tests.log    the GPU tests' output;
#   bench-gpu.jsonl  one period's GPU batch alone (64 paths of P = 8192, the round-trip
#                    target), tiled kernels then radix-2, one JSON line each;
#   session.jsonl    the session benchmark: 256 instances of a stereo 10 s IR at 128-sample
#                    blocks over 8 paced host threads, 30 s, on the GPU then on the CPU only,
#                    at zero latency, then in the offload mode (--latency 4096: every level,
#                    level 0 included, is 1024 samples or more, so the GPU may take them all)
#                    on the GPU and on the CPU workers (one JSON line per host thread, then the
#                    session's line, for each; variants session-gpu, session-cpu,
#                    session-offload-gpu, session-offload-cpu);
#   matrix.jsonl     one dense 16 x 16 matrix of 4 s rooms at 64-sample blocks, paced, 30 s,
#                    the same four runs (variants matrix-gpu and so on);
#   status-matrix.json  what Auto decides for that matrix on this machine (status --backend
#                    auto: both sides' calibrated costs, and where each level would run);
# and room for one more.
#
# Knobs, to shrink it for a dry run on lavapipe (with LONGTAIL_GPU_ALLOW_CPU=1):
# GPU_CHECK_INSTANCES (256), GPU_CHECK_HOST_THREADS (8), GPU_CHECK_SECONDS (30),
# GPU_CHECK_OFFLOAD_LATENCY (the offload runs' --latency, 4096),
# GPU_CHECK_PERIODS (bench-gpu's periods, 1000), GPU_CHECK_MATRIX (inputs, outputs and IR
# seconds of the matrix run, "16 16 4"), GPU_CHECK_TEST_ARGS (arguments for every test
# binary, a filter or `--skip NAME`, say; none by default), GPU_CHECK_CARRIED_LOADERS=1 (use
# the carried loaders even where the machine has its own); for --pack, GPU_CHECK_XZ_LEVEL (9)
# and GPU_CHECK_BUILT_CLI (the path of a release longtail-cli built already, packed instead of
# building one).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-check-lib.sh || exit 1

case "${1:-}" in
    --pack)
        gpu_check_pack "${2:-gpu-pack}"
        exit $?
        ;;
    --from)
        pack=${2:?usage: scripts/gpu-check.sh --from PACKDIR OUTDIR}
        out=${3:?usage: scripts/gpu-check.sh --from PACKDIR OUTDIR}
        ;;
    "" | -h | --help)
        sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'
        exit 2
        ;;
    *)
        pack=
        out=$1
        ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
instances=${GPU_CHECK_INSTANCES:-256}
host_threads=${GPU_CHECK_HOST_THREADS:-8}
seconds=${GPU_CHECK_SECONDS:-30}
offload_latency=${GPU_CHECK_OFFLOAD_LATENCY:-4096}
periods=${GPU_CHECK_PERIODS:-1000}
read -r -a test_args <<<"${GPU_CHECK_TEST_ARGS:-}"
work=$(mktemp -d "${TMPDIR:-/tmp}/longtail-gpu-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
started=$SECONDS

# The binaries: from the pack, or built here.
if [ -n "$pack" ]; then
    pack=$(cd "$pack" && pwd) || exit 1
    mkdir -p "$work/bin"
    xz -dc "$pack/binaries.tar.xz" | tar -x -C "$work/bin" || exit 1
    cli="$work/bin/longtail-cli"
    tests=()
    for test in "$work"/bin/*; do
        [ "$(basename "$test")" = longtail-cli ] || tests+=("$test")
    done
else
    command -v cargo >/dev/null 2>&1 || {
        echo "gpu-check: no cargo here: pack elsewhere (--pack) and run with --from PACKDIR" >&2
        exit 1
    }
    gpu_check_build || exit 1
    cli=$GPU_CHECK_CLI
    tests=("${GPU_CHECK_TESTS[@]}")
fi

# What this machine has, before anything else: the first lines of the log and of the summary.
gpu_check_find_vulkan "$pack" "$work/gl" > "$work/found.txt"
cat "$work/found.txt"

echo "== GPU tests (${#tests[@]} binaries)"
: > "$out/gpu-tests.log"
for test in "${tests[@]}"; do
    echo "-- $(basename "$test")" >> "$out/gpu-tests.log"
    LONGTAIL_REQUIRE_GPU=1 "$test" "${test_args[@]}" >> "$out/gpu-tests.log" 2>&1 || failed=1
done
grep -E "^-- |^test result|FAILED|panicked" "$out/gpu-tests.log"
tests_s=$((SECONDS - started))

read -r matrix_in matrix_out matrix_s <<<"${GPU_CHECK_MATRIX:-16 16 4}"
echo "== adapters and calibration"
"$cli" status --backend gpu --json > "$out/status.json" || failed=1
cat "$out/status.json"
echo "== Auto for the $matrix_in x $matrix_out matrix of $matrix_s s rooms at 64-sample blocks"
"$cli" status --backend auto --channels "$matrix_in" --outputs "$matrix_out" \
    --ir-seconds "$matrix_s" --block 64 --json > "$out/status-matrix.json" || failed=1
cat "$out/status-matrix.json"

echo "== bench-gpu, $periods periods (tiled kernels, then the radix-2 fallback)"
: > "$out/bench-gpu.jsonl"
for kernels in tiled radix2; do
    "$cli" bench-gpu --periods "$periods" --kernels "$kernels" --json >> "$out/bench-gpu.jsonl" ||
        failed=1
done
cat "$out/bench-gpu.jsonl"

# Each run at zero latency (variant RUN-BACKEND), then in the offload mode
# (RUN-offload-BACKEND).
runs=("zero gpu" "zero cpu" "$offload_latency gpu" "$offload_latency cpu")
variant_of() { # run latency backend
    if [ "$2" = zero ]; then echo "$1-$3"; else echo "$1-offload-$3"; fi
}

: > "$out/session.jsonl"
for run in "${runs[@]}"; do
    read -r latency backend <<<"$run"
    variant=$(variant_of session "$latency" "$backend")
    echo "== $variant: $instances instances, $host_threads host threads, $seconds s," \
        "latency $latency"
    "$cli" bench --ir-seconds 10 --block 128 --instances "$instances" \
        --host-threads "$host_threads" --seconds "$seconds" --paced --backend "$backend" \
        --latency "$latency" --variant "$variant" --json > "$work/$variant.json" || failed=1
    cat "$work/$variant.json" >> "$out/session.jsonl"
    tail -n 1 "$work/$variant.json"
done

: > "$out/matrix.jsonl"
for run in "${runs[@]}"; do
    read -r latency backend <<<"$run"
    variant=$(variant_of matrix "$latency" "$backend")
    echo "== $variant: $matrix_in x $matrix_out x $matrix_s s at 64-sample blocks, $seconds s," \
        "latency $latency"
    "$cli" bench --channels "$matrix_in" --outputs "$matrix_out" --ir-seconds "$matrix_s" \
        --block 64 --seconds "$seconds" --paced --backend "$backend" --latency "$latency" \
        --variant "$variant" --json > "$work/$variant.json" || failed=1
    cat "$work/$variant.json" >> "$out/matrix.jsonl"
    tail -n 1 "$work/$variant.json"
done

gpu_check_summary "$work/found.txt" "$out" "$tests_s" $((SECONDS - started)) "$failed" \
    > "$out/summary.txt"
cat "$out/summary.txt"
exit "$failed"
