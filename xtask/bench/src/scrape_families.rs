//! The same families our exposition carries (both duration histograms, the
//! success-rate gauge, the two verify counters, `target_info`), built with
//! each peer's own types, for the render comparison.

use gym_metrics_api::backend::Instrument;
use gym_metrics_prom::{SCOPE_NAME, SCOPE_VERSION};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;

use crate::peers::bounds;

/// What every exposition records: `(milliseconds, succeeded)` verifications
/// and rollout milliseconds, the same for ours and the peers.
#[derive(Debug, Clone)]
pub struct Recordings {
    /// Rollout durations, ms.
    pub rollouts: Vec<f64>,
    /// Verification durations, ms, and outcomes.
    pub verifications: Vec<(f64, bool)>,
}

impl Recordings {
    /// `n` of each, spread over every bucket.
    pub fn spread(n: u64) -> Self {
        let ms = |i: u64| ((i * 7919) % 4_000_000) as f64;
        Self {
            rollouts: (0..n).map(ms).collect(),
            verifications: (0..n).map(|i| (ms(i + 1), i % 4 != 0)).collect(),
        }
    }
}

/// The `_count` of the rollout histogram in a rendered exposition, if any.
///
/// ```
/// let text = "gym_rollout_duration_ms_milliseconds_count{otel_scope_name=\"gym-metrics\"} 42\n";
/// assert_eq!(gym_bench::scrape_families::rollout_records(text), Some(42));
/// assert_eq!(gym_bench::scrape_families::rollout_records(""), None);
/// ```
pub fn rollout_records(exposition: &str) -> Option<u64> {
    exposition
        .lines()
        .find(|l| l.starts_with("gym_rollout_duration_ms_milliseconds_count{"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
}

/// The family names of a rendered exposition, found by each instrument's
/// HELP text, so the peers' families are named exactly as ours (the naming
/// rule stays inside gym-metrics-prom).
#[derive(Debug, Clone)]
pub struct FamilyNames {
    rollout: String,
    verify: String,
    success_rate: String,
    completed: String,
    succeeded: String,
}

impl FamilyNames {
    /// Reads the names from `exposition`.
    ///
    /// # Errors
    /// The description of the first instrument without a HELP line.
    ///
    /// ```
    /// let text = "# HELP gym_rollout_duration_ms_milliseconds Rollout collection duration in milliseconds.\n";
    /// assert!(gym_bench::scrape_families::FamilyNames::read(text)
    ///     .unwrap_err()
    ///     .contains("Verification endpoint duration"));
    /// ```
    pub fn read(exposition: &str) -> Result<Self, String> {
        let name = |instrument: &Instrument| {
            exposition
                .lines()
                .filter_map(|l| l.strip_prefix("# HELP "))
                .find_map(|l| {
                    let (name, help) = l.split_once(' ')?;
                    (help == instrument.description).then(|| name.to_string())
                })
                .ok_or_else(|| format!("no family with HELP {:?}", instrument.description))
        };
        Ok(Self {
            rollout: name(&Instrument::ROLLOUT_DURATION)?,
            verify: name(&Instrument::VERIFY_DURATION)?,
            success_rate: name(&Instrument::VERIFY_SUCCESS_RATE)?,
            completed: name(&Instrument::VERIFY_COMPLETED)?,
            succeeded: name(&Instrument::VERIFY_SUCCEEDED)?,
        })
    }
}

/// The `target_info` labels of a rendered exposition, so the peers carry
/// exactly the same resource labels.
pub fn target_info_labels(exposition: &str) -> Vec<(String, String)> {
    let Some(line) = exposition.lines().find(|l| l.starts_with("target_info{")) else {
        return Vec::new();
    };
    let inner = line
        .trim_start_matches("target_info{")
        .rsplit_once('}')
        .map(|(labels, _)| labels)
        .unwrap_or("");
    inner
        .split("\",")
        .filter_map(|pair| {
            let (k, v) = pair.split_once("=\"")?;
            Some((k.to_string(), v.trim_end_matches('"').to_string()))
        })
        .collect()
}

fn scope_labels() -> Vec<(String, String)> {
    vec![
        ("otel_scope_name".into(), SCOPE_NAME.into()),
        ("otel_scope_version".into(), SCOPE_VERSION.into()),
    ]
}

/// A `prometheus` 0.14 registry with the same families; render it with
/// `TextEncoder`.
///
/// # Errors
/// Only if `prometheus` refuses a family (a bug here).
pub fn prometheus_registry(
    recordings: &Recordings,
    names: &FamilyNames,
    target_info: &[(String, String)],
) -> prometheus::Result<prometheus::Registry> {
    use prometheus::{Counter as PCounter, Gauge as PGauge, Histogram as PHistogram, Opts};
    let registry = prometheus::Registry::new();
    let scope: std::collections::HashMap<String, String> = scope_labels().into_iter().collect();
    let histogram = |name: &str, instrument: &Instrument| {
        PHistogram::with_opts(
            prometheus::HistogramOpts::new(name, instrument.description)
                .const_labels(scope.clone())
                .buckets(bounds()),
        )
    };
    let rollout = histogram(&names.rollout, &Instrument::ROLLOUT_DURATION)?;
    let verify = histogram(&names.verify, &Instrument::VERIFY_DURATION)?;
    let opts = |name: &str, instrument: &Instrument| {
        Opts::new(name, instrument.description).const_labels(scope.clone())
    };
    let rate = PGauge::with_opts(opts(&names.success_rate, &Instrument::VERIFY_SUCCESS_RATE))?;
    let completed = PCounter::with_opts(opts(&names.completed, &Instrument::VERIFY_COMPLETED))?;
    let succeeded = PCounter::with_opts(opts(&names.succeeded, &Instrument::VERIFY_SUCCEEDED))?;
    let info = PGauge::with_opts(
        Opts::new("target_info", "Target metadata")
            .const_labels(target_info.iter().cloned().collect()),
    )?;
    info.set(1.0);
    for &ms in &recordings.rollouts {
        rollout.observe(ms);
    }
    for &(ms, ok) in &recordings.verifications {
        verify.observe(ms);
        completed.inc();
        if ok {
            succeeded.inc();
        }
    }
    rate.set(succeeded.get() / completed.get().max(1.0));
    registry.register(Box::new(info))?;
    registry.register(Box::new(rollout))?;
    registry.register(Box::new(verify))?;
    registry.register(Box::new(rate))?;
    registry.register(Box::new(completed))?;
    registry.register(Box::new(succeeded))?;
    Ok(registry)
}

/// A `prometheus-client` 0.26 registry with the same families; render it
/// with `prometheus_client::encoding::text::encode`.
pub fn prometheus_client_registry(
    recordings: &Recordings,
    names: &FamilyNames,
    target_info: &[(String, String)],
) -> prometheus_client::registry::Registry {
    use prometheus_client::registry::Registry;
    let mut root = Registry::default();
    let info: Gauge = Gauge::default();
    info.set(1);
    root.sub_registry_with_labels(
        target_info
            .iter()
            .map(|(k, v)| (k.clone().into(), v.clone().into())),
    )
    .register("target_info", "Target metadata", info);

    let scoped = root.sub_registry_with_labels(
        scope_labels()
            .into_iter()
            .map(|(k, v)| (k.into(), v.into())),
    );
    let rollout = Histogram::new(bounds());
    let verify = Histogram::new(bounds());
    let rate: Gauge<f64, std::sync::atomic::AtomicU64> = Gauge::default();
    let completed: Counter = Counter::default();
    let succeeded: Counter = Counter::default();
    for &ms in &recordings.rollouts {
        rollout.observe(ms);
    }
    for &(ms, ok) in &recordings.verifications {
        verify.observe(ms);
        completed.inc();
        if ok {
            succeeded.inc();
        }
    }
    rate.set(succeeded.get() as f64 / completed.get().max(1) as f64);
    // prometheus-client appends `_total` to counters itself.
    let base = |name: &str| name.trim_end_matches("_total").to_string();
    scoped.register(
        base(&names.rollout),
        Instrument::ROLLOUT_DURATION.description,
        rollout,
    );
    scoped.register(
        base(&names.verify),
        Instrument::VERIFY_DURATION.description,
        verify,
    );
    scoped.register(
        base(&names.success_rate),
        Instrument::VERIFY_SUCCESS_RATE.description,
        rate,
    );
    scoped.register(
        base(&names.completed),
        Instrument::VERIFY_COMPLETED.description,
        completed,
    );
    scoped.register(
        base(&names.succeeded),
        Instrument::VERIFY_SUCCEEDED.description,
        succeeded,
    );
    root
}
