//! `--ir-b` and `--blend`: a second IR blended with the first, against float64 convolutions of
//! `(1 - b) h_A + b h_B`, on stereo and on a 4 x 4 matrix; at the ends, each IR alone.

use super::*;

/// `(1 - blend) a + blend b`, the shorter padded with zeros.
fn mixed(a: &[f32], b: &[f32], blend: f32) -> Vec<f32> {
    (0..a.len().max(b.len()))
        .map(|i| {
            let (x, y) = (
                a.get(i).copied().unwrap_or(0.0),
                b.get(i).copied().unwrap_or(0.0),
            );
            ((1.0 - f64::from(blend)) * f64::from(x) + f64::from(blend) * f64::from(y)) as f32
        })
        .collect()
}

/// A fixed blend of 30 % on a stereo bus: each output is the float64 convolution of its input
/// with 0.7 h_A + 0.3 h_B (≥ 120 dB); 0 % is the first IR alone and 100 % the second, bit for
/// bit (past the shorter IR's end, its round-off).
#[test]
fn a_fixed_blend_is_the_blended_ir_on_stereo() {
    let dir = temp_dir("blend-stereo");
    let a: Vec<Vec<f32>> = (0..2).map(|c| noise(500, 80 + c, 0.3)).collect();
    let b: Vec<Vec<f32>> = (0..2).map(|c| noise(700, 90 + c, 0.3)).collect();
    let input = [noise(1500, 100, 0.5), noise(1500, 101, 0.5)];
    let (ir_a, ir_b, in_path) = (dir.join("a.wav"), dir.join("b.wav"), dir.join("in.wav"));
    write_float_wav(&ir_a, 44_100, &a);
    write_float_wav(&ir_b, 44_100, &b);
    write_float_wav(&in_path, 44_100, &input);
    let b_arg = ir_b.to_str().unwrap();
    let output = render(
        &dir,
        &ir_a,
        &in_path,
        &["--ir-b", b_arg, "--blend", "30", "--block", "97"],
    );
    for channel in 0..2 {
        let want = direct(&input[channel], &mixed(&a[channel], &b[channel], 0.3));
        let snr = snr_db(&output[channel], &want);
        eprintln!("channel {channel}: {snr:.1} dB");
        assert!(snr >= 120.0, "channel {channel}: {snr:.1} dB");
    }
    let only_a = render(&dir, &ir_a, &in_path, &["--block", "97"]);
    let at_zero = render(
        &dir,
        &ir_a,
        &in_path,
        &["--ir-b", b_arg, "--blend", "0", "--block", "97"],
    );
    for (zero, alone) in at_zero.iter().zip(&only_a) {
        assert_eq!(zero[..alone.len()], alone[..], "0 % is A alone");
        // Past A's own length, its FFT levels' round-off only.
        assert!(zero[alone.len()..].iter().all(|&s| s.abs() < 1e-6));
    }
    let only_b = render(&dir, &ir_b, &in_path, &["--block", "97"]);
    let at_full = render(
        &dir,
        &ir_a,
        &in_path,
        &["--ir-b", b_arg, "--blend", "100", "--block", "97"],
    );
    assert_eq!(at_full, only_b, "100 % is B alone");
    let error = render_error(&dir, &ir_a, &in_path, &["--ir-b", b_arg, "--blend", "130"]);
    assert!(error.contains("not a blend"), "{error}");
}

/// The same on a 4 x 4 matrix (16-channel IR files, input-major): every output is the sum over
/// the inputs of the float64 convolutions with the blended paths (≥ 120 dB).
#[test]
fn a_fixed_blend_is_the_blended_ir_on_a_matrix() {
    let dir = temp_dir("blend-matrix");
    let a: Vec<Vec<f32>> = (0..16).map(|c| noise(300, 200 + c, 0.2)).collect();
    let b: Vec<Vec<f32>> = (0..16).map(|c| noise(400, 300 + c, 0.2)).collect();
    let input: Vec<Vec<f32>> = (0..4).map(|c| noise(900, 400 + c, 0.5)).collect();
    let (ir_a, ir_b, in_path) = (dir.join("a.wav"), dir.join("b.wav"), dir.join("in.wav"));
    write_float_wav(&ir_a, 44_100, &a);
    write_float_wav(&ir_b, 44_100, &b);
    write_float_wav(&in_path, 44_100, &input);
    let output = render(
        &dir,
        &ir_a,
        &in_path,
        &[
            "--ir-b",
            ir_b.to_str().unwrap(),
            "--blend",
            "30",
            "--outputs",
            "4",
            "--format",
            "discrete",
        ],
    );
    for (out_idx, channel) in output.iter().enumerate() {
        let mut want = vec![0.0f64; channel.len()];
        for (in_idx, x) in input.iter().enumerate() {
            let path = in_idx * 4 + out_idx;
            let conv = direct(x, &mixed(&a[path], &b[path], 0.3));
            want.iter_mut().zip(conv).for_each(|(w, c)| *w += c);
        }
        let snr = snr_db(channel, &want);
        eprintln!("output {out_idx}: {snr:.1} dB");
        assert!(snr >= 120.0, "output {out_idx}: {snr:.1} dB");
    }
}
