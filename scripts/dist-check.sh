#!/usr/bin/env bash
# Tests the release archives that scripts/dist.sh wrote into target/dist/, as a user would meet
# them (run by scripts/test.sh after scripts/dist.sh; runs alone too):
#   both:    the SHA-256 list matches the files; the Linux bundles in target/bundled/ are ELF
#            and the Windows ones PE32+, after both builds (each target has its own folder);
#   Linux:   unpacks the archive, installs it with its install.sh into a temporary HOME, then
#            loads the installed Longtail.clap in the CLAP host test (LONGTAIL_PLUGIN_LIBRARY),
#            renders with the installed longtail-cli, runs
#            the installed standalone headless on the dummy backend, uninstalls, and checks that
#            nothing of Longtail is left in that HOME;
#   Windows: unpacks the archive and renders with its longtail-cli.exe under Wine: the output
#            must equal the Linux archive's render, byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
longtail_install_packages "${LONGTAIL_APT_PACKAGES[@]}" "${LONGTAIL_DIST_APT_PACKAGES[@]}" \
    "${LONGTAIL_WINDOWS_APT_PACKAGES[@]}"

# Wine runs on one X display for the whole script (scripts/wine/setup.sh).
if [ -z "${LONGTAIL_DIST_XVFB:-}" ]; then
    export LONGTAIL_DIST_XVFB=1
    exec xvfb-run -a bash "$PWD/scripts/dist-check.sh" "$@"
fi

target_dir=$(realpath -m "${CARGO_TARGET_DIR:-target}")
dist_dir="$target_dir/dist"
version=$(cargo pkgid -p longtail)
version=${version##*[@#]}
linux_archive="$dist_dir/longtail-$version-linux-x86_64.tar.gz"
windows_archive="$dist_dir/longtail-$version-windows-x86_64.zip"
for archive in "$linux_archive" "$windows_archive"; do
    if [ ! -f "$archive" ]; then
        echo "dist-check: $archive is missing: run scripts/dist.sh first" >&2
        exit 1
    fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/longtail-dist-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
    echo "dist-check: $*" >&2
    exit 1
}

echo "== each target's bundles in its own folder"
expect_type() {
    local path="$1" pattern="$2" what
    what=$(file -b "$path")
    echo "$path: $what"
    grep -q "$pattern" <<<"$what" || fail "$path is not $pattern"
}
linux_bundled="$target_dir/bundled/x86_64-unknown-linux-gnu"
windows_bundled="$target_dir/bundled/x86_64-pc-windows-gnu"
expect_type "$linux_bundled/Longtail.clap" "ELF 64-bit"
expect_type "$linux_bundled/Longtail.vst3/Contents/x86_64-linux/Longtail.so" "ELF 64-bit"
expect_type "$linux_bundled/Longtail" "ELF 64-bit"
expect_type "$windows_bundled/Longtail.clap" "PE32+"
expect_type "$windows_bundled/Longtail.vst3/Contents/x86_64-win/Longtail.vst3" "PE32+"
expect_type "$windows_bundled/Longtail.exe" "PE32+"

echo "== the archives and their checksums"
tar -xzf "$linux_archive" -C "$work"
unzip -q "$windows_archive" -d "$work"
linux_dir="$work/longtail-$version-linux-x86_64"
windows_dir="$work/longtail-$version-windows-x86_64"
for dir in "$linux_dir" "$windows_dir"; do
    echo "$(basename "$dir"):"
    (cd "$dir" && find . -type f -printf '  %P %s bytes\n' | LC_ALL=C sort)
    (cd "$dir" && sha256sum --quiet -c SHA256SUMS) || fail "$dir: SHA256SUMS does not match"
    listed=$(wc -l <"$dir/SHA256SUMS")
    files=$(find "$dir" -type f ! -name SHA256SUMS | wc -l)
    [ "$listed" -eq "$files" ] || fail "$dir: SHA256SUMS lists $listed files of $files"
done
expect_type "$linux_dir/longtail-cli" "ELF 64-bit"
expect_type "$windows_dir/longtail-cli.exe" "PE32+"

echo "== install into a temporary HOME"
home="$work/home"
mkdir -p "$home"
as_user() { env HOME="$home" PATH="$home/.local/bin:$PATH" "$@"; }
as_user "$linux_dir/install.sh"
installed_cli="$home/.local/bin/longtail-cli"
for path in "$home/.clap/Longtail.clap" "$home/.vst3/Longtail.vst3/Contents/x86_64-linux/Longtail.so" \
    "$home/.local/bin/longtail" "$installed_cli"; do
    [ -f "$path" ] || fail "install.sh did not install $path"
done
# A second run replaces the first cleanly.
as_user "$linux_dir/install.sh" >/dev/null
as_user longtail-cli --version

echo "== the CLAP host test on the installed Longtail.clap"
# Not the test that expects nice-plug's allocation abort: a release library has none.
# The workspace's feature set, as scripts/test.sh built it, so nothing is built again.
LONGTAIL_PLUGIN_LIBRARY="$home/.clap/Longtail.clap" cargo test --workspace --exclude xtask \
    --locked --test clap_host -- loading_and_parameters:: state:: latency_and_tail:: \
    prints_nothing_to_the_hosts_stdout_or_stderr

echo "== render with the installed longtail-cli"
renders="$work/renders"
as_user longtail-cli demo --output "$renders" >/dev/null
as_user longtail-cli render --ir "$renders/ir-hall.wav" --input "$renders/dry.wav" \
    --output "$renders/installed.wav"

echo "== the installed standalone, headless on the dummy backend"
rc=0
as_user timeout 5 longtail --headless --backend dummy >"$work/standalone.log" 2>&1 || rc=$?
if [ "$rc" -ne 124 ]; then
    cat "$work/standalone.log" >&2
    fail "the installed standalone exited with $rc instead of running"
fi
echo "the standalone ran until stopped"

echo "== uninstall"
as_user "$linux_dir/install.sh" --uninstall
left=$(find "$home" -iname '*longtail*')
[ -z "$left" ] || fail "left after --uninstall: $left"
echo "nothing of Longtail is left in $home"

echo "== the Windows archive's longtail-cli.exe under Wine"
source scripts/wine/setup.sh
longtail_wine_setup "$target_dir"
# The setup's exit trap stops the wineserver; this one also removes the work folder.
trap '"$WINESERVER" -k 2>/dev/null || true; rm -rf "$work"' EXIT
# Wine reads and writes the files through its Z: drive (the whole Linux file system).
"$WINE" "$windows_dir/longtail-cli.exe" --version
"$WINE" "$windows_dir/longtail-cli.exe" render --ir "$renders/ir-hall.wav" \
    --input "$renders/dry.wav" --output "$renders/windows.wav"
cmp "$renders/windows.wav" "$renders/installed.wav" ||
    fail "the Windows render differs from the Linux render"
echo "the Windows archive's render equals the Linux archive's, byte for byte"
echo "dist-check: all passed"
