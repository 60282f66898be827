#!/usr/bin/env bash
# The tests: installs what is missing, then runs the whole test suite (unit tests, engine
# accuracy, the CLI, the standalone on the dummy backend, a real CLAP host loading the plugin),
# then the Windows build's tests under Wine (scripts/windows.sh), the GPU check's dry run
# (scripts/gpu-check-dry-run.sh) and the release archives (scripts/dist.sh,
# scripts/dist-check.sh).
#
#   bash scripts/test.sh            everything (what .ci/run calls)
#   bash scripts/test.sh --quick    the Linux suite and the docs' link check only: the
#                                   edit-test loop (no Windows build, archives or dry run)
#
# It ends with a table of its steps, their wall times and the CPU left idle, on failure too
# (the step that failed is marked).
# The tests build the dev profile once per OS (opt-level 1 but for the few dependencies the tests
# feel, see Cargo.toml; debug assertions on, so nice-plug's assert_process_allocs aborts on any
# allocation in process()); the archives the release profile, once per target, in the background
# at idle priority while the tests run.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false
case "${1:-}" in
    "") ;;
    --quick) quick=true ;;
    -h | --help)
        sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "usage: scripts/test.sh [--quick]" >&2
        exit 2
        ;;
esac

# The step table: `step NAME COMMAND...` runs COMMAND and records its wall time and the share of
# the machine's CPU time that was idle meanwhile (from /proc/stat, all cores: what the background
# release builds could still have used); the table is printed when the script exits, however it
# exits.
step_names=()
step_seconds=()
step_idle=()
step_running=
suite_start=$SECONDS
# "IDLE TOTAL": the machine's idle and total CPU time since boot, in clock ticks.
cpu_ticks() {
    awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print $5 + $6, t; exit }' /proc/stat
}
suite_ticks=$(cpu_ticks)
# The idle share in percent between two cpu_ticks readings.
idle_percent() {
    local idle0 total0 idle1 total1
    read -r idle0 total0 <<<"$1"
    read -r idle1 total1 <<<"$2"
    echo $(((idle1 - idle0) * 100 / (total1 - total0 > 0 ? total1 - total0 : 1)))
}
step() {
    local name="$1" start=$SECONDS ticks
    ticks=$(cpu_ticks)
    shift
    step_running=$name
    "$@"
    step_names+=("$name")
    step_seconds+=($((SECONDS - start)))
    step_idle+=("$(idle_percent "$ticks" "$(cpu_ticks)")")
    step_running=
}
step_table() {
    local rc=$? i
    echo
    echo "== scripts/test.sh steps (wall time; CPU idle meanwhile, all cores)"
    for i in "${!step_names[@]}"; do
        printf '%-44s %5d s  %3d %% idle\n' "${step_names[$i]}" "${step_seconds[$i]}" \
            "${step_idle[$i]}"
    done
    if [ -n "$step_running" ]; then
        printf '%-44s %5s\n' "$step_running (FAILED)" "-"
    fi
    printf '%-44s %5d s (%d min)%s, %d %% idle\n' "total" $((SECONDS - suite_start)) \
        $(((SECONDS - suite_start + 30) / 60)) "$([ "$rc" -eq 0 ] || echo ", exit $rc")" \
        "$(idle_percent "$suite_ticks" "$(cpu_ticks)")"
}

# The release builds run in the background (see below); whatever ends the script ends them too.
release_pid=
on_exit() {
    local rc=$?
    if [ -n "$release_pid" ]; then
        kill -- -"$release_pid" 2>/dev/null || true
    fi
    (exit "$rc")
    step_table
}
trap on_exit EXIT

source scripts/deps.sh
if [ "$quick" = true ]; then
    step "system packages" longtail_install_deps
else
    # Everything up front, the Windows toolchain and the archives' tools too: the release builds
    # below start in the background while the other steps still run.
    step "system packages" longtail_install_packages "${LONGTAIL_APT_PACKAGES[@]}" \
        "${LONGTAIL_WINDOWS_APT_PACKAGES[@]}" "${LONGTAIL_DIST_APT_PACKAGES[@]}"
    step "rust: windows target" longtail_add_windows_target
fi

# CI builds once from a clean checkout: incremental caches would only add gigabytes to its disk.
# CI has lavapipe installed (deps.sh), so a missing GPU adapter fails the GPU tests there
# instead of skipping them.
if [ "${CI:-}" = true ]; then
    export CARGO_INCREMENTAL=0
    export LONGTAIL_REQUIRE_GPU=1
