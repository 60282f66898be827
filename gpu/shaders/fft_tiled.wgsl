// FFTs inside workgroup memory: a whole transform of M <= TILE points in one dispatch, or one
// of the two passes of a four-step transform (M = M1 * M2, each <= TILE), with the window, the
// real-FFT post-pass and the overlap-save output fused in where the data allows. TILE (complex
// points per half of the workgroup's ping-pong buffer) is set per device from its
// workgroup-memory limit: `const TILE` is prepended to this file when the pipelines are built.
//
// In workgroup memory a workgroup runs `batch` transforms of `len` points (params), one after
// another in `tile[0 .. batch * len]`, by Stockham autosort stages of radix 8 (the last one of
// radix 4 or 2 where log2(len) is not a multiple of 3), ping-ponging between the two halves of
// `tile` with one barrier per stage. Each stage moves every point through workgroup memory
// once, so the fewer the better (on lavapipe, memory moves are what a stage costs). Stage with span s (the product of the radices before it) and radix R, for butterfly i
// of a transform (i < len / R), k = i mod s:
//     y_q = sum_r src[i + r len / R] w^(r k) e^(-2 pi i r q / R),  w = e^(-2 pi i / (s R)),
//     dst[(i - k) R + k + q s] = y_q,
// so the last stage leaves the transform in natural order.
//
// Four-step, with n = n1 M2 + n2 and k = k1 + M1 k2:
//     X[k1 + M1 k2] = sum_n2 W_M2^(n2 k2) W_M^(n2 k1) sum_n1 x[n1 M2 + n2] W_M1^(n1 k1).
// Pass 1 ("columns"): for each n2, the M1-point transform over n1, times W_M^(n2 k1), stored at
// k1 M2 + n2. Pass 2 ("rows"): for each k1, the M2-point transform of that row, stored at
// k1 + M1 k2 (natural order). A workgroup takes `batch` adjacent columns (or rows), so global
// memory is read and written in runs of `batch` points.
//
// Twiddles: twiddles[t] = e^(-2 pi i t / M) for t < M, computed in double precision; an
// L-point transform uses every (M / L)-th. The inverse uses their conjugates (unscaled).

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> twiddles: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> in_jobs: array<InJob>;
@group(0) @binding(3) var<storage, read_write> history: array<f32>;
@group(0) @binding(4) var<storage, read> upload: array<f32>;
@group(0) @binding(5) var<storage, read> half_twiddles: array<vec2<f32>>;
@group(0) @binding(6) var<storage, read_write> fdl: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(8) var<storage, read_write> dst: array<vec2<f32>>;
@group(0) @binding(9) var<storage, read_write> output: array<f32>;

const GROUP: u32 = 64u;

var<workgroup> tile: array<vec2<f32>, 2u * TILE>;

fn twiddle(t: u32) -> vec2<f32> {
    let w = twiddles[t];
    return select(w, conj(w), params.inverse != 0u);
}

// (re, im) times -i (forward) or +i (inverse).
fn rotate(a: vec2<f32>) -> vec2<f32> {
    return select(vec2<f32>(a.y, -a.x), vec2<f32>(-a.y, a.x), params.inverse != 0u);
}

