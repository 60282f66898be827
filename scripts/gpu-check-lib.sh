#!/usr/bin/env bash
# The steps of scripts/gpu-check.sh (which says what the check is): building the binaries here,
# packing them, finding Vulkan on the machine that runs them, and the summary. Sourced by it,
# from the repository's root; needs nothing but bash and coreutils on the machine that runs.

# The target dir, as cargo resolves it here.
gpu_check_target_dir() {
    realpath -m "${CARGO_TARGET_DIR:-target}"
}

# Builds the release CLI (unless GPU_CHECK_BUILT_CLI names one) and the GPU test binaries, and
# sets GPU_CHECK_CLI and GPU_CHECK_TESTS (their paths). The tests come from the workspace's test
# build (the dev profile that scripts/test.sh builds, so in CI nothing is built twice), picked
# by target: every test target of the gpu crate, engine_gpu, engine_gpu_faults, auto_placement
# and lone_reverb_memory.
gpu_check_build() {
    local target_dir
    target_dir=$(gpu_check_target_dir)
    if [ -n "${GPU_CHECK_BUILT_CLI:-}" ]; then
        # A release CLI built already: scripts/test.sh passes its own while its background
        # release build of Windows still holds cargo's lock on target/release/.
        GPU_CHECK_CLI=$GPU_CHECK_BUILT_CLI
    else
        cargo build --release --locked -p longtail --bin longtail-cli || return 1
        GPU_CHECK_CLI="$target_dir/release/longtail-cli"
    fi
    local json
    json=$(cargo test --workspace --exclude xtask --locked --no-run --message-format=json) ||
        return 1
    mapfile -t GPU_CHECK_TESTS < <(grep -F '"executable":"' <<<"$json" |
        grep -E '/gpu#longtail-gpu@|"name":"(engine_gpu|engine_gpu_faults|auto_placement|lone_reverb_memory)"' |
        sed 's/.*"executable":"\([^"]*\)".*/\1/' | LC_ALL=C sort -u)
    if [ "${#GPU_CHECK_TESTS[@]}" -ne 6 ]; then
        echo "gpu-check: expected 6 GPU test binaries, found ${#GPU_CHECK_TESTS[@]}:" >&2
        printf '  %s\n' "${GPU_CHECK_TESTS[@]}" >&2
        return 1
    fi
}

# The newest glibc symbol version the ELF files "$@" need (2.35, say).
gpu_check_glibc_needed() {
    objdump -T "$@" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V |
        tail -n 1
}

