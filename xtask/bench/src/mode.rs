//! Timing or quick mode, from the arguments cargo passes to a bench binary.

/// How long a bench binary measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Real figures: many interleaved rounds.
    Timing,
    /// Each candidate runs briefly once, to prove it still works.
    Quick,
}

impl Mode {
    /// `cargo bench` passes `--bench`; `cargo test --benches` does not.
    /// `--test` (as in `cargo bench -- --test`) forces quick mode.
    ///
    /// ```
    /// use gym_bench::Mode;
    /// assert_eq!(Mode::from_args(["x", "--bench"].map(String::from)), Mode::Timing);
    /// assert_eq!(Mode::from_args(["x", "--bench", "--test"].map(String::from)), Mode::Quick);
    /// assert_eq!(Mode::from_args(["x"].map(String::from)), Mode::Quick);
    /// ```
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Self {
        let args: Vec<String> = args.into_iter().collect();
        if args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test") {
            Mode::Timing
        } else {
            Mode::Quick
        }
    }

    /// [`Mode::from_args`] of this process.
    pub fn current() -> Self {
        Self::from_args(std::env::args())
    }

    /// Interleaved rounds per candidate.
    pub fn rounds(self) -> usize {
        match self {
            Mode::Timing => 400,
            Mode::Quick => 1,
        }
    }

    /// Calls per timed run: short enough (~20 µs at 10 ns) to fit in a
    /// scheduler time slice on a loaded machine, with 1 thread and with 2
    /// alike, so the two figures compare.
    pub fn per_run(self) -> u64 {
        match self {
            Mode::Timing => 2_000,
            Mode::Quick => 200,
        }
    }

    /// Calls per timed run where a run must outlast something else (a
    /// scrape, tens of µs).
    pub fn long_run(self) -> u64 {
        match self {
            Mode::Timing => 20_000,
            Mode::Quick => 200,
        }
    }
}
