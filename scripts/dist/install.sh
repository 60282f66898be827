#!/bin/sh
# Longtail's installer for Linux, shipped in the release archive (scripts/dist.sh): run it from
# the unpacked folder. No root needed.
#
#   ./install.sh              install for this user, replacing any older Longtail
#   ./install.sh --uninstall  remove what it installs
#
# It installs Longtail.clap into ~/.clap, Longtail.vst3 into ~/.vst3, and the standalone
# `longtail` and `longtail-cli` into ~/.local/bin. CLAP_DIR, VST3_DIR and BIN_DIR choose other
# folders. Before installing it checks the archive's files against SHA256SUMS.
set -eu

clap_dir=${CLAP_DIR:-$HOME/.clap}
vst3_dir=${VST3_DIR:-$HOME/.vst3}
bin_dir=${BIN_DIR:-$HOME/.local/bin}
here=$(cd "$(dirname "$0")" && pwd)

# What this script puts in place, and so what --uninstall and a new install remove.
installed() {
    printf '%s\n' "$clap_dir/Longtail.clap" "$vst3_dir/Longtail.vst3" \
        "$bin_dir/longtail" "$bin_dir/longtail-cli"
}

remove_installed() {
    installed | while IFS= read -r path; do
        if [ -e "$path" ] || [ -L "$path" ]; then
            rm -rf "$path"
            echo "removed $path"
        fi
    done
}

case "${1:-}" in
    --uninstall)
        remove_installed
        echo "Longtail is uninstalled. Rescan plugins in your host."
        exit 0
        ;;
    "") ;;
    -h | --help)
        sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "install.sh: unknown option '$1' (--uninstall removes Longtail)" >&2
        exit 2
        ;;
esac

for file in Longtail.clap Longtail.vst3 longtail longtail-cli SHA256SUMS; do
    if [ ! -e "$here/$file" ]; then
        echo "install.sh: $here/$file is missing: unpack the whole archive and run this again" >&2
        exit 1
    fi
done
if command -v sha256sum >/dev/null 2>&1; then
    if ! (cd "$here" && sha256sum --quiet -c SHA256SUMS); then
        echo "install.sh: the files do not match SHA256SUMS: download the archive again" >&2
        exit 1
    fi
else
    echo "install.sh: sha256sum is not here; the files were not checked"
fi

# Copies go to a temporary name first and are renamed into place, so an interrupted install
# never leaves half a plugin where the host looks.
put() {
    src="$1"
    dest="$2"
    mkdir -p "$(dirname "$dest")"
    rm -rf "$dest.installing"
    cp -R "$src" "$dest.installing"
    rm -rf "$dest"
    mv "$dest.installing" "$dest"
    echo "installed $dest"
}

remove_installed
put "$here/Longtail.clap" "$clap_dir/Longtail.clap"
put "$here/Longtail.vst3" "$vst3_dir/Longtail.vst3"
put "$here/longtail" "$bin_dir/longtail"
put "$here/longtail-cli" "$bin_dir/longtail-cli"
chmod 755 "$bin_dir/longtail" "$bin_dir/longtail-cli"

echo "Longtail $("$bin_dir/longtail-cli" --version | sed 's/^longtail-cli //') is installed."
echo "Rescan plugins in your host and insert \"Longtail\" on a track or bus."
case ":$PATH:" in
    *":$bin_dir:"*) ;;
    *) echo "$bin_dir is not on your PATH: add it to run longtail and longtail-cli by name." ;;
esac
