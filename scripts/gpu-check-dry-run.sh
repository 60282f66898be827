#!/usr/bin/env bash
# The GPU check's dry run, here and in CI (scripts/test.sh): packs (scripts/gpu-check.sh --pack,
# from the builds already made), copies the working tree's files (tracked, and untracked ones
# git does not ignore: what the device tool sends) and the pack into a clean folder, and runs the
# check's run step there on lavapipe with no cargo on PATH and the knobs shrunk, as the lent GPU
# machine would run it, with the carried Vulkan loader unpacked and used as where none is
# installed; it fails unless the run step's summary says it passed. This proves that the carried binaries run
# away from the build tree. OUTDIR (default target/gpu-check-dry-run) gets the check's files.
# Its pack is compressed at xz -0 (GPU_CHECK_XZ_LEVEL): it never travels, and -9 took minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-target/gpu-check-dry-run}")
pack=gpu-pack

start=$SECONDS
GPU_CHECK_XZ_LEVEL=${GPU_CHECK_XZ_LEVEL:-0} bash scripts/gpu-check.sh --pack "$pack"
pack_s=$((SECONDS - start))

tree=$(mktemp -d "${TMPDIR:-/tmp}/longtail-gpu-dry-run.XXXXXX")
trap 'rm -rf "$tree"' EXIT
# What the device tool sends: tracked files, and untracked ones git does not ignore.
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tree"
cp -r "$pack" "$tree/"
# PATH without cargo (nor rustc, rustup: they sit in the same folder).
no_cargo_path=$(tr ':' '\n' <<<"$PATH" | while IFS= read -r dir; do
    [ -n "$dir" ] && [ ! -x "$dir/cargo" ] && printf '%s\n' "$dir"
done | paste -sd: -)
if env PATH="$no_cargo_path" bash -c 'command -v cargo' >/dev/null; then
    echo "gpu-check-dry-run: cargo is still on the PATH" >&2
    exit 1
fi

rm -rf "$out"
start=$SECONDS
(cd "$tree" && env -u CARGO_TARGET_DIR PATH="$no_cargo_path" LONGTAIL_GPU_ALLOW_CPU=1 \
    GPU_CHECK_CARRIED_LOADERS=1 \
    GPU_CHECK_INSTANCES="${GPU_CHECK_INSTANCES:-8}" \
    GPU_CHECK_HOST_THREADS="${GPU_CHECK_HOST_THREADS:-2}" \
    GPU_CHECK_SECONDS="${GPU_CHECK_SECONDS:-5}" GPU_CHECK_PERIODS="${GPU_CHECK_PERIODS:-20}" \
    GPU_CHECK_MATRIX="${GPU_CHECK_MATRIX:-4 4 1}" \
    bash scripts/gpu-check.sh --from "$pack" "$out")
run_s=$((SECONDS - start))

if ! grep -q "result: passed" "$out/summary.txt" 2>/dev/null; then
    echo "gpu-check-dry-run: the run step's summary does not say it passed" >&2
    exit 1
fi
files=$(find "$out" -type f | wc -l)
if [ "$files" -gt 8 ]; then
    echo "gpu-check-dry-run: $files files in $out, more than the device tool returns (8)" >&2
    exit 1
fi
echo "gpu-check-dry-run: passed; pack $pack_s s ($(du -sh "$pack" | cut -f1)), run step $run_s s, $files files in $out"
