//! The scale workload: the `gym-fleet` arguments every fleet-scale run
//! shares (the scraped and the OTLP e2e, `cargo xtask bench scale`), so that
//! what is measured is what is tested.

use std::time::Duration;

/// `gym-fleet` arguments for `servers` resources servers and `agents`
/// agents at the scale workload's low rate (each agent one rollout at a
/// time of 1–3 s, verification 20–80 ms: hundreds of processes share two
/// cores), running for `duration`; the caller adds ports and run id.
///
/// ```
/// let args = gym_testkit::scale_fleet::args(150, 50, std::time::Duration::from_secs(60));
/// assert_eq!(&args[..4], ["--servers", "150", "--agents", "50"]);
/// assert!(args.windows(2).any(|w| w == ["--duration", "60"]));
/// ```
pub fn args(servers: usize, agents: usize, duration: Duration) -> Vec<String> {
    [
        "--servers",
        &servers.to_string(),
        "--agents",
        &agents.to_string(),
        "--seed",
        "18",
        "--generate-ms",
        "1000..3000",
        "--verify-ms",
        "20..80",
        "--concurrency",
        "1",
        "--drain",
        "2",
        "--duration",
        &duration.as_secs().max(1).to_string(),
    ]
    .map(String::from)
    .to_vec()
}
