//! The plugin's own unit tests: the state it saves, its metadata and its permanent ids.

use super::*;

#[test]
fn editor_size_and_tab_survive_save_and_restore() {
    use std::sync::atomic::Ordering::Relaxed;
    let saved = LongtailParams::default();
    saved.editor_width.store(913, Relaxed);
    saved.editor_height.store(611, Relaxed);
    saved.editor_tab.store(2, Relaxed);
    saved.editor_ir_view.store(1, Relaxed);
    saved.editor_zoom.store(150, Relaxed);
    let fields = saved.serialize_fields();
    assert!(fields.contains_key("editor-width"), "{fields:?}");

    let restored = LongtailParams::default();
    assert_eq!(restored.editor_width.load(Relaxed), editor::DEFAULT_SIZE.0);
    restored.deserialize_fields(&fields);
    assert_eq!(restored.editor_width.load(Relaxed), 913);
    assert_eq!(restored.editor_height.load(Relaxed), 611);
    assert_eq!(restored.editor_tab.load(Relaxed), 2);
    assert_eq!(restored.editor_ir_view.load(Relaxed), 1);
    assert_eq!(restored.editor_zoom.load(Relaxed), 150);
}

#[test]
fn metadata_is_real_and_stereo_comes_first() {
    let clap_id = <Longtail as ClapPlugin>::CLAP_ID;
    let vst3_id = <LongtailVst3 as Vst3Plugin>::VST3_CLASS_ID;
    for placeholder in ["your-domain", "com.moist", "example", "todo", "TODO"] {
        assert!(!clap_id.contains(placeholder), "{clap_id}");
    }
    assert_ne!(&vst3_id, b"Exactly16Chars!!");
    assert!(vst3_id.iter().all(u8::is_ascii_alphanumeric));
    assert!(!Longtail::<Clap>::VENDOR.is_empty() && !Longtail::<Clap>::VENDOR.contains("TODO"));

    let layouts = Longtail::<Clap>::AUDIO_IO_LAYOUTS;
    assert!(!layouts.is_empty());
    assert_eq!(layouts[0].main_input_channels, NonZeroU32::new(2));
    assert_eq!(layouts[0].main_output_channels, NonZeroU32::new(2));
    for layout in layouts {
        let inputs = layout.main_input_channels.map_or(0, NonZeroU32::get) as usize;
        let outputs = layout.main_output_channels.map_or(0, NonZeroU32::get) as usize;
        assert!((1..=MAX_CHANNELS).contains(&inputs) && (1..=MAX_CHANNELS).contains(&outputs));
    }
}

#[test]
fn parameter_ids_are_the_permanent_ones() {
    let params = LongtailParams::default();
    let ids: Vec<String> = params
        .param_map()
        .into_iter()
        .map(|(id, _, _)| id)
        .collect();
    assert_eq!(
        ids,
        [
            "mix",
            "gain",
            "ir",
            "latency",
            "backend",
            "irsrc",
            "trimstart",
            "trimend",
            "autotrim",
            "predelay",
            "fadein",
            "fadeout",
            "reverse",
            "stretch",
            "normalize",
            "lowcut",
            "highcut",
            "format",
            "width",
            "early",
            "tail",
            "xover",
            "lshelf",
            "lshelfdb",
            "hshelf",
            "hshelfdb",
            "predsync",
            "prednote",
            "decay",
            "decaylhz",
            "decaylow",
            "decayhhz",
            "decayhigh",
            "duck",
            "duckthr",
            "duckatk",
            "duckrel",
            "duckkey",
            "irbsrc",
            "irb",
            "blend"
        ]
    );
}
