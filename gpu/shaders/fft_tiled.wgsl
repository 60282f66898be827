// FFTs inside workgroup memory: a whole transform of M <= 2 TILE points in one dispatch, or one
// of the two passes of a four-step transform (M = M1 * M2, each <= TILE), with the window, the
// real-FFT post-pass and the overlap-save output fused in where the data allows. TILE (complex
// points in the workgroup's buffer) is set per device from its workgroup-memory limit:
// `const TILE` is prepended to this file when the pipelines are built.
//
// In workgroup memory a workgroup runs `batch` transforms of `len` points (params), one after
// another in `tile[0 .. batch * len]`, in place, by decimation-in-frequency stages of radix 8
// (the last one of radix 4 or 2 where log2(len) is not a multiple of 3), one barrier per stage.
// In place, a workgroup needs one buffer, not the two of a ping-pong (Stockham) transform, so a
// device's memory holds twice the points. Each stage moves every point through workgroup memory
// once, so the fewer the better (on lavapipe, memory moves are what a stage costs). A stage
// works on sub-transforms of L points (L = len at the first stage, then L / R): for each
// j < L / R of a sub-transform starting at a, with W_L = e^(-2 pi i / L),
//     tile[a + j + q L / R] = W_L^(j q) sum_r tile[a + j + r L / R] e^(-2 pi i r q / R),
// after which block q of the sub-transform holds the (L / R)-point transform whose bin m is bin
// R m + q of the L-point one. The bins end in digit-reversed order: bin_slot says where.
// (In the last stage, part = 1, neighbouring threads' points are 8 apart, so on a GPU's banked
// workgroup memory that stage has bank conflicts. Unmeasured on a real GPU so far; a swizzled
// layout is the remedy if gpu-check shows them to matter.)
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

var<workgroup> tile: array<vec2<f32>, TILE>;

fn twiddle(t: u32) -> vec2<f32> {
    let w = twiddles[t];
    return select(w, conj(w), params.inverse != 0u);
}

// (re, im) times -i (forward) or +i (inverse).
fn rotate(a: vec2<f32>) -> vec2<f32> {
    return select(vec2<f32>(a.y, -a.x), vec2<f32>(-a.y, a.x), params.inverse != 0u);
}

// The `batch` transforms of `len` points in tile[0 ..], in place. Every invocation of the
// workgroup must call it (it has barriers). Every length is a power of two, so indices are
// split with shifts and masks: integer division has no vector instruction on CPUs (lavapipe),
// and costs several on GPUs.
fn tile_fft(lid: u32) {
    let len = params.len;
    let log_len = countTrailingZeros(len);
    let elements = params.batch * len;
    // W_L = e^(-2 pi i / L) = twiddles[M / L]
    let log_m = countTrailingZeros(params.m);
    var log_sub = log_len;
    while log_sub > 0u {
        let log_radix = min(log_sub, 3u);
        let log_part = log_sub - log_radix;
        let part = 1u << log_part;
        let log_step = log_m - log_sub;
        if log_radix == 1u {
            for (var b = lid; b < (elements >> 1u); b += GROUP) {
                let j = b & (part - 1u);
                let at = ((b >> log_part) << log_sub) + j;
                let u0 = tile[at];
                let u1 = tile[at + part];
                tile[at] = u0 + u1;
                tile[at + part] = cmul(u0 - u1, twiddle(j << log_step));
            }
        } else if log_radix == 2u {
            for (var b = lid; b < (elements >> 2u); b += GROUP) {
                let j = b & (part - 1u);
                let at = ((b >> log_part) << log_sub) + j;
                let w = twiddle(j << log_step);
                let w2 = cmul(w, w);
                let y = dft4(tile[at], tile[at + part], tile[at + 2u * part], tile[at + 3u * part]);
                tile[at] = y[0];
                tile[at + part] = cmul(y[1], w);
                tile[at + 2u * part] = cmul(y[2], w2);
                tile[at + 3u * part] = cmul(y[3], cmul(w2, w));
            }
        } else {
            for (var b = lid; b < (elements >> 3u); b += GROUP) {
                let j = b & (part - 1u);
                let at = ((b >> log_part) << log_sub) + j;
                let even = dft4(tile[at], tile[at + 2u * part], tile[at + 4u * part], tile[at + 6u * part]);
                let odd = dft4(tile[at + part], tile[at + 3u * part], tile[at + 5u * part], tile[at + 7u * part]);
                // y_q = E_q + W8^q O_q, y_(q + 4) = E_q - W8^q O_q, then y_q times w^q (w^q for
                // q < 8 from one table entry, each at most two products deep)
                let o1 = eighth_turn(odd[1]);
                let o2 = rotate(odd[2]);
                let o3 = rotate(eighth_turn(odd[3]));
                let w = twiddle(j << log_step);
                let w2 = cmul(w, w);
                let w3 = cmul(w2, w);
                let w4 = cmul(w2, w2);
                tile[at] = even[0] + odd[0];
                tile[at + part] = cmul(even[1] + o1, w);
                tile[at + 2u * part] = cmul(even[2] + o2, w2);
                tile[at + 3u * part] = cmul(even[3] + o3, w3);
                tile[at + 4u * part] = cmul(even[0] - odd[0], w4);
                tile[at + 5u * part] = cmul(even[1] - o1, cmul(w4, w));
                tile[at + 6u * part] = cmul(even[2] - o2, cmul(w4, w2));
                tile[at + 7u * part] = cmul(even[3] - o3, cmul(w4, w3));
            }
        }
        workgroupBarrier();
        log_sub = log_part;
    }
}

