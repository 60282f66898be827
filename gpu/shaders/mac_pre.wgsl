// The spectral multiply-accumulate fused with the inverse real-FFT pre-pass (spectral_mac.wgsl
// then c2r_pre.wgsl in one dispatch). The pre-pass of bin k needs the sums of bins k and M - k,
// so one invocation per output stream and pair (k, M - k), k = 0 ..= M / 2, sums both bins over
// the stream's paths and partitions, then writes Z[k] and Z[M - k] of the half-length spectrum
// whose inverse FFT is the output window (k = 0 pairs with the Nyquist bin M and writes Z[0]
// only; k = M / 2 pairs with itself).

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> in_jobs: array<InJob>;
@group(0) @binding(2) var<storage, read> out_jobs: array<OutJob>;
@group(0) @binding(3) var<storage, read> path_jobs: array<PathJob>;
@group(0) @binding(4) var<storage, read> fdl: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read> spectra: array<vec2<f32>>;
@group(0) @binding(6) var<storage, read> half_twiddles: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read_write> work: array<vec2<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let id = invocation(gid, params);
    if id >= params.total {
        return;
    }
    let m = params.m;
    let bins = m + 1u;
    let pairs = m / 2u + 1u;
    let job = id / pairs;
    let k = id % pairs;
    let kr = m - k;
    let out = out_jobs[job];
    var sum = vec2<f32>(0.0, 0.0);
    var sum_r = vec2<f32>(0.0, 0.0);
    for (var path = out.path_start; path < out.path_start + out.path_count; path++) {
        let info = path_jobs[path];
        let input = in_jobs[info.in_job];
        var slot = input.head;
        for (var j = 0u; j < input.slots; j++) {
            let x = (input.fdl_base + slot) * bins;
            let h = (info.spectra_base + j) * bins;
            sum += cmul(fdl[x + k], spectra[h + k]);
            sum_r += cmul(fdl[x + kr], spectra[h + kr]);
            slot = select(slot - 1u, input.slots - 1u, slot == 0u);
        }
    }
    // The imaginary parts of the DC and Nyquist bins are ignored, as for a real signal.
    if k == 0u {
        sum.y = 0.0;
        sum_r.y = 0.0;
    }
    work[job * m + k] = half_spectrum_bin(sum, sum_r, half_twiddles[k]);
    if k != 0u && k != kr {
        work[job * m + kr] = half_spectrum_bin(sum_r, sum, half_twiddles[kr]);
    }
}