// The `batch` transforms of `len` points in tile[0 ..]; returns where the result starts (0 or
// TILE). Every invocation of the workgroup must call it (it has barriers). Every length is a
// power of two, so indices are split with shifts and masks: integer division has no vector
// instruction on CPUs (lavapipe), and costs several on GPUs.
fn tile_fft(lid: u32) -> u32 {
    let len = params.len;
    let log_len = countTrailingZeros(len);
    let elements = params.batch * len;
    // e^(-2 pi i t / len) = twiddles[t << log_step]
    let log_step = countTrailingZeros(params.m) - log_len;
    var at = 0u;
    var log_span = 0u;
    while log_span < log_len {
        let to = TILE - at;
        let span = 1u << log_span;
        let left = log_len - log_span;
        if left == 1u {
            let half = len >> 1u;
            for (var b = lid; b < (elements >> 1u); b += GROUP) {
                let base = (b >> (log_len - 1u)) << log_len;
                let i = b & (half - 1u);
                let k = i & (span - 1u);
                let u0 = tile[at + base + i];
                let u1 = cmul(tile[at + base + i + half], twiddle(k << (log_len - 1u - log_span + log_step)));
                let j = ((i - k) << 1u) + k;
                tile[to + base + j] = u0 + u1;
                tile[to + base + j + span] = u0 - u1;
            }
            log_span += 1u;
        } else if left == 2u {
            let quarter = len >> 2u;
            for (var b = lid; b < (elements >> 2u); b += GROUP) {
                let base = (b >> (log_len - 2u)) << log_len;
                let i = b & (quarter - 1u);
                let k = i & (span - 1u);
                let w = twiddle(k << (log_len - 2u - log_span + log_step));
                let w2 = cmul(w, w);
                let src = at + base + i;
                let y = dft4(
                    tile[src],
                    cmul(tile[src + quarter], w),
                    cmul(tile[src + 2u * quarter], w2),
                    cmul(tile[src + 3u * quarter], cmul(w2, w)),
                );
                let j = to + base + ((i - k) << 2u) + k;
                tile[j] = y[0];
                tile[j + span] = y[1];
                tile[j + 2u * span] = y[2];
                tile[j + 3u * span] = y[3];
            }
            log_span += 2u;
        } else {
            let eighth = len >> 3u;
            for (var b = lid; b < (elements >> 3u); b += GROUP) {
                let base = (b >> (log_len - 3u)) << log_len;
                let i = b & (eighth - 1u);
                let k = i & (span - 1u);
                // w^r for r < 8, from one table entry (each at most two products deep)
                let w = twiddle(k << (log_len - 3u - log_span + log_step));
                let w2 = cmul(w, w);
                let w3 = cmul(w2, w);
                let w4 = cmul(w2, w2);
                let src = at + base + i;
                let even = dft4(
                    tile[src],
                    cmul(tile[src + 2u * eighth], w2),
                    cmul(tile[src + 4u * eighth], w4),
                    cmul(tile[src + 6u * eighth], cmul(w4, w2)),
                );
                let odd = dft4(
                    cmul(tile[src + eighth], w),
                    cmul(tile[src + 3u * eighth], w3),
                    cmul(tile[src + 5u * eighth], cmul(w4, w)),
                    cmul(tile[src + 7u * eighth], cmul(w4, w3)),
                );
                // y_q = E_q + W8^q O_q, y_(q + 4) = E_q - W8^q O_q
                let o1 = eighth_turn(odd[1]);
                let o2 = rotate(odd[2]);
                let o3 = rotate(eighth_turn(odd[3]));
                let j = to + base + ((i - k) << 3u) + k;
                tile[j] = even[0] + odd[0];
                tile[j + span] = even[1] + o1;
                tile[j + 2u * span] = even[2] + o2;
                tile[j + 3u * span] = even[3] + o3;
                tile[j + 4u * span] = even[0] - odd[0];
                tile[j + 5u * span] = even[1] - o1;
                tile[j + 6u * span] = even[2] - o2;
                tile[j + 7u * span] = even[3] - o3;
            }
            log_span += 3u;
        }
        workgroupBarrier();
        at = to;
    }
    return at;
}

// The 4-point DFT (forward or inverse, unscaled).
fn dft4(a0: vec2<f32>, a1: vec2<f32>, a2: vec2<f32>, a3: vec2<f32>) -> array<vec2<f32>, 4> {
    let t0 = a0 + a2;
    let t1 = a0 - a2;
    let t2 = a1 + a3;
    let t3 = rotate(a1 - a3);
    return array<vec2<f32>, 4>(t0 + t2, t1 + t3, t0 - t2, t1 - t3);
}

// a times W8 = e^(-i pi / 4) (forward) or e^(i pi / 4) (inverse).
fn eighth_turn(a: vec2<f32>) -> vec2<f32> {
    let c = 0.70710678118654752;
    return select(c * vec2<f32>(a.x + a.y, a.y - a.x), c * vec2<f32>(a.x - a.y, a.x + a.y), params.inverse != 0u);
}

fn group_index(wid: vec3<u32>) -> u32 {
    return wid.x + wid.y * (params.row / GROUP);
}

// Point n of input job `job`'s overlap-save window (history, then this period's chunk), packed
// as z[n] = x[2n] + i x[2n + 1].
fn window_point(job: u32, n: u32) -> vec2<f32> {
    let p = params.m;
    let stream = in_jobs[job].stream;
    if n < p / 2u {
        return vec2<f32>(history[stream * p + 2u * n], history[stream * p + 2u * n + 1u]);
    }
    let at = job * p + 2u * n - p;
    return vec2<f32>(upload[at], upload[at + 1u]);
}

// Bin k of the real window's spectrum from the half-length spectrum Z at tile[at ..]: the
// real-FFT post-pass of fdl_update.wgsl.
fn post_pass(at: u32, k: u32) -> vec2<f32> {
    let m = params.m;
    return real_spectrum_bin(tile[at + k % m], tile[at + (m - k) % m], half_twiddles[k]);
}

// Overlap-save: the last P real samples of a job's inverse transform z (n >= M / 2).
fn write_output(job: u32, n: u32, z: vec2<f32>) {
    let p = params.m;
    if n >= p / 2u {
        let at = job * p + 2u * (n - p / 2u);
        output[at] = z.x;
        output[at + 1u] = z.y;
    }
}

