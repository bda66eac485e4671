//! An agent: runs rollouts continuously (a simulated generation, then a real
//! `/verify` call to a resources server) and records `gym.rollout.duration_ms`
//! around each whole rollout, failed ones included, each in a span of its
//! own (`spans.rs`) whose trace id it logs at debug level.

use std::error::Error;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use gym_metrics_api::Role;
use tokio::task::JoinSet;

use super::args::AgentConfig;
use super::child::{loopback, report_every_second, stop_requested, LocalTally, ROLLOUT_FAMILY};
use super::client::{self, CallError, Target};
use super::protocol::{emit, Event};
use super::rng::Rng;
use super::roster::Kind;
use super::server::Task;
use super::spans;
use crate::backend;

/// How long one `/verify` call may wait for its answer.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a server that did not answer is left alone before it is tried again.
const BACKOFF: Duration = Duration::from_secs(2);

/// What the rollout workers of one agent share.
struct Shared {
    cfg: AgentConfig,
    stopping: AtomicBool,
    tally: Arc<LocalTally>,
    /// Per target: until when it is skipped because it did not answer.
    skip_until: Mutex<Vec<Option<Instant>>>,
}

/// Runs one agent until asked to stop, then lets in-flight rollouts finish
/// (within `--drain`) and reports its totals, `/verify` calls included.
///
/// # Errors
/// The backend could not be installed.
pub async fn run(cfg: AgentConfig) -> Result<(), Box<dyn Error>> {
    let guard = backend::install(
        Role::server(cfg.name.clone(), Kind::Agent.server_type()),
        loopback(cfg.metrics_port),
        cfg.simulation.linger,
        // The orchestrator hands the web configuration down through the
        // environment (GYM_METRICS_WEB_CONFIG_FILE), which from_env reads.
        None,
    )?;
    if cfg.targets.is_empty() {
        return Err("an agent needs at least one --targets address".into());
    }
    // Kept until the agent returns: the spans' provider.
    let _spans = spans::install();
    emit(&Event::Ready {
        verify_addr: None,
        metrics_addr: guard.metrics_addr(),
    });
    let tally = Arc::new(LocalTally::default());
    let reporter = tokio::spawn(report_every_second(
        Arc::clone(&tally),
        guard.reader(),
        ROLLOUT_FAMILY,
    ));
    let shared = Arc::new(Shared {
        stopping: AtomicBool::new(false),
        tally: Arc::clone(&tally),
        skip_until: Mutex::new(vec![None; cfg.targets.len()]),
        cfg,
    });
    let mut workers = JoinSet::new();
    for worker in 0..shared.cfg.simulation.concurrency as u64 {
        workers.spawn(work(Arc::clone(&shared), worker));
    }

    let why = stop_requested().await;
    eprintln!(
        "{}: stopping ({why}): no new rollouts, waiting for those in flight",
        shared.cfg.name
    );
    shared.stopping.store(true, Ordering::Relaxed);
    let drain = shared.cfg.simulation.drain;
    let drained = tokio::time::timeout(drain, async {
        while workers.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        eprintln!(
            "{}: {} rollout(s) still running after {drain:?}; abandoning them",
            shared.cfg.name,
            workers.len()
        );
        workers.abort_all();
    }
    // `--linger` is the backend's final-scrape wait, spent in shutdown below.
    reporter.abort();
    emit(&Event::Final(
        tally.snapshot(&guard.reader(), ROLLOUT_FAMILY),
    ));
    guard.shutdown()
}

/// One worker: rollout after rollout until the agent stops. Each worker draws
/// from its own random stream, so with `--seed` its k-th rollout is always the
/// same (generation time, task, and so verdict), whatever the timing.
async fn work(shared: Arc<Shared>, worker: u64) {
    let agent = shared.cfg.index;
    // Wrapping: `--index` is any u64 (a child flag); a stream is just a number.
    let stream = agent.wrapping_add(2_000) << 16 | worker;
    let mut rng = Rng::for_stream(shared.cfg.simulation.seed, stream);
    let mut sequence = 0u64;
    while !shared.stopping.load(Ordering::Relaxed) {
        rollout(&shared, &mut rng, task_id(agent, worker, sequence)).await;
        sequence += 1;
    }
}

/// A task id unique in the fleet: agent, worker and sequence number.
fn task_id(agent: u64, worker: u64, sequence: u64) -> u64 {
    (agent & 0xFFFF) << 48 | (worker & 0xFFFF) << 32 | (sequence & 0xFFFF_FFFF)
}

/// One rollout: generation, then verification; timed as a whole, its timer
/// started in the rollout's span.
async fn rollout(shared: &Shared, rng: &mut Rng, task_id: u64) {
    let timed = spans::rollout(task_id);
    let traceparent = spans::traceparent(&timed);
    let started = Instant::now();
    let generation = rng.delay(shared.cfg.simulation.generate_ms);
    let answer = rng.next_u64() % 100;
    tokio::time::sleep(generation).await;
    let (index, target) = shared.pick_target(task_id);
    let task = Task {
        task_id,
        answer: answer.to_string(),
    };
    let passed = match client::verify(target, &task, traceparent.as_deref(), CALL_TIMEOUT).await {
        Ok(passed) => {
            shared.tally.record_call(true);
            passed
        }
        Err(e) => {
            let answered = matches!(e, CallError::NoVerdict(_));
            shared.tally.record_call(answered);
            if !answered && shared.back_off(index) {
                eprintln!(
                    "{}: /verify on {}: {e}; leaving it alone for {BACKOFF:?}",
                    shared.cfg.name, target.addr
                );
            }
            false
        }
    };
    shared.tally.record(started.elapsed(), passed);
}

impl Shared {
    /// Spreads rollouts over the servers in turn (by task), skipping those that lately
    /// did not answer (unless none is left).
    fn pick_target(&self, task_id: u64) -> (usize, Target) {
        let targets = &self.cfg.targets;
        let now = Instant::now();
        let skip = self
            .skip_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let spread = (task_id >> 32).wrapping_add(task_id);
        let first = (spread % targets.len() as u64) as usize;
        let index = (0..targets.len())
            .map(|k| (first + k) % targets.len())
            .find(|&i| {
                skip.get(i)
                    .copied()
                    .flatten()
                    .is_none_or(|until| until <= now)
            })
            .unwrap_or(first);
        (index, targets[index])
    }

    /// Leaves target `index` alone for a while; true when it was not already.
    fn back_off(&self, index: usize) -> bool {
        let now = Instant::now();
        let mut skip = self
            .skip_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Some(slot) = skip.get_mut(index) else {
            return false;
        };
        let fresh = slot.is_none_or(|until| until <= now);
        *slot = Some(now + BACKOFF);
        fresh
    }
}
