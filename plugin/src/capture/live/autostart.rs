//! The standalone's `--capture` flags: a capture that starts at the first activation, whose IR
//! is saved into the library's first folder as soon as it is analysed. The standalone strips
//! them ([`strip_args`]) before nice-plug parses the rest, as it does `--headless`; the plugin
//! takes the setup at activation ([`take`]).

use std::sync::Mutex;

use super::take::Setup;

/// The setup `--capture` asked for, until the first activation takes it.
static AUTOSTART: Mutex<Option<Setup>> = Mutex::new(None);

/// The flags, for `--help`.
pub const HELP: &str = "\
  --capture              measure the room once the audio runs: play a sine sweep, record it,
                         deconvolve it and save the IR into the library's first folder
  --capture-outputs LIST outputs that play the sweep, one loudspeaker each, in turn (default 1)
  --capture-inputs LIST  inputs recorded, one microphone each (default 1), with the loopback
  --capture-loopback N   the input that records the sweep itself (a cable from an output)
  --capture-seconds S    the sweep's length (default 10)
  --capture-tail S       silence after each sweep, the longest IR (default 4)
  --capture-level DB     the sweep's peak in dBFS (default -6)
  --capture-delay S      silence before the sweep (default 0): time to leave the room, or to
                         connect the audio server's ports
  (channels count from 1; LIST is comma-separated: 1,2)";

/// Removes the capture flags from `args` and keeps the setup for [`take`]. Errs on a flag
/// without its value or with a bad one.
pub fn strip_args(args: &mut Vec<String>) -> Result<(), String> {
    let mut setup = Setup::default();
    let mut asked = false;
    let mut idx = 0;
    while idx < args.len() {
        let flag = args[idx].as_str();
        if flag == "--capture" {
            asked = true;
            args.remove(idx);
            continue;
        }
        if !flag.starts_with("--capture-") {
            idx += 1;
            continue;
        }
        let flag = args.remove(idx);
        let value = if idx < args.len() {
            args.remove(idx)
        } else {
            return Err(format!("{flag} needs a value"));
        };
        let bad = |what: &str| format!("{flag} {value}: {what}");
        let number = |value: &str| value.trim().parse::<f64>().ok().filter(|v| v.is_finite());
        match flag.as_str() {
            "--capture-outputs" => {
                setup.outputs = channels(&value).ok_or_else(|| bad("channels from 1, as 1,2"))?
            }
            "--capture-inputs" => {
                setup.inputs = channels(&value).ok_or_else(|| bad("channels from 1, as 1,2"))?
            }
            "--capture-loopback" => {
                setup.loopback = Some(
                    channels(&value)
                        .filter(|c| c.len() == 1)
                        .ok_or_else(|| bad("one channel from 1"))?[0],
                );
            }
            "--capture-seconds" => {
                setup.sweep_seconds = number(&value).ok_or_else(|| bad("seconds"))?
            }
            "--capture-tail" => {
                setup.tail_seconds = number(&value).ok_or_else(|| bad("seconds"))?
            }
            "--capture-level" => setup.level_db = number(&value).ok_or_else(|| bad("dBFS"))?,
            "--capture-delay" => {
                setup.delay_seconds = number(&value).ok_or_else(|| bad("seconds"))?
            }
            _ => {
                return Err(format!(
                    "{flag}: not a flag of the standalone's (see --help)"
                ));
            }
        }
        asked = true;
    }
    if let Some(loopback) = setup.loopback
        && !setup.inputs.contains(&loopback)
    {
        setup.inputs.push(loopback);
    }
    if asked {
        *AUTOSTART
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(setup);
    }
    Ok(())
}

/// The setup the flags asked for, once: the first activation starts it.
pub fn take() -> Option<Setup> {
    AUTOSTART
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
}

/// `1,2` as 0-based channels.
fn channels(list: &str) -> Option<Vec<usize>> {
    list.split(',')
        .map(|c| {
            c.trim()
                .parse::<usize>()
                .ok()
                .filter(|&c| c >= 1)
                .map(|c| c - 1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flags_are_stripped_and_their_setup_kept() {
        let mut args: Vec<String> = [
            "longtail",
            "--capture",
            "--capture-inputs",
            "1,3",
            "--backend",
            "jack",
            "--capture-loopback",
            "2",
            "--capture-seconds",
            "2",
            "--capture-delay",
            "1.5",
        ]
        .map(String::from)
        .to_vec();
        strip_args(&mut args).unwrap();
        assert_eq!(args, ["longtail", "--backend", "jack"]);
        let setup = take().unwrap();
        assert_eq!(setup.inputs, [0, 2, 1]);
        assert_eq!(setup.loopback, Some(1));
        assert_eq!(setup.sweep_seconds, 2.0);
        assert_eq!(setup.delay_seconds, 1.5);
        assert!(take().is_none());
        let mut bad: Vec<String> = ["longtail", "--capture-level"].map(String::from).to_vec();
        assert!(strip_args(&mut bad).unwrap_err().contains("needs a value"));
        let mut bad: Vec<String> = ["longtail", "--capture-outputs", "0"]
            .map(String::from)
            .to_vec();
        assert!(strip_args(&mut bad).is_err());
    }
}
