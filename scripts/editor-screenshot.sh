#!/usr/bin/env bash
# Opens the standalone's editor on a private Xvfb display (OpenGL through Mesa llvmpipe),
# screenshots the editor window to a PNG and checks that it is a drawn editor, not an empty
# window: the picture must have several distinct colours spread over the window.
#
# Usage: scripts/editor-screenshot.sh STANDALONE_BINARY OUT.png [WAIT_SECONDS]
# Needs: Xvfb, xdpyinfo and xwininfo (x11-utils), import and identify (imagemagick).
# Exit 0 when the window appeared and the PNG is not blank; prints the PNG's path.
set -euo pipefail
bin="${1:?usage: editor-screenshot.sh STANDALONE_BINARY OUT.png [WAIT_SECONDS]}"
out="${2:?missing OUT.png}"
wait_s="${3:-4}"
work="$(mktemp -d /tmp/longtail-editor.XXXXXX)"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 0.3
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
for tool in Xvfb xdpyinfo xwininfo import identify; do
  command -v "$tool" >/dev/null || { echo "editor-screenshot: '$tool' not found" >&2; exit 2; }
done

for n in $(seq 90 140); do
  { [ -e "/tmp/.X$n-lock" ] || [ -e "/tmp/.X11-unix/X$n" ]; } && continue
  Xvfb ":$n" -screen 0 1280x900x24 -nolisten tcp -noreset >"$work/xvfb.log" 2>&1 &
  pids+=($!)
  export DISPLAY=":$n"
  break
done
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
xdpyinfo >/dev/null 2>&1 || { cat "$work/xvfb.log" >&2; echo "Xvfb did not start" >&2; exit 1; }

# LONGTAIL_STANDALONE_ARGS: more arguments for the standalone (`--audio-layout 12`: 12 -> 12).
# shellcheck disable=SC2086
"$bin" --backend dummy ${LONGTAIL_STANDALONE_ARGS:-} >"$work/standalone.log" 2>&1 &
spid=$!
pids+=("$spid")
geom=""
for _ in $(seq 150); do
  if ! kill -0 "$spid" 2>/dev/null; then
    cat "$work/standalone.log" >&2
    echo "the standalone exited before its window appeared" >&2
    exit 1
  fi
  # The first named top-level window bigger than 1x1: '0x200003 "Longtail": ()  720x480+0+0  +0+0'
  geom="$(xwininfo -root -children 2>/dev/null | awk '/^ +0x[0-9a-f]+ "/ && $0 !~ / 1x1\+/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+x[0-9]+\+-?[0-9]+\+-?[0-9]+$/) { print $i; exit } }')"
  [ -n "$geom" ] && break
  sleep 0.1
done
[ -n "$geom" ] || { xwininfo -root -tree >&2; cat "$work/standalone.log" >&2; echo "no editor window" >&2; exit 1; }
sleep "$wait_s"
import -window root -crop "$geom" +repage "$out"
colors="$(identify -format '%k' "$out")"
sd="$(identify -format '%[fx:standard_deviation]' "$out")"
echo "editor window $geom, $colors colours, pixel std-dev $sd"
echo "screenshot: $out"
if [ "$colors" -lt 16 ] || ! python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.01 else 1)" "$sd"; then
  echo "the screenshot looks blank" >&2
  exit 1
fi