// Where tile_fft leaves bin k of a transform of 2^log_len points, relative to its start: the
// digits of k (radix 8 from the lowest, the last one of radix 4 or 2) reversed.
fn bin_slot(k: u32, log_len: u32) -> u32 {
    var slot = 0u;
    var rest = k;
    var log_sub = log_len;
    while log_sub > 0u {
        let log_radix = min(log_sub, 3u);
        log_sub -= log_radix;
        slot |= (rest & ((1u << log_radix) - 1u)) << log_sub;
        rest >>= log_radix;
    }
    return slot;
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

// Bin k of the real window's spectrum from the half-length spectrum Z (bins k and M - k), in a
// round of forward_whole: Z[k'] is bin k' >> log_split of the transform at tile[start ..].
fn post_pass(start: u32, k: u32, log_split: u32, log_len: u32) -> vec2<f32> {
    let mask = params.m - 1u;
    let z = tile[start + bin_slot((k & mask) >> log_split, log_len)];
    let z_mirror = tile[start + bin_slot(((params.m - k) & mask) >> log_split, log_len)];
    return real_spectrum_bin(z, z_mirror, half_twiddles[k]);
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

// Input point n of a whole transform's round: z[n] itself (len = M), or for M = 2 len the first
// radix-2 decimation-in-frequency stage, z[n] + z[n + len] (round 0: the even bins'
// transform) or (z[n] - z[n + len]) W_M^n (round 1: the odd bins').
fn split_point(z: vec2<f32>, z_upper: vec2<f32>, n: u32, round: u32) -> vec2<f32> {
    if round == 0u {
        return z + z_upper;
    }
    return cmul(z - z_upper, twiddle(n));
}

// The whole forward transform, `batch` input jobs per workgroup: window, FFT, post-pass into
// slot `head` of each job's delay line, and the chunk becomes the history. Where M = 2 len (one
// job per workgroup, M <= 2 TILE), in two rounds, the even bins and then the odd ones (see
// split_point): bins k and M - k have the same parity, so each round's post-pass has both.
@compute @workgroup_size(64)
fn forward_whole(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = group_index(wid);
    if group >= params.total {
        return;
    }
    let m = params.m;
    let len = params.len;
    let log_len = countTrailingZeros(len);
    let log_split = countTrailingZeros(m) - log_len;
    let first = group * params.batch;
    let jobs = min(params.batch, params.count - first);
    let bins = m + 1u;
    for (var round = 0u; round <= log_split; round++) {
        if log_split == 1u {
            // One job: its window's lower half is the history, the upper half this chunk,
            // which the last round, done with the history, makes the new history.
            let lower = in_jobs[first].stream * m;
            let upper = first * m;
            for (var n = lid; n < len; n += GROUP) {
                let z = vec2<f32>(history[lower + 2u * n], history[lower + 2u * n + 1u]);
                let z_upper = vec2<f32>(upload[upper + 2u * n], upload[upper + 2u * n + 1u]);
                tile[n] = split_point(z, z_upper, n, round);
                if round == 1u {
                    history[lower + 2u * n] = z_upper.x;
                    history[lower + 2u * n + 1u] = z_upper.y;
                }
            }
            workgroupBarrier();
        } else {
            for (var e = lid; e < params.batch * len; e += GROUP) {
                let j = e >> log_len;
                tile[e] = select(vec2<f32>(0.0), window_point(first + j, e & (len - 1u)), j < jobs);
            }
            workgroupBarrier();
            // The window is read. (One round: len = M.)
            for (var e = lid; e < jobs * m; e += GROUP) {
                let job = first + (e >> log_len);
                let n = e & (m - 1u);
                history[in_jobs[job].stream * m + n] = upload[job * m + n];
            }
        }
        tile_fft(lid);
        // This round's bins k = round, round + 2^log_split, ... up to M.
        let round_bins = ((m - round) >> log_split) + 1u;
        for (var j = 0u; j < jobs; j++) {
            let info = in_jobs[first + j];
            let to = (info.fdl_base + info.head) * bins;
            for (var i = lid; i < round_bins; i += GROUP) {
                let k = (i << log_split) + round;
                fdl[to + k] = post_pass(j << log_len, k, log_split, log_len);
            }
        }
        workgroupBarrier();
    }
}

// The whole inverse transform, `batch` output jobs per workgroup: from the pre-passed spectra in
// `src` to the overlap-save output. Where M = 2 len, in two rounds as forward_whole: the even
// output points and then the odd ones.
@compute @workgroup_size(64)
fn inverse_whole(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let group = group_index(wid);
    if group >= params.total {
        return;
    }
    let m = params.m;
    let len = params.len;
    let log_len = countTrailingZeros(len);
    let log_split = countTrailingZeros(m) - log_len;
    let first = group * params.batch;
    let jobs = min(params.batch, params.count - first);
    let half = len >> 1u;
    for (var round = 0u; round <= log_split; round++) {
        for (var e = lid; e < params.batch * len; e += GROUP) {
            let j = e >> log_len;
            let n = e & (len - 1u);
            var z = vec2<f32>(0.0);
            if j < jobs {
                let at = (first + j) * m + n;
                z = src[at];
                if log_split == 1u {
                    z = split_point(z, src[at + len], n, round);
                }
            }
            tile[e] = z;
        }
        workgroupBarrier();
        tile_fft(lid);
        // Point n = q 2^log_split + round is at or past M / 2 from q = len / 2 on.
        for (var e = lid; e < jobs * half; e += GROUP) {
            let j = e >> (log_len - 1u);
            let q = half + (e & (half - 1u));
            let z = tile[(j << log_len) + bin_slot(q, log_len)];
            write_output(first + j, (q << log_split) + round, z);
        }
        workgroupBarrier();
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
    let log_batch = countTrailingZeros(batch);
    let place = four_step_place(group);
    let job = place.x;
    let c0 = place.y;
    for (var e = lid; e < batch * m1; e += GROUP) {
        let b = e & (batch - 1u);
        let n1 = e >> log_batch;
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
    tile_fft(lid);
    let log_m1 = countTrailingZeros(m1);
    for (var e = lid; e < batch * m1; e += GROUP) {
        let b = e & (batch - 1u);
        let k1 = e >> log_batch;
        let n2 = c0 + b;
        let z = tile[b * m1 + bin_slot(k1, log_m1)];
        dst[job * m + k1 * m2 + n2] = cmul(z, twiddle(n2 * k1));
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
    tile_fft(lid);
    let log_batch = countTrailingZeros(batch);
    let log_m2 = countTrailingZeros(m2);
    for (var e = lid; e < batch * m2; e += GROUP) {
        let b = e & (batch - 1u);
        let k2 = e >> log_batch;
        let k = r0 + b + m1 * k2;
        let z = tile[b * m2 + bin_slot(k2, log_m2)];
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
