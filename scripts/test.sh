#!/usr/bin/env bash
# The tests: installs what is missing, then runs the whole test suite (unit tests, engine
# accuracy, the CLI, the standalone on the dummy backend, a real CLAP host loading the plugin),
# then the Windows build's tests under Wine (scripts/windows.sh), the release archives
# (scripts/dist.sh, scripts/dist-check.sh) and the GPU check's dry run
# (scripts/gpu-check-dry-run.sh).
# The tests build the dev profile (our crates at opt-level 1, dependencies at 3, debug assertions
# on, so nice-plug's assert_process_allocs aborts on any allocation in process()); the archives
# the release profile, once per target.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
longtail_install_deps

# CI builds once from a clean checkout: incremental caches would only add gigabytes to its disk.
# CI has lavapipe installed (deps.sh), so a missing GPU adapter fails the GPU tests there
# instead of skipping them.
if [ "${CI:-}" = true ]; then
    export CARGO_INCREMENTAL=0
    export LONGTAIL_REQUIRE_GPU=1
fi
# The IR decoder and state tests under the tests' allocation guard (any single allocation over
# 1 GiB fails them; plugin/tests/support/alloc_guard.rs). The workspace run below turns on
# nice-plug's `assert_process_allocs` for the plugin (the host tests need it), whose allocator is
# then the global one, so these run first on their own, where it is off. First, so that the
# plugin library the host tests load is the one the workspace run builds last.
cargo test -p longtail --locked --test ir_formats --test ir_mutation --test ir_state
cargo test --workspace --exclude xtask --locked

# The Windows build, cross-built and tested under Wine (about 11 minutes from a clean target
# dir on a 2-core machine, under a minute when only our crates changed).
bash scripts/windows.sh

# The release archives, each target built once (scripts/dist.sh), then tested as a user meets
# them: checksums, install into a temporary HOME, the installed plugin in the CLAP host test,
# the installed CLI and standalone, uninstall, the Windows CLI under Wine.
bash scripts/dist.sh
bash scripts/dist-check.sh

# The GPU check packed from the builds above and run from a clean copy of the tree on lavapipe,
# with no cargo on PATH (what a lent GPU machine gets).
bash scripts/gpu-check-dry-run.sh

# The editor tests leave their Xvfb screenshots here (CI artifacts): each view at the minimum,
# the default and twice the default size, the zooms, the wide buses, before and after the
# interaction test.
for png in target/debug/editor-*.png; do
    [ -f "$png" ] && echo "editor screenshot: $PWD/$png"
done
