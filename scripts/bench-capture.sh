#!/usr/bin/env bash
# Times `longtail-cli deconvolve` on the capture's speed target (issue 88): an 8-channel
# recording of K = 4 loudspeakers, four slots of a 10 s sweep and 4 s of tail (56 s at 48 kHz),
# deconvolved into a 4 x 8 matrix IR. `bash scripts/bench-capture.sh [RUNS]` (default 5).
#
# Builds the release CLI, writes the sweep (`sweep --speakers 4`), a 4 x 8 matrix of 0.3 s
# decaying-noise rooms (Debian's python3, standard library only) and the recording through
# `render` (the sweep through the matrix, as the plugin would play it), then runs `deconvolve`
# RUNS times under /usr/bin/time. Prints each run's wall time and peak resident memory, their
# median and maximum, and the recording's size: the targets are under 5 s and under 10 times
# the recording's size. Prints numbers only; asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
target_dir=${CARGO_TARGET_DIR:-target}
cargo build --quiet -p longtail --bin longtail-cli --release
cli="$target_dir/release/longtail-cli"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

"$cli" sweep --out "$dir/sweep.wav" --speakers 4 --level -20 >/dev/null
/usr/bin/python3 - "$dir/matrix.wav" <<'PY'
import math, random, struct, sys
rate, inputs, outputs, length = 48_000, 4, 8, 14_400
random.seed(88)
decay = math.exp(-math.log(1000.0) / length)
paths = []
for path in range(inputs * outputs):
    room = [0.005 * decay**i * random.gauss(0.0, 1.0) for i in range(length)]
    room[0] = 0.03
    norm = math.sqrt(sum(s * s for s in room))
    delay = 300 + 50 * path
    paths.append([0.0] * delay + [s / norm for s in room] + [0.0] * (2000 - delay))
frames = len(paths[0])
data = b"".join(struct.pack("<%df" % len(paths), *(p[i] for p in paths)) for i in range(frames))
channels = len(paths)
fmt = struct.pack("<HHIIHH", 3, channels, rate, rate * 4 * channels, 4 * channels, 32)
with open(sys.argv[1], "wb") as f:
    f.write(b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data)) + b"WAVE")
    f.write(b"fmt " + struct.pack("<I", len(fmt)) + fmt)
    f.write(b"data" + struct.pack("<I", len(data)) + data)
PY
"$cli" render --ir "$dir/matrix.wav" --input "$dir/sweep.wav" --output "$dir/recording.wav" \
    --outputs 8 --format discrete >/dev/null
bytes=$(stat -c %s "$dir/recording.wav")
echo "recording: $bytes bytes (8 channels, 32-bit float, 4 slots of 14 s at 48 kHz)"

walls=()
rss=()
for run in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$dir/time" "$cli" deconvolve --sweep "$dir/sweep.wav" \
        --recording "$dir/recording.wav" --out "$dir/ir.wav" --json >"$dir/report.json"
    read -r wall kib <"$dir/time"
    walls+=("$wall")
    rss+=("$kib")
    echo "run $run: ${wall} s, max RSS ${kib} KiB"
done
median=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
max_kib=$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)
echo "median wall ${median} s over $runs runs; max RSS ${max_kib} KiB" \
    "($(awk -v k="$max_kib" -v b="$bytes" 'BEGIN { printf "%.2f", k * 1024 / b }') x the recording)"
echo "last report: $(cat "$dir/report.json")"