// The whole forward transform (M <= TILE), `batch` input jobs per workgroup: window, FFT,
// post-pass into slot `head` of each job's delay line, and the chunk becomes the history.
@compute @workgroup_size(64)
fn forward_whole(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = group_index(wid);
    if group >= params.total {
        return;
    }
    let m = params.m;
    let first = group * params.batch;
    let jobs = min(params.batch, params.count - first);
    for (var e = lid; e < params.batch * m; e += GROUP) {
        let job = first + e / m;
        tile[e] = select(vec2<f32>(0.0), window_point(job, e % m), e / m < jobs);
    }
    workgroupBarrier();
    for (var e = lid; e < jobs * m; e += GROUP) {
        let job = first + e / m;
        history[in_jobs[job].stream * m + e % m] = upload[job * m + e % m];
    }
    let at = tile_fft(lid);
    let bins = m + 1u;
    for (var e = lid; e < jobs * bins; e += GROUP) {
        let job = first + e / bins;
        let k = e % bins;
        let info = in_jobs[job];
        fdl[(info.fdl_base + info.head) * bins + k] = post_pass(at + (e / bins) * m, k);
    }
}

// The whole inverse transform (M <= TILE), `batch` output jobs per workgroup: from the
// pre-passed spectra in `src` to the overlap-save output.
@compute @workgroup_size(64)
fn inverse_whole(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = group_index(wid);
    if group >= params.total {
        return;
    }
    let m = params.m;
    let first = group * params.batch;
    let jobs = min(params.batch, params.count - first);
    for (var e = lid; e < params.batch * m; e += GROUP) {
        tile[e] = select(vec2<f32>(0.0), src[first * m + e], e / m < jobs);
    }
    workgroupBarrier();
    let at = tile_fft(lid);
    for (var e = lid; e < jobs * m; e += GROUP) {
        write_output(first + e / m, e % m, tile[at + e]);
    }
}

// A four-step workgroup's job and first column (pass 1) or row (pass 2): a job has M / len
// of them, `batch` to a workgroup.
fn four_step_place(group: u32) -> vec2<u32> {
    let groups_per_job = params.m / params.len / params.batch;
    return vec2<u32>(group / groups_per_job, (group % groups_per_job) * params.batch);
}

// Four-step pass 1 over `batch` adjacent columns of one job: M1 = len, M2 = M / len columns.
// `window` reads the job's overlap-save window (forward), else `src` (inverse).
fn columns(wid: vec3<u32>, lid: u32, window: bool) {
    let group = group_index(wid);
    if group >= params.total {
        return;
    }
    let m = params.m;
    let m1 = params.len;
    let m2 = m / m1;
    let batch = params.batch;
    let place = four_step_place(group);
    let job = place.x;
    let c0 = place.y;
    for (var e = lid; e < batch * m1; e += GROUP) {
        let b = e % batch;
        let n1 = e / batch;
        let n = n1 * m2 + c0 + b;
        var z: vec2<f32>;
        if window {
            z = window_point(job, n);
        } else {
            z = src[job * m + n];
        }
        tile[b * m1 + n1] = z;
    }
    workgroupBarrier();
    let at = tile_fft(lid);
    for (var e = lid; e < batch * m1; e += GROUP) {
        let b = e % batch;
        let k1 = e / batch;
        let n2 = c0 + b;
        dst[job * m + k1 * m2 + n2] = cmul(tile[at + b * m1 + k1], twiddle(n2 * k1));
    }
}

// Four-step pass 2 over `batch` adjacent rows of one job: M2 = len, M1 = M / len rows.
// `output` writes the overlap-save output (inverse), else the spectrum in natural order to
// `dst` (forward).
fn rows(wid: vec3<u32>, lid: u32, to_output: bool) {
    let group = group_index(wid);
    if group >= params.total {
        return;
    }
    let m = params.m;
    let m2 = params.len;
    let m1 = m / m2;
    let batch = params.batch;
    let place = four_step_place(group);
    let job = place.x;
    let r0 = place.y;
    for (var e = lid; e < batch * m2; e += GROUP) {
        tile[e] = src[job * m + r0 * m2 + e];
    }
    workgroupBarrier();
    let at = tile_fft(lid);
    for (var e = lid; e < batch * m2; e += GROUP) {
        let b = e % batch;
        let k2 = e / batch;
        let k = r0 + b + m1 * k2;
        let z = tile[at + b * m2 + k2];
        if to_output {
            write_output(job, k, z);
        } else {
            dst[job * m + k] = z;
        }
    }
}

@compute @workgroup_size(64)
fn forward_columns(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    columns(wid, lid, true);
}

@compute @workgroup_size(64)
fn forward_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    rows(wid, lid, false);
}

@compute @workgroup_size(64)
fn inverse_columns(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    columns(wid, lid, false);
}

@compute @workgroup_size(64)
fn inverse_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    rows(wid, lid, true);
}
