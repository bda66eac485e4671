//! Timing or quick mode, from the arguments cargo passes to a bench binary.

/// How long a bench binary measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Real figures: criterion samples every benchmark.
    Timing,
    /// Criterion runs each benchmark once, untimed, to prove it still works.
    Quick,
}

impl Mode {
    /// `cargo bench` passes `--bench`; `cargo test --benches` does not.
    /// `--test` (as in `cargo bench -- --test`) forces quick mode. This is
    /// criterion's own rule (`Criterion::configure_from_args`), so the two
    /// agree on whether estimates were written.
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
}