fi
# One build serves every test: the workspace turns on nice-plug's `assert_process_allocs` (the
# host tests need it), and the IR decoder and state tests then run under the kernel's data limit
# as their allocation guard (any single allocation over 1 GiB fails them;
# plugin/tests/support/alloc_guard.rs). They used to run first in a build of their own, without
# the feature: 4 to 5 minutes of CI for the same tests.

# The release builds of both OSes (scripts/dist.sh --build-only: the same commands), started now
# in the background at the scheduler's idle priority (SCHED_IDLE): they get a core only when no
# other process wants it. The suite leaves much time on the table (the editor, host and pacing
# tests wait on real time, one test binary runs at a time, and Wine's tests run one process), and
# the builds take it, instead of 15 minutes of their own at the end. They write target/release,
# target/x86_64-pc-windows-gnu/release and target/bundled/ only, never the debug libraries the
# host tests load. "release archives: wait for the builds" waits for them, then dist.sh packs (its
# cargo calls are then up to date). Job control (set -m) makes the job its own process group, so
# on_exit ends all of it. Not setsid: a new session is a new scheduler autogroup, which the kernel
# weighs equal to the tests' whole session, whatever the priority inside it (tried: the idle
# builds then took half the CPU from the test build).
# Linux's first: once it is done (the marker file), the GPU check's dry run below packs its CLI
# while Windows' still builds.
release_log="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release-build.log"
linux_release_done="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release-build-linux.done"
if [ "$quick" = false ]; then
    mkdir -p "$(dirname "$release_log")"
    rm -f "$linux_release_done"
    set -m
    chrt --idle 0 bash -c 'bash scripts/dist.sh --build-only linux && touch "$1" &&
        bash scripts/dist.sh --build-only windows' release-builds "$linux_release_done" \
        >"$release_log" 2>&1 &
    release_pid=$!
    set +m
    echo "release builds: in the background (pid $release_pid), log $release_log"
fi
wait_release_builds() {
    local rc=0
    if [ -n "$release_pid" ]; then
        wait "$release_pid" || rc=$?
    fi
    release_pid=
    if [ "$rc" -ne 0 ]; then
        echo "release builds failed ($rc); the end of $release_log:" >&2
        tail -40 "$release_log" >&2
        return 1
    fi
    grep "Finished" "$release_log" || true
}
# Waits for the Linux release build only (the background job ends early only if it failed).
wait_linux_release_build() {
    while [ ! -e "$linux_release_done" ]; do
        if ! kill -0 "$release_pid" 2>/dev/null; then
            wait_release_builds || return 1
            [ -e "$linux_release_done" ] || return 1
        fi
        sleep 2
    done
}

step "linux: workspace build" cargo test --workspace --exclude xtask --locked --no-run
step "linux: workspace tests" cargo test --workspace --exclude xtask --locked

# Every relative link and repository path the README and docs/ name exists.
step "docs: link check" bash scripts/check-links.sh

if [ "$quick" = true ]; then
    exit 0
fi

# The Windows build, cross-built and tested under Wine (about 11 minutes from a clean target
# dir on a 2-core machine, under a minute when only our crates changed).
# The workspace tests' Linux CLI (target/debug/longtail-cli) makes the reference render.
step "windows: build and tests under Wine" \
    env LONGTAIL_LINUX_CLI="$(realpath -m "${CARGO_TARGET_DIR:-target}")/debug/longtail-cli" \
    bash scripts/windows.sh

# The GPU check packed from the Linux release CLI and the test build, and run from a clean copy
# of the tree on lavapipe, with no cargo on PATH (what a lent GPU machine gets). It runs while
# the Windows release build goes on in the background, which takes the CPU it leaves (it waits
# on real time for much of its run); the CLI is passed in, since building it would wait for that
# build's lock on target/release/.
step "release build: wait for Linux" wait_linux_release_build
step "GPU check: dry run" env GPU_CHECK_BUILT_CLI="$(realpath -m \
    "${CARGO_TARGET_DIR:-target}")/release/longtail-cli" bash scripts/gpu-check-dry-run.sh

# The release archives, each target built once (scripts/dist.sh), then tested as a user meets
# them: checksums, install into a temporary HOME, the installed plugin in the CLAP host test,
# the installed CLI and standalone, uninstall, the Windows CLI under Wine.
step "release archives: wait for the builds" wait_release_builds
step "release archives: pack" bash scripts/dist.sh
step "release archives: check" bash scripts/dist-check.sh

# The editor tests leave their Xvfb screenshots here (CI artifacts): each view at the minimum,
# the default and twice the default size, the zooms, the wide buses, before and after the
# interaction test.
for png in target/debug/editor-*.png; do
    [ -f "$png" ] && echo "editor screenshot: $PWD/$png"
done
