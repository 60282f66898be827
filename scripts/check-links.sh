#!/usr/bin/env bash
# Checks that what the README and the guide pages name exists: `bash scripts/check-links.sh`.
# The pages are README.md and docs/*.md. In each page:
#
# - Links: every markdown link or image, `[x](PATH)` or `![x](PATH)`, outside code, must resolve
#   relative to the page's folder (a PATH starting with / relative to the repository root).
#   Not checked: http:, https: and mailto: links, and pure `#anchor` links; a `#anchor` suffix
#   is cut off and the anchor itself is not checked.
# - Repository paths: every word (split at spaces) of an inline code span (`...`, outside fenced
#   blocks) and of every line of a fenced code block (``` or ~~~) that, once stripped of
#   surrounding quotes, brackets and trailing punctuation, starts with one of the repository's
#   top-level entries below must exist relative to the repository root. Directories count as
#   entries with their slash (`plugin/`, so `plugin` alone is not checked), files by their
#   whole name (`Cargo.toml`). A `:line` or `::item` suffix is cut off first.
#
#     plugin/ gpu/ xtask/ tests/ scripts/ docs/ .ci/ .cargo/
#     Cargo.toml Cargo.lock bundler.toml README.md LICENSE
#
#   Skipped by rule: build outputs and other paths git ignores (`git check-ignore`:
#   target/, demo-out/, gpu-pack/, plugin/fuzz/artifacts/, ...; outside a git checkout only the
#   first three), paths starting with ~ or ../ (outside the repository: ../shared is the team's
#   shared folder), globs (a word with *, ? or [) and words with a placeholder or a variable
#   (<, >, {, } or $). Relative paths that start with none of the entries (src/lib.rs, ./x) are
#   not candidates at all.
#
# Prints each miss as `FILE:LINE: missing PATH` (PATH as the page writes it) and exits 1 if there
# is any; else prints one summary line and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."

shopt -s nullglob
pages=(README.md docs/*.md)
shopt -u nullglob

# One record per candidate: PAGE <tab> LINE <tab> link|path <tab> TARGET.
extract() {
    awk '
    function candidate_word(w, line,    i, n, entries, e) {
        # Strip what surrounds a path in prose and shell: quotes, brackets, punctuation.
        while (w ~ /^[[("'\'']/) w = substr(w, 2)
        while (w ~ /[])"'\'',;.]$/) w = substr(w, 1, length(w) - 1)
        sub(/:.*$/, "", w)
        if (w == "") return
        n = split("plugin/ gpu/ xtask/ tests/ scripts/ docs/ .ci/ .cargo/", entries, " ")
        for (i = 1; i <= n; i++) {
            e = entries[i]
            if (substr(w, 1, length(e)) == e) { emit(line, "path", w); return }
        }
        n = split("Cargo.toml Cargo.lock bundler.toml README.md LICENSE", entries, " ")
        for (i = 1; i <= n; i++) if (w == entries[i]) { emit(line, "path", w); return }
    }
    function emit(line, kind, target) {
        if (kind == "path") {
            if (target ~ /[*?[]/) return            # a glob
            if (target ~ /[<>{}$]/) return          # a placeholder or a variable
        }
        printf "%s\t%d\t%s\t%s\n", FILENAME, line, kind, target
    }
    function code_words(s, line,    n, i, w) {
        n = split(s, w, /[ \t]+/)
        for (i = 1; i <= n; i++) if (w[i] != "") candidate_word(w[i], line)
    }
    function links(s, line,    t) {
        while (match(s, /[]][(][^)]*[)]/)) {
            t = substr(s, RSTART + 2, RLENGTH - 3)
            s = substr(s, RSTART + RLENGTH)
            sub(/^[ \t]+/, "", t)
            sub(/[ \t]+".*$/, "", t)                # a title: [x](path "title")
            sub(/^</, "", t); sub(/>$/, "", t)
            if (t == "" || t ~ /^#/ || t ~ /^(https?|mailto):/) continue
            sub(/#.*$/, "", t)
            emit(line, "link", t)
        }
    }
    FNR == 1 { fence = 0; span = 0 }
    /^[ \t]*(```|~~~)/ { fence = !fence; span = 0; next }
    fence { code_words($0, FNR); next }
    /^[ \t]*$/ { span = 0; next }                  # a code span ends with its paragraph
    {
        n = split($0, seg, "`")
        for (i = 1; i <= n; i++) {
            if (span) code_words(seg[i], FNR); else links(seg[i], FNR)
            if (i < n) span = !span
        }
    }
    ' "$@"
}

records=$(extract "${pages[@]}")

# The paths git ignores (build outputs), asked in one call.
declare -A ignored=()
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    while IFS= read -r p; do
        ignored[$p]=1
    done < <(printf '%s\n' "$records" | awk -F'\t' '$3 == "path" { print $4 }' | sort -u |
        git check-ignore --stdin || true)
fi

links=0 paths=0 missing=0
while IFS=$'\t' read -r page line kind target; do
    [ -n "$page" ] || continue
    if [ "$kind" = link ]; then
        links=$((links + 1))
        case "$target" in
            /*) resolved=".$target" ;;
            *) resolved="$(dirname "$page")/$target" ;;
        esac
    else
        case "$target" in
            target/* | demo-out/* | gpu-pack/* | "~"* | ../*) continue ;;
        esac
        [ -z "${ignored[$target]:-}" ] || continue
        paths=$((paths + 1))
        resolved=$target
    fi
    if [ ! -e "$resolved" ]; then
        echo "$page:$line: missing $target"
        missing=$((missing + 1))
    fi
done <<<"$records"

if [ "$missing" -gt 0 ]; then
    echo "check-links: $missing missing of $links links and $paths paths in ${#pages[@]} pages" >&2
    exit 1
fi
echo "check-links: $links links and $paths paths in ${#pages[@]} pages, all present"
