#!/usr/bin/env bash
# Opens the standalone's editor on a private Xvfb display (OpenGL through Mesa llvmpipe),
# screenshots the editor window to a PNG and checks that it is a drawn editor, not an empty
# window (several distinct colours spread over the window), and, from the editor's probe, that
# no laid-out text or widget runs past the window's edges or past a scroll area's width.
#
# Usage: scripts/editor-screenshot.sh STANDALONE_BINARY OUT.png [WAIT_SECONDS]
# The editor's LONGTAIL_EDITOR_* variables choose the tab, view, size and zoom. With
# EXPECT_NO_SCROLL=1 the tab must also fit its window without a vertical scroll.
# Needs: Xvfb, xdpyinfo and xwininfo (x11-utils), import and identify (imagemagick), python3.
# Exit 0 when the window appeared, the PNG is not blank and nothing overflows; 3 when the
# window stayed blank; 1 for any other failure.
set -euo pipefail
bin="${1:?usage: editor-screenshot.sh STANDALONE_BINARY OUT.png [WAIT_SECONDS]}"
out="${2:?missing OUT.png}"
wait_s="${3:-4}"
source "$(dirname "$0")/editor-lib.sh"
editor_need Xvfb xdpyinfo xwininfo import identify python3
editor_start_display
editor_start_standalone "$bin"
sleep "$wait_s"
# Whether the screenshot is a drawn editor: at least 16 colours with some spread.
looks_drawn() {
  [ "$colors" -ge 16 ] && python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.01 else 1)" "$sd"
}
# In two clean-clone CI runs of four (2026-12-03), the editor test's last shot (the first-order
# Ambisonics bus) was a blank window after the wait, once still after 10 s more; alone, or three
# at once beside busy SCHED_IDLE processes (as CI's background release build runs), it drew at
# once in 21 tries. Cause unknown: the capture is taken again, up to 10 s more, before the window
# counts as blank; a blank one prints the standalone's log and the window tree and exits 3, and
# the `editor` test then runs that shot once more from a fresh display and standalone.
for attempt in $(seq 20); do
  editor_alive
  import -window root -crop "$editor_geom" +repage "$out"
  colors="$(identify -format '%k' "$out")"
  sd="$(identify -format '%[fx:standard_deviation]' "$out")"
  looks_drawn && break
  [ "$attempt" -lt 20 ] && sleep 0.5
done
echo "editor window $editor_geom, $colors colours, pixel std-dev $sd (capture $attempt)"
echo "screenshot: $out"
if ! looks_drawn; then
  cat "$editor_work/standalone.log" >&2
  xwininfo -root -tree >&2 || true
  echo "the screenshot looks blank" >&2
  exit 3
fi
overflow="$(editor_probe_get 'd["overflow"]')"
scroll="$(editor_probe_get 'd["scroll_overflow"]')"
scroll_y="$(editor_probe_get 'd["scroll_overflow_y"]')"
echo "probe: tab $(editor_probe_get 'd["tab"]'), window $(editor_probe_get 'd["window"]'), overflow $overflow, scroll overflow $scroll, vertical scroll $scroll_y, slowest frame $(editor_probe_get 'd["slowest_frame_ms"]') ms of $(editor_probe_get 'd["frames"]')+ frames"
if ! python3 -c "import sys, json; o = json.loads(sys.argv[1]); sys.exit(0 if max(o) <= 0.5 and float(sys.argv[2]) <= 0.5 else 1)" "$overflow" "$scroll"; then
  echo "content runs past the window (right, bottom: $overflow) or past a scroll area ($scroll)" >&2
  exit 1
fi
if [ "${EXPECT_NO_SCROLL:-0}" = 1 ] && ! python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 0.5 else 1)" "$scroll_y"; then
  echo "the tab needs a vertical scroll of $scroll_y points at this size" >&2
  exit 1
fi
