//! The plugin's host calls fail soft: a panic inside `process()` becomes silence until the next
//! activation, which builds the signal path anew; `deactivate()` on VST3 runs its fence.

use std::sync::atomic::Ordering::Relaxed;

use nice_plug::prelude::*;

use super::fence::Task;
use super::unwind::without_panic_hook;
use crate::Longtail;
use crate::tools::host_context::HostContext;

const RATE: u32 = 48_000;
const BLOCK: usize = 256;

/// Plays one block of a click train through `plugin` and returns it.
fn play(plugin: &mut Longtail, host: &mut HostContext) -> [Vec<f32>; 2] {
    let mut left: Vec<f32> = (0..BLOCK).map(|i| f32::from(i % 64 == 0)).collect();
    let mut right = left.clone();
    host.process_stereo(plugin, (&mut left, &mut right), |call| call());
    [left, right]
}

fn activate(plugin: &mut Longtail, host: &mut HostContext) {
    let config = BufferConfig {
        sample_rate: RATE as f32,
        min_buffer_size: None,
        max_buffer_size: BLOCK as u32,
        process_mode: ProcessMode::Offline,
    };
    assert!(plugin.activate(
        &Longtail::<crate::layouts::Clap>::AUDIO_IO_LAYOUTS[0],
        &config,
        host
    ));
    // The wrappers' part: every smoother at its value.
    for (_, param, _) in plugin.params.param_map() {
        // SAFETY: the pointer points into `plugin.params`, which lives through the call.
        unsafe { param._internal_update_smoother(RATE as f32, true) };
    }
    plugin.reset();
}

#[test]
fn a_panic_in_process_plays_silence_until_the_next_activation() {
    // VST3: `deactivate()` runs its fence.
    let mut host = HostContext::new(PluginApi::Vst3, RATE);
    let mut plugin = Longtail {
        fence: Some(std::sync::Arc::new(super::fence::TaskFence::new(Task::run))),
        ..Longtail::default()
    };
    activate(&mut plugin, &mut host);
    let heard = |out: &[Vec<f32>; 2]| out.iter().flatten().any(|&s| s != 0.0);
    assert!(heard(&play(&mut plugin, &mut host)));

    // A fault of ours: the mix buffer gone, so the next block indexes past its end.
    plugin.active.as_mut().expect("active").mix_buffer = Vec::new();
    let out = without_panic_hook(|| play(&mut plugin, &mut host));
    assert!(!heard(&out), "a block that panicked must be silence");
    assert!(plugin.monitor.faulted.load(Relaxed));
    // Silence from then on, without running the broken path again.
    assert!(!heard(&play(&mut plugin, &mut host)));
    plugin.reset();
    assert!(!heard(&play(&mut plugin, &mut host)));

    plugin.deactivate();
    activate(&mut plugin, &mut host);
    assert!(!plugin.monitor.faulted.load(Relaxed));
    assert!(heard(&play(&mut plugin, &mut host)));
    plugin.deactivate();
}
