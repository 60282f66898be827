#!/usr/bin/env bash
# Drives the standalone's editor with the mouse and the keyboard on a private Xvfb display
# (xdotool), and checks each gesture through the plugin's parameter values, as the editor's
# probe records them (plugin/src/editor/probe.rs):
#
#   1. dragging the trim-start handle on the IR moves Trim start off 0;
#   2. a click on Dry/wet moves it, a double-click puts it back to its default;
#   3. a click on Pre-delay's value, then typing 120 and Enter, sets 120 ms;
#   4. three wheel notches up over Output gain raise it by three steps (1 % each);
#   5. dragging the crossover handle on the IR moves Crossover up.
#
# The standalone must stay alive throughout: the tests' build has nice-plug's
# assert_process_allocs on, so process() (the meters included) runs under it with the editor
# open. Screenshots before and after go to OUT_DIR.
#
# Usage: scripts/editor-interact.sh STANDALONE_BINARY OUT_DIR
# Needs: what scripts/editor-lib.sh needs, xdotool, import (imagemagick).
set -euo pipefail
bin="${1:?usage: editor-interact.sh STANDALONE_BINARY OUT_DIR}"
out="${2:?missing OUT_DIR}"
mkdir -p "$out"
source "$(dirname "$0")/editor-lib.sh"
editor_need Xvfb xdpyinfo xwininfo xdotool import python3
export LONGTAIL_EDITOR_TAB=reverb LONGTAIL_EDITOR_IR_VIEW=waveform LONGTAIL_EDITOR_SIZE=720x480
editor_start_display
editor_start_standalone "$bin"
sleep 3
import -window root -crop "$editor_geom" +repage "$out/editor-interact-before.png"
# The window's origin on the screen; the probe's rectangles are in window points (scale 1).
origin_x="$(echo "$editor_geom" | sed -E 's/^[0-9]+x[0-9]+\+(-?[0-9]+)\+(-?[0-9]+)$/\1/')"
origin_y="$(echo "$editor_geom" | sed -E 's/^[0-9]+x[0-9]+\+(-?[0-9]+)\+(-?[0-9]+)$/\2/')"
failures=0

# The screen point at fraction FX, FY of the probe's rectangle NAME.
at() {
  editor_probe_get "'%d %d' % ($origin_x + d['rects']['$1'][0] + $2 * (d['rects']['$1'][2] - d['rects']['$1'][0]), $origin_y + d['rects']['$1'][1] + $3 * (d['rects']['$1'][3] - d['rects']['$1'][1]))"
}
param() { editor_probe_get "d['params']['$1']['$2']"; }
# Waits up to 3 s for the Python condition COND (on d) to hold; reports CHECK.
expect() {
  local check="$1" cond="$2"
  for _ in $(seq 30); do
    if [ "$(editor_probe_get "bool($cond)")" = True ]; then
      echo "ok: $check"
      return
    fi
    sleep 0.1
  done
  echo "FAILED: $check (probe: $(editor_probe_get "$3"))" >&2
  failures=$((failures + 1))
}

# 1. Drag the trim-start handle 60 points to the right, in steps, as a hand would.
read -r x y <<<"$(at trim-start 0.5 0.5)"
xdotool mousemove "$x" "$y"
sleep 0.2
xdotool mousedown 1
sleep 0.1
for step in 10 20 30 40 50 60; do
  xdotool mousemove "$((x + step))" "$y"
  sleep 0.05
done
sleep 0.1
xdotool mouseup 1
expect "dragging the trim-start handle sets Trim start" \
  "d['params']['Trim start']['plain'] > 1.0" "d['params']['Trim start']"

# 2. A click at 80 % of Dry/wet, then a double-click there.
default_mix="$(param 'Mix' default)"
read -r x y <<<"$(at Mix 0.8 0.5)"
xdotool mousemove "$x" "$y" click 1
expect "a click on Dry/wet moves it" \
  "abs(d['params']['Mix']['plain'] - $default_mix) > 0.1" "d['params']['Mix']"
sleep 0.6
xdotool click --repeat 2 --delay 60 1
expect "a double-click on Dry/wet resets it to its default ($default_mix)" \
  "abs(d['params']['Mix']['plain'] - $default_mix) < 1e-6" "d['params']['Mix']"

# 3. Type a pre-delay: a click on the value (right of the slider), select all, 120, Enter.
read -r x y <<<"$(editor_probe_get "'%d %d' % ($origin_x + d['rects']['Pre-delay'][2] + 24, $origin_y + (d['rects']['Pre-delay'][1] + d['rects']['Pre-delay'][3]) / 2)")"
xdotool mousemove "$x" "$y" click 1
sleep 0.4
xdotool key ctrl+a
xdotool type --delay 40 "120"
xdotool key Return
expect "typing 120 into Pre-delay sets 120 ms" \
  "abs(d['params']['Pre-delay']['plain'] - 120.0) < 0.01" "d['params']['Pre-delay']"

# 4. Three wheel notches up over Output gain.
before="$(param 'Output gain' normalized)"
read -r x y <<<"$(at 'Output gain' 0.5 0.5)"
xdotool mousemove "$x" "$y"
sleep 0.2
for _ in 1 2 3; do
  xdotool click 4
  sleep 0.15
done
expect "three wheel notches raise Output gain by three steps" \
  "abs(d['params']['Output gain']['normalized'] - $before - 0.03) < 0.002" "d['params']['Output gain']"

# 5. Drag the early/late crossover handle (at the bottom of the picture) 40 points right.
default_crossover="$(param 'Crossover' plain)"
read -r x y <<<"$(at crossover 0.5 0.5)"
xdotool mousemove "$x" "$y"
sleep 0.2
xdotool mousedown 1
sleep 0.1
for step in 10 20 30 40; do
  xdotool mousemove "$((x + step))" "$y"
  sleep 0.05
done
sleep 0.1
xdotool mouseup 1
expect "dragging the crossover handle moves Crossover off $default_crossover ms" \
  "d['params']['Crossover']['plain'] > $default_crossover + 1.0" "d['params']['Crossover']"
sleep 0.5
import -window root -crop "$editor_geom" +repage "$out/editor-interact-after.png"
editor_alive
echo "screenshots: $out/editor-interact-before.png $out/editor-interact-after.png"
if [ "$failures" -gt 0 ]; then
  echo "$failures interaction checks failed" >&2
  exit 1
fi
echo "5 interactions checked; the standalone stayed alive throughout (in the tests' build, process() runs under assert_process_allocs)"
