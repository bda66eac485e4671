//! The clock the CPU actually ran at, measured: a chain of dependent integer
//! adds retires one add per cycle on every x86-64 core, so adds per second
//! is cycles per second. `/proc/cpuinfo`'s `cpu MHz` is often the nominal
//! clock under a hypervisor (2445 MHz on the CI kind, whose cores boost
//! higher), and an instructions-per-cycle check at the nominal clock flags
//! honest times.

use std::time::Instant;

/// The clocks an x86-64 core can run at, in MHz.
#[cfg(target_arch = "x86_64")]
const PLAUSIBLE_MHZ: std::ops::Range<f64> = 500.0..7_000.0;

/// Dependent adds per loop round: the round's own counter and branch run
/// beside the chain, in its shadow.
#[cfg(target_arch = "x86_64")]
const ADDS_PER_ROUND: u64 = 16;

/// Runs `rounds` rounds of [`ADDS_PER_ROUND`] dependent adds; returns the sum
/// (so the chain is not optimised away). The loop is in the assembly too, so
/// a debug build of xtask measures the same as a release one.
#[cfg(target_arch = "x86_64")]
fn dependent_adds(rounds: u64) -> u64 {
    let mut x: u64 = 0;
    if rounds == 0 {
        return x;
    }
    // SAFETY: the assembly only uses the two registers it is given and the
    // flags, and always terminates (the counter starts above zero).
    unsafe {
        std::arch::asm!(
            "2:",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "add {x}, 1", "add {x}, 1", "add {x}, 1", "add {x}, 1",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            n = inout(reg) rounds => _,
            options(nomem, nostack),
        );
    }
    x
}

/// The clock in MHz: the median of five runs of about 160 million
/// dependent adds. Not the fastest: this guest's clock can stand still while
/// the host runs another guest, so one run can look impossibly short (21 GHz
/// was seen), while an interrupted run only looks slower; the median is
/// neither. `None` off x86-64.
pub fn measure_mhz() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        const ROUNDS: u64 = 10_000_000;
        let mut elapsed = Vec::with_capacity(5);
        for _ in 0..5 {
            let start = Instant::now();
            let sum = dependent_adds(ROUNDS);
            elapsed.push(start.elapsed().as_secs_f64());
            if sum != ROUNDS * ADDS_PER_ROUND {
                return None;
            }
        }
        elapsed.sort_by(f64::total_cmp);
        let median = elapsed[2];
        let cycles = (ROUNDS * ADDS_PER_ROUND) as f64;
        let mhz = (median > 0.0).then(|| cycles / median / 1e6)?;
        // Any x86-64 core of the last fifteen years runs between 0.5 and
        // 7 GHz. Outside that the guest's clock is not the host's (an Intel
        // host of this workplace measures 20 GHz, however quiet): no figure,
        // and the report falls back to `/proc/cpuinfo`.
        PLAUSIBLE_MHZ.contains(&mhz).then_some(mhz)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = Instant::now;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_is_not_folded_and_a_clock_is_plausible_or_none() {
        #[cfg(target_arch = "x86_64")]
        {
            // Every add of the chain is executed: a folded chain would
            // still give the sum, so the time is what tells; what the
            // sum tells is that the assembly ran whole.
            assert_eq!(dependent_adds(1_000), 1_000 * ADDS_PER_ROUND);
            let mhz = measure_mhz();
            eprintln!("measured clock: {mhz:?} MHz");
            assert!(
                mhz.is_none_or(|mhz| PLAUSIBLE_MHZ.contains(&mhz)),
                "{mhz:?}"
            );
        }
    }
}
