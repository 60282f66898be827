//! Records the commit Longtail is built from as `LONGTAIL_COMMIT`, which `longtail-cli --version`,
//! `status` and the editor's header show next to the version: `LONGTAIL_COMMIT` from the
//! environment when set (a build from a source archive that knows its commit), else
//! `git rev-parse --short=12 HEAD`, else `unknown` (no git, or a tree outside a checkout).
//!
//! On Linux it also links `longtail-cli` as a position-dependent executable (`-no-pie`): see
//! [`link_cli_position_dependent`].

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=LONGTAIL_COMMIT");
    let commit = std::env::var("LONGTAIL_COMMIT")
        .ok()
        .filter(|commit| !commit.trim().is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=LONGTAIL_COMMIT={}", commit.trim());
    link_cli_position_dependent();
}

/// `longtail-cli` on Linux is linked at a fixed address. As a position-independent executable
/// it carried 28,242 relative relocations (682 KB of `.rela.dyn`, read at every start, and
/// 450 KB of tables written through them), for a program that is started once per render,
/// benchmark run or status query: without them it starts in 1.3 ms instead of 1.7 with 100
/// fewer page faults, and the peer harness's stereo 10 s run peaks 1.1 to 1.5 MB lower (51.6
/// to 51.7 MB against 52.8 to 53.1 at blocks of 64 and 1024, zita-convolver's 51.9 to 52.3;
/// EPYC VM, 2026-12-05, three rounds alternated; `docs/benchmarks.md`). The cost is
/// that the CLI's own image sits at the same address every run (its libraries, heap and stack
/// are still randomised). The plugin (a shared library, which must be position independent)
/// and the standalone keep the default. Rust's objects are position independent either way, so
/// only the link changes; `-no-pie` comes after rustc's `-pie` and the last one counts.
fn link_cli_position_dependent() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=longtail-cli=-no-pie");
    }
}

/// The checkout's short commit hash; asks cargo to build again when HEAD moves.
fn git_commit() -> Option<String> {
    let git = |args: &[&str]| {
        let output = Command::new("git").args(args).output().ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    // HEAD names a branch whose ref file (or packed-refs) moves with each commit. Only files
    // that exist are named: cargo would build again each time for a missing one.
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    let cwd = std::env::current_dir().unwrap_or_default();
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]).map(|p| cwd.join(p))
            && path.is_file()
        {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    Some(commit)
}