# --pack PACKDIR: what the run step needs on a machine without cargo, in one folder.
gpu_check_pack() {
    local pack="$1"
    source scripts/deps.sh
    longtail_install_packages "${LONGTAIL_APT_PACKAGES[@]}" "${LONGTAIL_DIST_APT_PACKAGES[@]}"
    local start=$SECONDS build_s
    gpu_check_build || return 1
    build_s=$((SECONDS - start))
    rm -rf "$pack"
    mkdir -p "$pack/debs"
    local staging
    staging=$(mktemp -d "${TMPDIR:-/tmp}/longtail-gpu-pack.XXXXXX")
    strip -o "$staging/longtail-cli" "$GPU_CHECK_CLI" || return 1
    local test name
    for test in "${GPU_CHECK_TESTS[@]}"; do
        # engine_gpu-0123abcd: the target's name with cargo's hash, as built (the gpu crate's
        # tests are `gpu`, its lib's unit tests `longtail_gpu`).
        name=$(basename "$test")
        strip -o "$staging/$name" "$test" || return 1
    done
    # One xz stream with a 64 MiB dictionary (-9): the binaries share most of their code (wgpu,
    # naga, the engine), which it stores once. GPU_CHECK_XZ_LEVEL sets another level: the dry
    # run, whose pack never travels, packs at 0 (a few seconds instead of minutes).
    local level=${GPU_CHECK_XZ_LEVEL:-9} xz_s
    start=$SECONDS
    tar -C "$staging" --sort=name -cf - . | xz "-$level" -T1 > "$pack/binaries.tar.xz" || return 1
    xz_s=$((SECONDS - start))
    # The loaders the device tool's README names: Vulkan's, and the GL dispatch libraries that
    # NVIDIA's Vulkan driver links against.
    local debs=(libvulkan1 libglvnd0 libgl1 libglx0 libegl1 libgles2 libopengl0)
    if ! (cd "$pack/debs" && apt-get download "${debs[@]}" >/dev/null 2>&1); then
        apt-get update -qq && (cd "$pack/debs" && apt-get download "${debs[@]}") || return 1
    fi
    {
        echo "commit $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
        echo "packed $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
        echo "needs glibc $(gpu_check_glibc_needed "$staging"/*) or newer"
        (cd "$staging" && ls -1)
        echo "shared libraries:"
        (cd "$staging" && ldd ./* 2>/dev/null | grep -o '^\s*[^ ]*\.so[^ ]*' | sort -u)
        ls -1 "$pack/debs"
    } > "$pack/manifest.txt"
    rm -rf "$staging"
    cat "$pack/manifest.txt"
    echo
    echo "gpu-check: packed into $pack: $(du -sh "$pack" | cut -f1) ($(du -sb "$pack" | cut -f1) bytes); build $build_s s, xz -$level $xz_s s"
    echo "On the lent machine, with the device tool's run:"
    echo "  carry:   [\"$pack\"]"
    echo "  command: bash scripts/gpu-check.sh --from $pack \"\$OUT\""
}

# Finds what runs Vulkan on this machine and prints it; where the loader or the GL dispatch
# library is missing (or GPU_CHECK_CARRIED_LOADERS=1), unpacks the packed loaders (PACKDIR/debs, first argument) into a private
# folder (second argument) and puts it on LD_LIBRARY_PATH. Installs nothing. Exports
# VK_DRIVER_FILES where the NVIDIA ICD lies outside the loader's search path.
gpu_check_find_vulkan() {
    local pack="$1" gl="$2"
    echo "machine: $(uname -srm), $(nproc) CPUs"
    echo "glibc: $(getconf GNU_LIBC_VERSION 2>/dev/null || echo unknown)"
    if [ -n "$pack" ] && [ -f "$pack/manifest.txt" ]; then
        echo "binaries: $(grep -m1 '^needs glibc' "$pack/manifest.txt"), $(head -n 1 "$pack/manifest.txt")"
    fi
    local lib have_all=1
    for lib in libvulkan.so.1 libGLdispatch.so.0; do
        if ldconfig -p 2>/dev/null | grep -q "$lib"; then
            echo "$lib: $(ldconfig -p | grep -m1 "$lib" | sed 's/.*=> //')"
        else
            echo "$lib: not installed"
            have_all=0
        fi
    done
    # GPU_CHECK_CARRIED_LOADERS=1 uses the carried ones all the same (the dry run, so that this
    # path runs somewhere before a lent machine needs it).
    if { [ "$have_all" -eq 0 ] || [ "${GPU_CHECK_CARRIED_LOADERS:-0}" = 1 ]; } &&
        [ -n "$pack" ] && compgen -G "$pack/debs/*.deb" >/dev/null; then
        mkdir -p "$gl"
        local deb
        for deb in "$pack"/debs/*.deb; do
            dpkg-deb -x "$deb" "$gl" || echo "could not unpack $deb (no dpkg-deb?)"
        done
        export LD_LIBRARY_PATH="$gl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        echo "loaders: the carried packages ($(cd "$pack/debs" && ls -1 | tr '\n' ' ')), unpacked into $gl"
    fi
    local icd="" dir
    for dir in /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d \
        /usr/local/nvidia/share/vulkan/icd.d; do
        for file in "$dir"/nvidia*.json; do
            [ -f "$file" ] && [ -z "$icd" ] && icd=$file
        done
    done
    if [ -z "$icd" ]; then
        echo "NVIDIA ICD: none found"
    elif [[ "$icd" == /usr/local/nvidia/* ]]; then
        export VK_DRIVER_FILES="$icd" VK_ICD_FILENAMES="$icd"
        echo "NVIDIA ICD: $icd (outside the loader's search path: VK_DRIVER_FILES set)"
    else
        echo "NVIDIA ICD: $icd"
    fi
    if command -v nvidia-smi >/dev/null 2>&1; then
        echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 1)"
    else
        echo "GPU: no nvidia-smi"
    fi
}

# The summary: what was found, the tests' results, a table of the runs. Fields are read with
# sed, so no other tool is needed there.
gpu_check_summary() {
    local found="$1" out="$2" tests_s="$3" total_s="$4" failed="$5"
    field() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" <<<"$1" | tr -d '"'; }
    # The last JSON line of run $1 (the session's line, after its host threads').
    run_line() {
        grep -h "\"variant\":\"$1\"" "$out/session.jsonl" "$out/matrix.jsonl" 2>/dev/null |
            tail -n 1
    }
    cat "$found"
    echo
    echo "GPU tests ($tests_s s):"
    grep -E "^-- |^test result" "$out/gpu-tests.log" | paste -d ' ' - - | sed 's/^-- /  /'
    echo
    # The three modes side by side: zero latency on the CPU only and with the GPU tail, and
    # the offload mode on the GPU and on the CPU workers; rtf_main is the audio threads' share.
    printf '%-22s %-7s %7s %9s %9s %9s %9s %9s %5s %8s\n' run backend latency rtf rtf_main \
        cpu_s p99/ddl max/ddl late gpu_rt99
    local run line
    for run in session-cpu session-gpu session-offload-gpu session-offload-cpu \
        matrix-cpu matrix-gpu matrix-offload-gpu matrix-offload-cpu; do
        line=$(run_line "$run")
        [ -n "$line" ] || continue
        printf '%-22s %-7s %7s %9s %9s %9s %9s %9s %5s %8s\n' "$run" \
            "$(field "$line" backend)" "$(field "$line" latency_samples)" \
            "$(field "$line" rtf)" "$(field "$line" rtf_main)" "$(field "$line" cpu_s)" \
            "$(field "$line" p99_over_deadline)" "$(field "$line" max_over_deadline)" \
            "$(field "$line" late_blocks)" "$(field "$line" gpu_rt_p99_us)"
    done
    echo
    # Where the hub's round trips went: submit, wait (and the CPU share of the wait: near 1 when
    # the driver spins; then the hub naps, and says how many periods did), readback, and the
    # round trip by the largest partition batched.
    for run in session-gpu session-offload-gpu matrix-gpu matrix-offload-gpu; do
        line=$(run_line "$run")
        [ -n "$line" ] || continue
        echo "$run hub thread CPU s: $(field "$line" gpu_hub_cpu_s); periods:" \
            "$(sed -n 's/.*"gpu_periods":\(.*\),"gpu_hub_cpu_s".*/\1/p' <<<"$line")"
    done
    echo
    while IFS= read -r line; do
        echo "bench-gpu: $line"
    done < "$out/bench-gpu.jsonl"
    echo
    echo "wall time: $total_s s; result: $([ "$failed" -eq 0 ] && echo passed || echo FAILED)"
}
