//! Quantile accuracy: what a real Prometheus 2.53 answers for p50, p95 and
//! p99 from our native histogram and from our classic buckets, beside the
//! exact quantile of the values recorded. Two distributions of 20,000
//! values: the demo's rollouts (gym-fleet's default generation, 200 to
//! 2,500 ms, plus its verification, 50 to 600 ms, each uniform) recorded as
//! rollouts, and a heavy tail (a Pareto of index 0.5 from 1 ms, cut at an
//! hour) recorded as verifications. Nothing is timed: both modes measure
//! the same, and each fails if a native estimate strays past its bucket.

use std::time::Duration;

use gym_bench::Output;
use gym_testkit::{require, Prometheus, Tool};
use serde_json::json;

const VALUES: usize = 20_000;
const QUANTILES: [f64; 3] = [0.5, 0.95, 0.99];
/// The native schema the figures are for (the default): a bucket's width
/// is then 2^(1/8) - 1, about 9 %, and a linear estimate within the right
/// bucket is off by less. With the default bucket limit (160) it holds for
/// both distributions: the heavy tail fills 157 buckets, and more would
/// halve the resolution (schema 2), which this bench would then fail on.
const SCHEMA: i32 = 3;
const HOUR_MS: f64 = 3_600_000.0;

/// Uniform in `(0, 1)`, from SplitMix64: the same values every run.
struct Uniform(u64);

impl Uniform {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (((z ^ (z >> 31)) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// The demo's rollout: generation then verification, each uniform.
fn demo(u: &mut Uniform) -> f64 {
    200.0 + 2300.0 * u.next() + 50.0 + 550.0 * u.next()
}

/// A Pareto of index 0.5 from 1 ms, cut at an hour (drawn from the cut
/// distribution itself): p50 4 ms, p95 about 390 ms, p99 about 9 s.
fn heavy_tail(u: &mut Uniform) -> f64 {
    let cut = HOUR_MS.powf(-0.5);
    (1.0 - u.next() * (1.0 - cut)).powi(-2)
}

/// The `q` quantile as Prometheus ranks it: the value at rank `q · n`.
fn exact(sorted: &[f64], q: f64) -> f64 {
    sorted[((q * sorted.len() as f64).ceil() as usize).max(1) - 1]
}

fn main() {
    require(Tool::Prometheus);
    let guard = gym_metrics_prom::PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()
        .expect("installing the prom backend");
    let mut u = Uniform(0x2545_f491_4f6c_dd1d);
    let mut sets = [
        (
            "demo rollouts",
            "gym_rollout_duration_ms_milliseconds",
            Vec::new(),
        ),
        (
            "heavy tail, 1 ms to 1 h",
            "gym_verify_duration_ms_milliseconds",
            Vec::new(),
        ),
    ];
    for _ in 0..VALUES {
        let (rollout, verify) = (demo(&mut u), heavy_tail(&mut u));
        gym_metrics_api::record_rollout_duration_ms(rollout);
        gym_metrics_api::record_verify_ms(verify, true);
        sets[0].2.push(rollout);
        sets[1].2.push(verify);
    }
    let prometheus =
        Prometheus::start_native(&guard.local_addr().to_string()).expect("starting Prometheus");
    let count = format!("histogram_count({})", sets[1].1);
    prometheus
        .wait_for(&count, Duration::from_secs(20), |s| {
            s.first().is_some_and(|s| s.value == VALUES as f64)
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));

    let bucket_width = 2f64.powf(2f64.powi(-SCHEMA)) - 1.0;
    let mut rows = Vec::new();
    for (distribution, family, values) in &mut sets {
        values.sort_by(f64::total_cmp);
        for q in QUANTILES {
            let answer = |series: &str| {
                let promql = format!("histogram_quantile({q}, {series})");
                prometheus.value(&promql).expect(&promql)
            };
            let (exact, native) = (exact(values, q), answer(family));
            let classic = answer(&format!("{family}_bucket"));
            println!(
                "{distribution} p{q}: exact {exact:.2}, native {native:.2}, classic {classic:.2}"
            );
            assert!(
                (native / exact - 1.0).abs() <= bucket_width,
                "{distribution} p{q}: native {native} is more than a bucket from {exact}"
            );
            rows.push(json!({
                "distribution": distribution, "q": q, "exact": exact,
                "native": native, "classic": classic,
            }));
        }
    }
    let mut out = Output::new("quantiles");
    out.set("values", json!(VALUES));
    out.set("rows", json!(rows));
    out.write().expect("writing the quantile figures");
    guard.shutdown().expect("the endpoint stops cleanly");
}
