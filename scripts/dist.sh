#!/usr/bin/env bash
# The release archives: `bash scripts/dist.sh [--build-only] [linux|windows|all]` (all by
# default; --build-only builds without packing: scripts/test.sh runs it in the background).
#
# For each OS it builds the release bundles (`cargo xtask bundle longtail --release`, with
# `--target x86_64-pc-windows-gnu` for Windows), which land in target/bundled/<triple>/ (each
# target its own folder, see xtask/src/main.rs), and the release `longtail-cli` built with
# them, then writes into target/dist/:
#   longtail-<version>-linux-x86_64.tar.gz    Longtail.clap, Longtail.vst3/, the standalone
#                                             `longtail`, `longtail-cli`, install.sh,
#   longtail-<version>-windows-x86_64.zip     Longtail.clap, Longtail.vst3/, Longtail.exe,
#                                             longtail-cli.exe,
# each with README.txt (install, first use, logs), LICENSE and SHA256SUMS (sha256sum's format,
# every other file of the archive), inside one folder named like the archive. The version is the
# workspace's; README.txt names the commit too (plugin/build.rs). About 6 minutes per OS from a
# clean target dir on a 2-core machine (scripts/test.sh starts the same builds in the background
# while its tests run, so here they are up to date); `bash scripts/dist-check.sh` tests the
# archives.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

build_only=false
if [ "${1:-}" = --build-only ]; then
    build_only=true
    shift
fi
which=${1:-all}
case "$which" in
    linux | windows | all) ;;
    *)
        echo "usage: scripts/dist.sh [--build-only] [linux|windows|all]" >&2
        exit 2
        ;;
esac

packages=("${LONGTAIL_APT_PACKAGES[@]}" "${LONGTAIL_DIST_APT_PACKAGES[@]}")
if [ "$which" != linux ]; then
    packages+=("${LONGTAIL_WINDOWS_APT_PACKAGES[@]}")
fi
longtail_install_packages "${packages[@]}"

target_dir=$(realpath -m "${CARGO_TARGET_DIR:-target}")
dist_dir="$target_dir/dist"
mkdir -p "$dist_dir"
version=$(cargo pkgid -p longtail)
version=${version##*[@#]}
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# Every file in the archives gets the commit's time, so the same commit packs the same bytes.
epoch=$(git log -1 --format=%ct 2>/dev/null || echo 0)

# Writes README.txt (from scripts/dist/README-OS.txt, with the version and commit filled in),
# LICENSE and SHA256SUMS into the staged folder $1.
finish_stage() {
    local stage="$1" os="$2"
    sed -e "s/@VERSION@/$version/g" -e "s/@COMMIT@/$commit/g" \
        "scripts/dist/README-$os.txt" > "$stage/README.txt"
    cp LICENSE "$stage/LICENSE"
    if [ "$os" = windows ]; then
        # Windows line ends for the texts a Windows user opens.
        sed -i 's/$/\r/' "$stage/README.txt" "$stage/LICENSE"
    fi
    (cd "$stage" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort |
        xargs -d '\n' sha256sum > SHA256SUMS)
}

# A fresh staging folder for the archive named $1, with the target $2's bundles (from
# target/bundled/$2/): the CLAP, the VST3 bundle, and the standalone $3 as $4.
stage_bundles() {
    local stage="$dist_dir/$1" bundled="$target_dir/bundled/$2"
    rm -rf "$stage"
    mkdir -p "$stage"
    cp "$bundled/Longtail.clap" "$stage/"
    cp -r "$bundled/Longtail.vst3" "$stage/"
    cp "$bundled/$3" "$stage/$4"
    printf '%s' "$stage"
}

# The builds first (both, when both are asked for), then the archives.
if [ "$which" != windows ]; then
    cargo xtask bundle longtail --release --locked
fi
if [ "$which" != linux ]; then
    longtail_add_windows_target
    cargo xtask bundle longtail --release --locked --target x86_64-pc-windows-gnu
fi
if [ "$build_only" = true ]; then
    exit 0
fi

if [ "$which" != windows ]; then
    triple=x86_64-unknown-linux-gnu
    name="longtail-$version-linux-x86_64"
    stage=$(stage_bundles "$name" "$triple" Longtail longtail)
    # The release profile keeps the symbol table (for profilers); the archive's binaries do not.
    strip -o "$stage/longtail-cli" "$target_dir/release/longtail-cli"
    cp scripts/dist/install.sh "$stage/install.sh"
    chmod 755 "$stage/install.sh" "$stage/longtail" "$stage/longtail-cli"
    finish_stage "$stage" linux
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
        -C "$dist_dir" -czf "$dist_dir/$name.tar.gz" "$name"
    echo "dist: $dist_dir/$name.tar.gz"
fi

if [ "$which" != linux ]; then
    triple=x86_64-pc-windows-gnu
    name="longtail-$version-windows-x86_64"
    stage=$(stage_bundles "$name" "$triple" Longtail.exe Longtail.exe)
    x86_64-w64-mingw32-strip -o "$stage/longtail-cli.exe" \
        "$target_dir/$triple/release/longtail-cli.exe"
    finish_stage "$stage" windows
    find "$stage" -exec touch -h -d "@$epoch" {} +
    rm -f "$dist_dir/$name.zip"
    (cd "$dist_dir" && find "$name" | LC_ALL=C sort | zip -X -q -@ "$name.zip")
    echo "dist: $dist_dir/$name.zip"
fi

ls -l "$dist_dir"/*.tar.gz "$dist_dir"/*.zip 2>/dev/null || true
