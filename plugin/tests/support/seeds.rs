//! IR files of every shape the decoder meets in the wild, made from the fixtures in memory: the
//! seeds of the mutation test (`ir_mutation.rs`) and of the fuzz targets' corpus
//! (`plugin/fuzz`, written by its `make-seeds` binary). One maker for both, so the fuzzer starts
//! where the test looks.
//!
//! Besides the fixtures (16-bit WAV, FLAC, 24-bit AIFF, float AIFC, Ogg Vorbis): WAV with
//! `LIST`/`INFO`, `cue ` and `id3 ` chunks, `WAVE_FORMAT_EXTENSIBLE` WAVs of 4 and 12 channels
//! with their masks and of 24 and 40 (past symphonia, decoded by hound), a float
//! WAV with a `fact` chunk, FLAC with a Vorbis comment and a cover picture, AIFF with an `ID3 `
//! chunk; and hostile ones whose tag and picture lengths say about 4 GB.

/// `(file name, bytes)` of every seed.
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut seeds: Vec<(String, Vec<u8>)> = vec![
        ("ir-16.wav".into(), WAV_16.to_vec()),
        ("ir-16.flac".into(), FLAC_16.to_vec()),
        ("ir-24.aiff".into(), AIFF_24.to_vec()),
        ("ir-f32.aifc".into(), AIFC_F32.to_vec()),
        ("ir.ogg".into(), OGG.to_vec()),
        ("tagged.wav".into(), tagged_wav()),
        (
            "extensible-4ch.wav".into(),
            extensible_wav(4, 24, 300, 0x33),
        ),
        (
            "extensible-7.1.4.wav".into(),
            extensible_wav(12, 24, 200, 0x2D63F),
        ),
        ("wide-24ch.wav".into(), extensible_wav(24, 16, 100, 0)),
        (
            "wide-40ch-masked.wav".into(),
            extensible_wav(40, 24, 40, 0xFFFF),
        ),
        ("float-fact.wav".into(), float_wav_with_fact(2, 256)),
        ("tagged.flac".into(), tagged_flac(COMMENT_OK, PICTURE_OK)),
        ("tagged.aiff".into(), tagged_aiff()),
    ];
    seeds.extend(hostile());
    seeds
}

/// Files whose tag or picture lengths claim about 4 GB: symphonia 0.5 allocated those lengths
/// before reading them. Each must be refused or decoded without a big allocation.
pub fn hostile() -> Vec<(String, Vec<u8>)> {
    vec![
        (
            "huge-comment.flac".into(),
            tagged_flac(COMMENT_HUGE_VENDOR, PICTURE_OK),
        ),
        (
            "huge-comment-entry.flac".into(),
            tagged_flac(COMMENT_HUGE_ENTRY, PICTURE_OK),
        ),
        (
            "huge-picture-mime.flac".into(),
            tagged_flac(COMMENT_OK, PICTURE_HUGE_MIME),
        ),
        (
            "huge-picture-data.flac".into(),
            tagged_flac(COMMENT_OK, PICTURE_HUGE_DATA),
        ),
        // The same bytes under another extension: the probe still finds FLAC.
        (
            "huge-comment.wav".into(),
            tagged_flac(COMMENT_HUGE_VENDOR, PICTURE_OK),
        ),
        (
            "huge-id3-frame.wav".into(),
            wav_with_chunks(&[(*b"id3 ", id3_tag(0x0FFF_FFFF))]),
        ),
    ]
}

const WAV_16: &[u8] = include_bytes!("../fixtures/ir-16.wav");
const FLAC_16: &[u8] = include_bytes!("../fixtures/ir-16.flac");
const AIFF_24: &[u8] = include_bytes!("../fixtures/ir-24.aiff");
const AIFC_F32: &[u8] = include_bytes!("../fixtures/ir-f32.aifc");
const OGG: &[u8] = include_bytes!("../fixtures/ir.ogg");

/// Which Vorbis comment block [`tagged_flac`] writes.
const COMMENT_OK: u8 = 0;
const COMMENT_HUGE_VENDOR: u8 = 1;
const COMMENT_HUGE_ENTRY: u8 = 2;
/// Which picture block [`tagged_flac`] writes.
const PICTURE_OK: u8 = 0;
const PICTURE_HUGE_MIME: u8 = 1;
const PICTURE_HUGE_DATA: u8 = 2;

