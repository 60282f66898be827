//! The shapes of the numeric parameters: their ranges, steps, units and texts.

use std::sync::Arc;

use nice_plug::prelude::*;

/// A level in dB from -24 to +24, 0 by default, in 0.1 dB steps.
pub(super) fn decibels(name: &str) -> FloatParam {
    let max = crate::ir::edit::MAX_SHAPE_DB as f32;
    decibels_in(name, 0.0, (-max, max))
}

/// A level in dB over `range`, linear, in 0.1 dB steps.
pub(super) fn decibels_in(name: &str, default: f32, (min, max): (f32, f32)) -> FloatParam {
    FloatParam::new(name, default, FloatRange::Linear { min, max })
        .with_step_size(0.1)
        .with_unit(" dB")
}

/// A share from 0 to 1 shown in percent, smoothed linearly over `smoothing_ms` (Mix, Blend).
pub(super) fn share(name: &str, default: f32, smoothing_ms: f32) -> FloatParam {
    FloatParam::new(name, default, FloatRange::Linear { min: 0.0, max: 1.0 })
        .with_smoother(SmoothingStyle::Linear(smoothing_ms))
        .with_unit("%")
        .with_value_to_string(formatters::v2s_f32_percentage(0))
        .with_string_to_value(formatters::s2v_f32_percentage())
}

/// A parameter from `min` to `max`, skewed by `skew` (`FloatRange::skew_factor`'s argument:
/// below 0, more of the knob towards `min`).
pub(super) fn skewed(name: &str, default: f32, (min, max): (f32, f32), skew: f32) -> FloatParam {
    FloatParam::new(
        name,
        default,
        FloatRange::Skewed {
            min,
            max,
            factor: FloatRange::skew_factor(skew),
        },
    )
}

/// A corner frequency from `min` to `max` Hz, skewed towards the low end.
pub(super) fn corner(name: &str, default: f32, min: f32, max: f32) -> FloatParam {
    skewed(name, default, (min, max), -1.5)
        .with_step_size(1.0)
        .with_unit(" Hz")
        .with_value_to_string(Arc::new(|value| format!("{value:.0}")))
}

pub(super) fn milliseconds(name: &str, max: f32) -> FloatParam {
    skewed(name, 0.0, (0.0, max), -1.5)
        .with_unit(" ms")
        .with_step_size(0.1)
}

/// A parameter with an "Off" end (`is_off`; `off_value` is that end): shows "Off" there,
/// without the unit, and the value with `unit` elsewhere, and reads either back ("off",
/// "250", "250 Hz").
pub(super) fn with_off(
    param: FloatParam,
    off_value: f32,
    is_off: fn(f32) -> bool,
    unit: &'static str,
) -> FloatParam {
    param
        .with_value_to_string(Arc::new(move |value| {
            if is_off(value) {
                "Off".to_string()
            } else {
                format!("{value:.0}{unit}")
            }
        }))
        .with_string_to_value(Arc::new(move |text| {
            let text = text.trim();
            if text.eq_ignore_ascii_case("off") {
                Some(off_value)
            } else {
                text.trim_end_matches(unit.trim()).trim().parse().ok()
            }
        }))
}

/// A ratio over `range` with 1 at its centre (skewed so each side takes half the knob), in
/// 0.01 steps: a percentage (`percent`) or a multiplier ("1.50 x").
pub(super) fn ratio(name: &str, range: (f64, f64), percent: bool) -> FloatParam {
    let param = FloatParam::new(
        name,
        1.0,
        FloatRange::SymmetricalSkewed {
            min: range.0 as f32,
            max: range.1 as f32,
            factor: FloatRange::skew_factor(-1.0),
            center: 1.0,
        },
    )
    .with_step_size(0.01);
    if percent {
        param
            .with_unit("%")
            .with_value_to_string(formatters::v2s_f32_percentage(0))
            .with_string_to_value(formatters::s2v_f32_percentage())
    } else {
        param.with_unit(" x")
    }
}

/// A time from `min` to `max` milliseconds, skewed towards the short end, in 0.1 ms steps.
pub(super) fn time_ms(name: &str, default: f32, min: f32, max: f32) -> FloatParam {
    skewed(name, default, (min, max), -2.0)
        .with_step_size(0.1)
        .with_unit(" ms")
}
