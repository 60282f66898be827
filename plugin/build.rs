//! Records the commit Longtail is built from as `LONGTAIL_COMMIT`, which `longtail-cli --version`,
//! `status` and the editor's header show next to the version: `LONGTAIL_COMMIT` from the
//! environment when set (a build from a source archive that knows its commit), else
//! `git rev-parse --short=12 HEAD`, else `unknown` (no git, or a tree outside a checkout).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=LONGTAIL_COMMIT");
    let commit = std::env::var("LONGTAIL_COMMIT")
        .ok()
        .filter(|commit| !commit.trim().is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=LONGTAIL_COMMIT={}", commit.trim());
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
