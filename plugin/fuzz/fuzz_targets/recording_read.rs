//! Recording bytes, any format, through the capture's recording reader and its checks
//! (`capture::recording::read_recording_bytes`, then `check` against a one-slot excitation at
//! the recording's rate): the bounds of its own (65 channels, 20 minutes, the decoder's file
//! size), clipping, non-finite samples, the length. The first byte picks the extension the file
//! is named with (a hint to the probe, and a lie as often as not); the rest is the file.
//! Whatever the bytes, the result is audio within the bounds or a one-line refusal.

#![no_main]

use libfuzzer_sys::fuzz_target;
use longtail::capture::recording::{RECORDING_MAX_CHANNELS, check, read_recording_bytes};
use longtail::capture::sweep::{Excitation, MAX_FILE_SECONDS};

const EXTENSIONS: [&str; 9] = ["wav", "flac", "aiff", "aifc", "ogg", "oga", "wave", "aif", "bin"];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let name = format!("fuzz.{}", EXTENSIONS[usize::from(pick) % EXTENSIONS.len()]);
    match read_recording_bytes(bytes, &name) {
        Ok(audio) => {
            let num_channels = audio.channels.len();
            assert!((1..=RECORDING_MAX_CHANNELS).contains(&num_channels));
            let num_frames = audio.num_frames();
            assert!(audio.channels.iter().all(|c| c.len() == num_frames));
            assert!(num_frames as f64 <= MAX_FILE_SECONDS * f64::from(audio.sample_rate) + 1.0);
            // A small excitation at the recording's rate: the checks run on every sample.
            let mut samples = vec![0.0f32; 64];
            samples[0] = 0.5;
            let excitation = Excitation {
                sample_rate: audio.sample_rate,
                samples,
                sweep_len: 1,
                num_speakers: 1,
            };
            if let Err(err) = check(&audio, &excitation) {
                assert!(!err.to_string().contains('\n'));
            }
        }
        Err(err) => {
            let message = err.to_string();
            assert!(!message.contains('\n') && message.contains(&name), "{message}");
        }
    }
});
