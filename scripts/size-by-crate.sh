#!/usr/bin/env bash
# Where the bytes of a binary go, by crate: `bash scripts/size-by-crate.sh FILE [N]` prints the
# N (20) crates with the most code and data in FILE's symbol table (demangled; a symbol is
# counted for the first `crate::` path in its name, so a generic instantiated by another crate
# counts for the crate that defines the function), then the sections' sizes. FILE needs its
# symbol table: build with `--config profile.release.strip=false` (the release profile strips),
# or use a dev build. Needs binutils (nm, size); mingw's for a Windows file.
set -euo pipefail
file=${1:?usage: scripts/size-by-crate.sh FILE [N]}
top=${2:-20}
nm_tool="nm"
size_tool="size"
if file -b "$file" | grep -q PE32; then
    nm_tool=x86_64-w64-mingw32-nm
    size_tool=x86_64-w64-mingw32-size
fi
total=$(stat -c %s "$file")
"$nm_tool" -S -t d --defined-only -C "$file" 2>/dev/null | awk '
    NF >= 4 && $2 ~ /^[0-9]+$/ {
        name = $0
        sub(/^[0-9]+ [0-9]+ . /, "", name)
        crate = "[no crate path: C, data, anonymous]"
        if (match(name, /[A-Za-z_][A-Za-z0-9_]*::/)) {
            crate = substr(name, RSTART, RLENGTH - 2)
            if (crate == "core" || crate == "alloc" || crate == "std") crate = "std (core, alloc)"
        }
        bytes[crate] += $2
    }
    END { for (crate in bytes) printf "%d\t%s\n", bytes[crate], crate }' |
    sort -t "$(printf '\t')" -k1,1nr | awk -F '\t' -v total="$total" -v top="$top" '
    NR == 1 { printf "%-40s %10s %6s\n", "crate", "bytes", "file%" }
    NR <= top { printf "%-40s %10d %5.1f%%\n", $2, $1, 100 * $1 / total }
    { sum += $1 }
    END {
        printf "%-40s %10d %5.1f%%\n", "(all symbols)", sum, 100 * sum / total
        printf "%-40s %10d\n", "(file)", total
    }'
echo
"$size_tool" -A "$file" | awk 'NR > 2 && $2 > 100000 { printf "%-24s %10d\n", $1, $2 }'
