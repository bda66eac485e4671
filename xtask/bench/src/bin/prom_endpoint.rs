//! Our `/metrics` endpoint under wrk: the Prometheus backend installed with
//! its own listener on loopback, holding the scrape bench's recordings.
//!
//! Prints `http://ADDR/metrics` and then the exposition's size in bytes, one
//! per line, and serves until standard input closes.

use std::io::Read;
use std::process::ExitCode;

use gym_bench::scrape_families::Recordings;

fn main() -> ExitCode {
    let guard = match gym_metrics_prom::PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
    {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("prom_endpoint: {e}");
            return ExitCode::FAILURE;
        }
    };
    let recordings = Recordings::spread(10_000);
    for &ms in &recordings.rollouts {
        gym_metrics_api::record_rollout_duration_ms(ms);
    }
    for &(ms, ok) in &recordings.verifications {
        gym_metrics_api::record_verify_ms(ms, ok);
    }
    println!("http://{}/metrics", guard.local_addr());
    println!("{}", guard_render_len(&guard));
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    if let Err(e) = guard.shutdown() {
        eprintln!("prom_endpoint: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn guard_render_len(guard: &gym_metrics_prom::PrometheusGuard) -> usize {
    guard.handle().render().len()
}
