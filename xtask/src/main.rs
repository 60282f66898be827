//! `cargo xtask bundle longtail --release`: builds the plugin and writes `Longtail.clap`,
//! `Longtail.vst3` and the standalone `longtail` binary to `target/bundled/` (names from
//! `bundler.toml`). Runs on the developer's machine only, never inside a host.

fn main() -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::main()
}