/// Deterministic bytes (a xorshift), for sample data.
fn pseudo_random(len: usize, mut state: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// A RIFF/FORM chunk: id, size (little- or big-endian), body, pad byte.
fn chunk(id: [u8; 4], body: &[u8], big_endian: bool) -> Vec<u8> {
    let size = body.len() as u32;
    let mut bytes = id.to_vec();
    bytes.extend(if big_endian {
        size.to_be_bytes()
    } else {
        size.to_le_bytes()
    });
    bytes.extend(body);
    if body.len() % 2 == 1 {
        bytes.push(0);
    }
    bytes
}

/// The chunks of a RIFF or FORM file after its 12-byte header.
fn split_chunks(bytes: &[u8], big_endian: bool) -> Vec<([u8; 4], Vec<u8>)> {
    let mut chunks = Vec::new();
    let mut at = 12;
    while at + 8 <= bytes.len() {
        let id: [u8; 4] = bytes[at..at + 4].try_into().unwrap();
        let size: [u8; 4] = bytes[at + 4..at + 8].try_into().unwrap();
        let size = if big_endian {
            u32::from_be_bytes(size)
        } else {
            u32::from_le_bytes(size)
        };
        let end = (at + 8 + size as usize).min(bytes.len());
        chunks.push((id, bytes[at + 8..end].to_vec()));
        at = end + (size as usize & 1);
    }
    chunks
}

/// A RIFF/WAVE or FORM file of `kind` (`WAVE`, `AIFF`) holding `chunks`.
fn container(
    magic: [u8; 4],
    kind: [u8; 4],
    chunks: &[([u8; 4], Vec<u8>)],
    big_endian: bool,
) -> Vec<u8> {
    let mut body = kind.to_vec();
    for (id, chunk_body) in chunks {
        body.extend(chunk(*id, chunk_body, big_endian));
    }
    chunk(magic, &body, big_endian)
}

/// The 16-bit WAV fixture with `extra` chunks between `fmt ` and `data`.
fn wav_with_chunks(extra: &[([u8; 4], Vec<u8>)]) -> Vec<u8> {
    let mut chunks = Vec::new();
    for (id, body) in split_chunks(WAV_16, false) {
        if &id == b"data" {
            chunks.extend(extra.iter().cloned());
        }
        chunks.push((id, body));
    }
    container(*b"RIFF", *b"WAVE", &chunks, false)
}

/// An ID3v2.3 tag with one `TIT2` frame whose size field says `frame_size`.
fn id3_tag(frame_size: u32) -> Vec<u8> {
    let title = b"\x03Hall";
    let mut frame = b"TIT2".to_vec();
    frame.extend(frame_size.to_be_bytes());
    frame.extend([0, 0]);
    frame.extend(title);
    let size = frame.len() as u32;
    // Sync-safe size: 7 bits per byte.
    let synchsafe = [
        (size >> 21) as u8 & 0x7F,
        (size >> 14) as u8 & 0x7F,
        (size >> 7) as u8 & 0x7F,
        size as u8 & 0x7F,
    ];
    let mut tag = b"ID3\x03\x00\x00".to_vec();
    tag.extend(synchsafe);
    tag.extend(frame);
    tag
}

/// WAV with `LIST`/`INFO` (name and software), `cue ` (one point) and `id3 ` chunks.
fn tagged_wav() -> Vec<u8> {
    let mut info = b"INFO".to_vec();
    info.extend(chunk(*b"INAM", b"Hall\0", false));
    info.extend(chunk(*b"ISFT", b"Longtail tests\0", false));
    let mut cue = 1u32.to_le_bytes().to_vec();
    for field in [1u32, 0, u32::from_le_bytes(*b"data"), 0, 0, 100] {
        cue.extend(field.to_le_bytes());
    }
    wav_with_chunks(&[(*b"LIST", info), (*b"cue ", cue), (*b"id3 ", id3_tag(5))])
}

/// A `WAVE_FORMAT_EXTENSIBLE` PCM WAV of `num_channels` at `bits` per sample.
fn extensible_wav(num_channels: u16, bits: u16, num_frames: usize, mask: u32) -> Vec<u8> {
    let block_align = num_channels * bits / 8;
    let mut fmt = Vec::new();
    fmt.extend(0xFFFEu16.to_le_bytes());
    fmt.extend(num_channels.to_le_bytes());
    fmt.extend(48_000u32.to_le_bytes());
    fmt.extend((48_000 * u32::from(block_align)).to_le_bytes());
    fmt.extend(block_align.to_le_bytes());
    fmt.extend(bits.to_le_bytes());
    fmt.extend(22u16.to_le_bytes());
    fmt.extend(bits.to_le_bytes());
    fmt.extend(mask.to_le_bytes());
    // KSDATAFORMAT_SUBTYPE_PCM.
    fmt.extend([
        1, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71,
    ]);
    let data = pseudo_random(num_frames * usize::from(block_align), 7);
    container(
        *b"RIFF",
        *b"WAVE",
        &[(*b"fmt ", fmt), (*b"data", data)],
        false,
    )
}

/// A 32-bit float WAV (format 3) with a `fact` chunk.
fn float_wav_with_fact(num_channels: u16, num_frames: usize) -> Vec<u8> {
    let mut fmt = Vec::new();
    fmt.extend(3u16.to_le_bytes());
    fmt.extend(num_channels.to_le_bytes());
    fmt.extend(44_100u32.to_le_bytes());
    fmt.extend((44_100 * 4 * u32::from(num_channels)).to_le_bytes());
    fmt.extend((4 * num_channels).to_le_bytes());
    fmt.extend(32u16.to_le_bytes());
    let data: Vec<u8> = (0..num_frames * usize::from(num_channels))
        .flat_map(|idx| ((idx as f32 * 0.37).sin() * 0.5 * 0.99f32.powi(idx as i32)).to_le_bytes())
        .collect();
    let fact = (num_frames as u32).to_le_bytes().to_vec();
    container(
        *b"RIFF",
        *b"WAVE",
        &[(*b"fmt ", fmt), (*b"fact", fact), (*b"data", data)],
        false,
    )
}

/// The length a tag field states for `bytes`: their own, or about 4 GB when `huge`.
fn stated_len(bytes: &[u8], huge: bool) -> u32 {
    if huge {
        0xFFFF_FFF0
    } else {
        bytes.len() as u32
    }
}

/// The FLAC fixture with a Vorbis comment and a picture block after its STREAMINFO.
fn tagged_flac(comment: u8, picture: u8) -> Vec<u8> {
    let mut comment_body = Vec::new();
    let vendor = b"Longtail tests";
    let vendor_len = stated_len(vendor, comment == COMMENT_HUGE_VENDOR);
    comment_body.extend(vendor_len.to_le_bytes());
    comment_body.extend(vendor);
    comment_body.extend(1u32.to_le_bytes());
    let entry = b"TITLE=Hall";
    let entry_len = stated_len(entry, comment == COMMENT_HUGE_ENTRY);
    comment_body.extend(entry_len.to_le_bytes());
    comment_body.extend(entry);

    let mut picture_body = Vec::new();
    picture_body.extend(3u32.to_be_bytes());
    let mime = b"image/png";
    let mime_len = stated_len(mime, picture == PICTURE_HUGE_MIME);
    picture_body.extend(mime_len.to_be_bytes());
    picture_body.extend(mime);
    picture_body.extend(5u32.to_be_bytes());
    picture_body.extend(b"cover");
    for field in [1u32, 1, 24, 0] {
        picture_body.extend(field.to_be_bytes());
    }
    let image = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    let image_len = stated_len(image, picture == PICTURE_HUGE_DATA);
    picture_body.extend(image_len.to_be_bytes());
    picture_body.extend(image);

    // fLaC, then blocks: a header byte (last flag, type) and a 24-bit length each.
    assert_eq!(&FLAC_16[..4], b"fLaC");
    let mut blocks: Vec<(u8, Vec<u8>)> = Vec::new();
    let mut at = 4;
    loop {
        let header = FLAC_16[at];
        let len =
            u32::from_be_bytes([0, FLAC_16[at + 1], FLAC_16[at + 2], FLAC_16[at + 3]]) as usize;
        blocks.push((header & 0x7F, FLAC_16[at + 4..at + 4 + len].to_vec()));
        at += 4 + len;
        if header & 0x80 != 0 {
            break;
        }
    }
    blocks.insert(1, (4, comment_body));
    blocks.insert(2, (6, picture_body));
    let mut bytes = b"fLaC".to_vec();
    let last = blocks.len() - 1;
    for (idx, (kind, body)) in blocks.iter().enumerate() {
        bytes.push(kind | if idx == last { 0x80 } else { 0 });
        bytes.extend(&(body.len() as u32).to_be_bytes()[1..]);
        bytes.extend(body);
    }
    bytes.extend(&FLAC_16[at..]);
    bytes
}

/// The 24-bit AIFF fixture with an `ID3 ` chunk at its end.
fn tagged_aiff() -> Vec<u8> {
    let mut chunks = split_chunks(AIFF_24, true);
    chunks.push((*b"ID3 ", id3_tag(5)));
    container(*b"FORM", *b"AIFF", &chunks, true)
}
