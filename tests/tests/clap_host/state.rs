//! State save and load: the round trip reproduces the output exactly, and saves from the main
//! thread while the audio thread plays are consistent.

use longtail::ir::builtin::BuiltinIr;
use longtail_tests::RNG_SEED;

use super::*;

/// Save the state of an instance with non-default settings, load it into a fresh one, and both
/// produce bit-identical output from the same input and block sizes; an instance with the
/// defaults does not.
#[test]
fn state_round_trip_reproduces_the_output_exactly() {
    let mut original = TestHost::new();
    let (mix, gain, ir) = (
        original.param(MIX),
        original.param(GAIN),
        original.param(IMPULSE_RESPONSE),
    );
    let minus_three_db = original.text_to_value(gain, c"-3 dB");
    original.flush(&[(mix, 0.5), (ir, IR_PLATE), (gain, minus_three_db)]);
    original.activate(MAX_BLOCK);
    let warm_up = stereo_noise(SAMPLE_RATE as usize / 2, RNG_SEED + 30);
    let sizes = block_sizes(warm_up[0].len(), MAX_BLOCK as usize);
    let run = original.process([&warm_up[0], &warm_up[1]], &sizes, &[]);
    assert_finite(&run);

    // Saved on the main thread while active, as hosts do when saving a project.
    let state = original.save_state();
    assert!(!state.is_empty());
    let descs = original.param_descs();
    let values: Vec<f64> = descs.iter().map(|desc| original.value(desc.id)).collect();
    assert_eq!(original.value(mix), 0.5);
    assert_eq!(original.value(ir), IR_PLATE);

    let mut restored = TestHost::new();
    let rescans_before = restored.notifications().param_rescans;
    restored.load_state(&state);
    for (desc, &value) in descs.iter().zip(&values) {
        assert_eq!(
            restored.value(desc.id),
            value,
            "{} after loading",
            desc.name
        );
    }
    assert!(
        restored.notifications().param_rescans > rescans_before,
        "the plugin did not ask the host to rescan the parameter values after loading state"
    );
    restored.activate(MAX_BLOCK);
    // The original starts over with the same configuration.
    original.restart();

    let input = stereo_noise(3 * SAMPLE_RATE as usize / 2, RNG_SEED + 31);
    let sizes = block_sizes(input[0].len(), MAX_BLOCK as usize);
    let a = original.process([&input[0], &input[1]], &sizes, &[]);
    let b = restored.process([&input[0], &input[1]], &sizes, &[]);
    assert_finite(&a);
    assert!(rms(&a.outputs[0]) > 0.05);
    for channel in 0..2 {
        let mismatch = a.outputs[channel]
            .iter()
            .zip(&b.outputs[channel])
            .position(|(x, y)| x.to_bits() != y.to_bits());
        assert_eq!(mismatch, None, "channel {channel}: first differing sample");
    }
    assert_eq!(a.tails, b.tails);
    assert_eq!(a.tails[0], tail_of(BuiltinIr::Plate, 0));

    // The state carried something: the defaults sound different.
    let mut default = TestHost::new();
    default.activate(MAX_BLOCK);
    let c = default.process([&input[0], &input[1]], &sizes, &[]);
    assert_ne!(c.outputs[0], b.outputs[0]);

    for host in [&original, &restored, &default] {
        host.assert_threading_respected();
    }
}

/// The host saves the state on the main thread again and again while the audio thread plays
/// and automates the mix: every save loads into a fresh instance with one of the mix values
/// the automation went through and the other parameters intact, and the audio is bit for bit
/// that of an instance nobody saved.
#[test]
fn state_saves_while_processing_are_consistent() {
    let mut host = TestHost::new();
    let (mix, ir) = (host.param(MIX), host.param(IMPULSE_RESPONSE));
    host.flush(&[(ir, IR_PLATE)]);
    host.activate(MAX_BLOCK);
    let total = SAMPLE_RATE as usize;
    let input = stereo_noise(total, RNG_SEED + 60);
    let sizes = block_sizes(total, MAX_BLOCK as usize);
    let mix_values = [0.1, 0.9, 0.25, 0.75, 0.5];
    let automation: Vec<Automation> = mix_values
        .iter()
        .enumerate()
        .map(|(idx, &value)| Automation {
            at: (idx + 1) * total / (mix_values.len() + 1),
            param: mix,
            value,
        })
        .collect();
    let (run, saves) = host.process_while_saving([&input[0], &input[1]], &sizes, &automation, 20);
    assert_finite(&run);
    assert!(saves.len() >= 20);

    let mut reference = TestHost::new();
    reference.flush(&[(ir, IR_PLATE)]);
    reference.activate(MAX_BLOCK);
    let expected = reference.process([&input[0], &input[1]], &sizes, &automation);
    assert_eq!(run.outputs, expected.outputs, "saving changed the audio");

    for (save_idx, state) in saves.iter().enumerate() {
        let mut restored = TestHost::new();
        restored.load_state(state);
        let value = restored.value(mix);
        // The plugin keeps the mix as an `f32`.
        let was_set = |mix: f64| f64::from(mix as f32) == value;
        assert!(
            value == f64::from(DEFAULT_MIX) || mix_values.into_iter().any(was_set),
            "save {save_idx}: mix {value} was never set"
        );
        assert_eq!(restored.value(ir), IR_PLATE, "save {save_idx}");
    }
    assert_eq!(host.value(mix), 0.5);
    host.assert_threading_respected();
}
