#!/usr/bin/env bash
# Wine for Longtail's Windows checks, sourced by scripts/windows.sh and scripts/dist-check.sh.
# `longtail_wine_setup TARGET_DIR` makes (once) our own prefix under TARGET_DIR/windows, never
# ~/.wine, and exports what every Wine command of the caller needs; WINE and WINESERVER name
# the loader and the server. Call it inside the caller's one xvfb-run: every Wine process of a
# script shares one display and so one wineserver (an xvfb-run per command let a wineserver
# and its desktop process, which outlive the programs by seconds, lose their display when that
# xvfb-run ended, and take the next program down with them).

readonly WINE=/usr/lib/wine/wine64
readonly WINESERVER=/usr/lib/wine/wineserver

longtail_wine_setup() {
    local windows_dir="$1/windows"
    mkdir -p "$windows_dir"
    export WINEPREFIX="$windows_dir/wine-prefix"
    export WINEDEBUG=-all
    # No Mono or Gecko installers (and their dialogs) while the prefix is made. No d3d12: Wine's
    # (vkd3d) lists a made-up "NVIDIA GeForce GTX 470" adapter whose device is lost at once,
    # which wgpu would prefer; without it the Windows build's Vulkan backend finds the
    # machine's Vulkan driver through winevulkan (lavapipe in CI).
    export WINEDLLOVERRIDES="mscoree,mshtml,d3d12="
    # A wineserver left from an earlier run would still talk to that run's display: stop it,
    # and stop ours before the display goes away.
    "$WINESERVER" -k 2>/dev/null || true
    trap '"$WINESERVER" -k 2>/dev/null || true' EXIT
    if [ ! -f "$WINEPREFIX/system.reg" ]; then
        echo "wine: making the Wine prefix $WINEPREFIX"
        "$WINE" wineboot --init
        "$WINESERVER" -w
    fi
    # Rust's standard library imports ProcessPrng from bcryptprimitives.dll, which Debian's
    # Wine 8.0 lacks: without it every Rust program stops at load under Wine (c0000135, DLL not
    # found). The prefix gets a stand-in built here with mingw (scripts/wine/processprng.c, on
    # RtlGenRandom).
    local standin="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
    local source
    source="$(dirname "${BASH_SOURCE[0]}")/processprng.c"
    if [ ! -f "$standin" ] || [ "$source" -nt "$standin" ]; then
        x86_64-w64-mingw32-gcc -O2 -shared -o "$standin" "$source" -ladvapi32
    fi
}
