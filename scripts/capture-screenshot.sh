#!/usr/bin/env bash
# The Capture tab measuring a room, at 720 x 480: runs plugin/tests/jack_capture.rs in its
# screenshot mode on a private Xvfb display. The standalone opens its editor on the Capture tab
# and measures the test's known room through a JACK server (the dummy driver); the test writes
# OUT_DIR/capture-recording.png mid-sweep and OUT_DIR/capture-result.png once the IR is saved.
# (scripts/editor-screenshot.sh with LONGTAIL_EDITOR_TAB=capture gives the idle tab.)
#
# Usage: scripts/capture-screenshot.sh OUT_DIR
# Needs what scripts/editor-screenshot.sh needs, and jackd (jackd2).
set -euo pipefail
out="$(realpath -m "${1:?usage: capture-screenshot.sh OUT_DIR}")"
mkdir -p "$out"
cd "$(dirname "$0")/.."
source scripts/editor-lib.sh
editor_need Xvfb xdpyinfo xwininfo import jackd
editor_start_display
LONGTAIL_CAPTURE_SHOTS="$out" cargo test -p longtail --test jack_capture -- --nocapture
