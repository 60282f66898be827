//! `cargo xtask bundle longtail --release [--target TRIPLE]`: builds the plugin and writes
//! `Longtail.clap`, `Longtail.vst3` and the standalone (`Longtail`, `Longtail.exe` on Windows) to
//! `target/bundled/<TRIPLE>/` (names from `bundler.toml`; the host's triple without `--target`).
//! Runs on the developer's machine only, never inside a host.
//!
//! nice-plug-xtask always writes to `target/bundled/`, so a Windows bundle written after a
//! Linux one took its place: `Longtail.clap` is one file for both. This wrapper gives each
//! target its own folder: it lets nice-plug-xtask bundle into an empty `target/bundled/`, then
//! moves what it wrote into the target's folder, replacing that target's older bundles and
//! leaving every other target's alone. Every other command goes to nice-plug-xtask unchanged.
//!
//! It also strips the bundled binaries (`strip`, `x86_64-w64-mingw32-strip` for Windows): the
//! release profile keeps the symbol table in `target/release/`, for profilers and
//! `scripts/size-by-crate.sh`, and the bundles users get should not carry it. Apple targets are
//! left as they are: nice-plug-xtask signs those bundles, and stripping after would break the
//! signature.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use nice_plug_xtask::Result;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("bundle") {
        return nice_plug_xtask::main_with_args("cargo xtask", args);
    }
    nice_plug_xtask::chdir_workspace_root()?;
    let bundled = target_dir()?.join("bundled");
    let triple = match target_arg(&args) {
        Some(triple) => triple,
        None => host_triple()?,
    };

    // Bundles written by the nice-plug-xtask of an earlier Longtail, straight into bundled/,
    // belong to no known target: they go, so that only this run's output is moved below.
    let before = folder_names(&bundled)?;
    for name in before.iter().filter(|name| !is_triple(name)) {
        remove(&bundled.join(name))?;
    }
    nice_plug_xtask::main_with_args("cargo xtask", args)?;

    let dest = bundled.join(&triple);
    fs::create_dir_all(&dest)?;
    for name in folder_names(&bundled)? {
        if is_triple(&name) {
            continue;
        }
        let to = dest.join(&name);
        remove(&to)?;
        fs::rename(bundled.join(&name), &to)?;
        eprintln!("Moved {name} to '{}'", to.display());
        if let Some(tool) = strip_tool(&triple) {
            strip_binaries(&to, tool)?;
        }
    }
    Ok(())
}

/// The `strip` that handles the target's binaries, where we strip them (see the module docs).
fn strip_tool(triple: &str) -> Option<&'static str> {
    if triple.contains("windows-gnu") {
        Some("x86_64-w64-mingw32-strip")
    } else if triple.contains("linux") {
        Some("strip")
    } else {
        None
    }
}

/// Strips the symbol table from every ELF or PE file at or under `path`; a missing tool leaves
/// them as they are, with a warning.
fn strip_binaries(path: &Path, tool: &str) -> Result<()> {
    if path.is_dir() {
        for entry in fs::read_dir(path)? {
            strip_binaries(&entry?.path(), tool)?;
        }
        return Ok(());
    }
    let mut magic = [0u8; 4];
    let is_binary = fs::File::open(path)
        .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut magic))
        .is_ok()
        && (magic == *b"\x7fELF" || magic[..2] == *b"MZ");
    if !is_binary {
        return Ok(());
    }
    match Command::new(tool).arg("--strip-all").arg(path).status() {
        Ok(status) if status.success() => {}
        Ok(status) => {
            return Err(std::io::Error::other(format!(
                "{tool} --strip-all {} failed ({status})",
                path.display()
            ))
            .into());
        }
        Err(err) => eprintln!(
            "{tool} is not here ({err}): {} keeps its symbols",
            path.display()
        ),
    }
    Ok(())
}

/// The value of `--target TRIPLE` or `--target=TRIPLE`, the last one given (as cargo reads it).
fn target_arg(args: &[String]) -> Option<String> {
    let mut found = None;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--target" {
            found = iter.next().cloned();
        } else if let Some(value) = arg.strip_prefix("--target=") {
            found = Some(value.to_owned());
        }
    }
    found
}

/// A folder name that is a target triple (`x86_64-unknown-linux-gnu`), not a bundle
/// (`Longtail.clap`, `Longtail.vst3`, `Longtail`, `Longtail.exe`).
fn is_triple(name: &str) -> bool {
    !name.contains('.') && name.matches('-').count() >= 2
}

/// The host's target triple, as `rustc -vV` prints it.
fn host_triple() -> Result<String> {
    let output = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("-vV")
        .output()?;
    let host = String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .ok_or_else(|| std::io::Error::other("`rustc -vV` printed no host triple"))?;
    Ok(host)
}

/// Cargo's target directory: `CARGO_TARGET_DIR` when set, else `target/` in the workspace
/// root (the current directory, after `chdir_workspace_root`).
fn target_dir() -> Result<PathBuf> {
    Ok(match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => std::env::current_dir()?.join(dir),
        None => std::env::current_dir()?.join("target"),
    })
}

/// The names of the entries of `dir` (none when it does not exist yet).
fn folder_names(dir: &Path) -> Result<Vec<String>> {
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut names = Vec::new();
    for entry in fs::read_dir(dir)? {
        names.push(entry?.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

/// Removes a file or a folder with its contents; nothing there is no error.
fn remove(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path)?,
        Ok(_) => fs::remove_file(path)?,
        Err(_) => {}
    }
    Ok(())
}
