# Sourced by scripts/editor-screenshot.sh and scripts/editor-interact.sh: a private Xvfb
# display, the standalone on it with the editor's probe on (LONGTAIL_EDITOR_PROBE, see
# plugin/src/editor/probe.rs), and cleanup of both on exit.
#
# The screen is 1600 x 1100: more than twice the editor's default size (720 x 480).
# Needs: Xvfb, xdpyinfo and xwininfo (x11-utils), python3.

editor_work="$(mktemp -d /tmp/longtail-editor.XXXXXX)"
editor_pids=()
editor_probe="$editor_work/probe.json"

editor_cleanup() {
  local pid
  for pid in "${editor_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 0.3
  for pid in "${editor_pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$editor_work"
}
trap editor_cleanup EXIT

editor_need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "editor: '$tool' not found (scripts/deps.sh installs it)" >&2; exit 2; }
  done
}

# Starts Xvfb on a display it picks itself (-displayfd: no race with another test's) and
# exports DISPLAY.
editor_start_display() {
  Xvfb -displayfd 3 -screen 0 1600x1100x24 -nolisten tcp -noreset \
    3>"$editor_work/display" >"$editor_work/xvfb.log" 2>&1 &
  editor_pids+=($!)
  for _ in $(seq 100); do [ -s "$editor_work/display" ] && break; sleep 0.1; done
  [ -s "$editor_work/display" ] || { cat "$editor_work/xvfb.log" >&2; echo "Xvfb did not start" >&2; exit 1; }
  export DISPLAY=":$(head -n 1 "$editor_work/display")"
  for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
  xdpyinfo >/dev/null 2>&1 || { cat "$editor_work/xvfb.log" >&2; echo "Xvfb did not answer" >&2; exit 1; }
}

# Starts the standalone BIN on the dummy backend (plus LONGTAIL_STANDALONE_ARGS, e.g.
# `--audio-layout 12`) and waits for its window and the probe's first record. Sets
# editor_standalone (its pid) and editor_geom (WxH+X+Y).
editor_start_standalone() {
  export LONGTAIL_EDITOR_PROBE="$editor_probe"
  # shellcheck disable=SC2086
  "$1" --backend dummy ${LONGTAIL_STANDALONE_ARGS:-} >"$editor_work/standalone.log" 2>&1 &
  editor_standalone=$!
  editor_pids+=("$editor_standalone")
  editor_geom=""
  for _ in $(seq 150); do
    editor_alive
    # The first named top-level window bigger than 1x1: '0x200003 "Longtail": ()  720x480+0+0  +0+0'
    editor_geom="$(xwininfo -root -children 2>/dev/null | awk '/^ +0x[0-9a-f]+ "/ && $0 !~ / 1x1\+/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+x[0-9]+\+-?[0-9]+\+-?[0-9]+$/) { print $i; exit } }')"
    [ -n "$editor_geom" ] && [ -s "$editor_probe" ] && break
    sleep 0.1
  done
  [ -n "$editor_geom" ] || { xwininfo -root -tree >&2; cat "$editor_work/standalone.log" >&2; echo "no editor window" >&2; exit 1; }
}

# Fails when the standalone has exited: under the tests' build, nice-plug's
# assert_process_allocs aborts it on any allocation in process().
editor_alive() {
  if ! kill -0 "$editor_standalone" 2>/dev/null; then
    cat "$editor_work/standalone.log" >&2
    echo "the standalone exited" >&2
    exit 1
  fi
}

# Prints a value of the probe's last record: editor_probe_get 'd["params"]["Pre-delay"]["plain"]'
editor_probe_get() {
  python3 - "$editor_probe" "$1" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
print(eval(sys.argv[2], {"d": d}))
PY
}
