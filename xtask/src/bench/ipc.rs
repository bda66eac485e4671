//! The plausibility check a record-path time must pass before the report
//! publishes it: the instructions callgrind counted per call, executed in the
//! measured time at the CPU's clock, imply an instructions-per-cycle figure;
//! above [`MAX_IPC`] no core of the machine kinds we run on sustains it, so
//! the time measured something else (a loop the compiler changed, a boost
//! clock the reported MHz does not show, a harness artefact) and is flagged.

/// The most instructions per cycle a record loop can plausibly sustain
/// (Zen 3 and recent Intel cores retire at most 4 to 6 simple instructions
/// per cycle, and a record path with a store-to-load chain far fewer).
pub const MAX_IPC: f64 = 4.0;

/// Instructions per cycle implied by `instructions` per call in `ns` per
/// call at `mhz`; `None` when any input is missing or not positive.
pub fn implied(instructions: Option<f64>, ns: Option<f64>, mhz: Option<f64>) -> Option<f64> {
    match (instructions, ns, mhz) {
        (Some(i), Some(t), Some(f)) if i > 0.0 && t > 0.0 && f > 0.0 => {
            // Cycles per call: ns × cycles per ns (MHz / 1000).
            Some(i / (t * f / 1_000.0))
        }
        _ => None,
    }
}

/// True when the implied figure is beyond [`MAX_IPC`]: the time is not a result.
pub fn implausible(ipc: Option<f64>) -> bool {
    ipc.is_some_and(|q| q > MAX_IPC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_s_figure_is_flagged_and_a_plausible_one_is_not() {
        // BENCHMARKS.md's 83 instructions in 3.93 ns, at 2450 MHz: 8.6 per cycle.
        let published = implied(Some(83.0), Some(3.93), Some(2450.0));
        assert!((published.unwrap() - 8.62).abs() < 0.01, "{published:?}");
        assert!(implausible(published));
        // The independent run's 83 instructions in 8.96 ns: 3.8 per cycle.
        let independent = implied(Some(83.0), Some(8.96), Some(2450.0));
        assert!(!implausible(independent), "{independent:?}");
        // Nothing to judge without a count, a time or a clock.
        assert_eq!(implied(None, Some(3.93), Some(2450.0)), None);
        assert_eq!(implied(Some(83.0), Some(3.93), None), None);
        assert!(!implausible(None));
    }
}
