#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages Longtail needs to build and test, when any is missing.
# As root it runs apt-get; otherwise it uses `sudo -n` if that works without a password, and
# else prints the exact command to run and fails. Sourced by scripts/main.sh, scripts/test.sh and
# scripts/windows.sh.
set -euo pipefail

LONGTAIL_APT_PACKAGES=(
    pkg-config build-essential
    # The standalone's audio backends (JACK, ALSA) and the test host for it.
    libasound2-dev libjack-jackd2-dev jackd2
    # Windowing for the editor (baseview, egui) and headless screenshots.
    libx11-dev libxcursor-dev libxrandr-dev libxi-dev libx11-xcb-dev libxcb1-dev
    libxcb-icccm4-dev libxcb-dri2-0-dev libgl1-mesa-dev xvfb
    libgl1-mesa-dri x11-utils imagemagick
    # The editor tests drive the window with the mouse and the keyboard.
    xdotool
    # The Vulkan loader, and Mesa's lavapipe (Vulkan on the CPU) so the GPU kernels and the
    # GPU engine tests run on machines without a GPU.
    libvulkan1 mesa-vulkan-drivers
)

# The Windows build and its tests (scripts/windows.sh): the mingw-w64 cross toolchain (linker,
# dlltool for the import libraries) and Wine's 64-bit loader.
LONGTAIL_WINDOWS_APT_PACKAGES=(mingw-w64 wine64)

# The release archives (scripts/dist.sh) and their checks (scripts/dist-check.sh), and the GPU
# check's pack step (scripts/gpu-check.sh --pack): zip for the Windows archive, file to tell
# ELF from PE32+, xz for the packed binaries.
LONGTAIL_DIST_APT_PACKAGES=(zip unzip file xz-utils)

# The packages of "$@" that are not installed, one a line.
longtail_missing_packages() {
    local pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            printf '%s\n' "$pkg"
        fi
    done
}

# Installs the packages of "$@" that are missing (see the top of this file for how), and checks
# that cargo is there.
longtail_install_packages() {
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "deps: not a Debian/Ubuntu system; install the equivalents of: $*" >&2
    else
        local missing
        missing=$(longtail_missing_packages "$@" | tr '\n' ' ')
        if [ -n "${missing// /}" ]; then
            local apt=(apt-get install -y --no-install-recommends $missing)
            if [ "$(id -u)" -eq 0 ]; then
                echo "deps: installing $missing"
                apt-get update -qq
                DEBIAN_FRONTEND=noninteractive "${apt[@]}"
            elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
                echo "deps: installing $missing (sudo)"
                sudo -n apt-get update -qq
                sudo -n env DEBIAN_FRONTEND=noninteractive "${apt[@]}"
            else
                echo "deps: missing packages. Run as root, then run this command again:" >&2
                echo "  sudo apt-get update && sudo ${apt[*]}" >&2
                exit 1
            fi
        fi
    fi
    if ! command -v cargo >/dev/null 2>&1; then
        echo "deps: cargo not found. Install Rust 1.89 or newer (https://rustup.rs), then run this command again." >&2
        exit 1
    fi
}

# What Longtail's Linux build and tests need.
longtail_install_deps() {
    longtail_install_packages "${LONGTAIL_APT_PACKAGES[@]}"
}

# Rust's Windows target (the cross build of scripts/windows.sh and scripts/dist.sh).
longtail_add_windows_target() {
    if ! rustup target list --installed | grep -qx x86_64-pc-windows-gnu; then
        rustup target add x86_64-pc-windows-gnu
    fi
}
