//! The orchestrator: launches the servers and agents (re-executing this
//! binary), keeps `gym.servers.active` equal to the number of live server
//! processes, draws the live view, and stops the fleet in order.

use std::error::Error;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use gym_metrics_api::{FleetSize, Role};
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc;

use super::args::FleetConfig;
use super::child::loopback;
use super::discovery::Discovery;
use super::launch::{launch, Message};
use super::protocol::Event;
use super::roster::{Health, Kind, Member, Roster};
use super::scrape_config;
use super::view::{summary, View};
use crate::backend;

/// How long servers may take to come up.
const STARTUP_BOUND: Duration = Duration::from_secs(15);
/// Extra time, beyond drain and linger, before a stopping child is killed.
const STOP_SLACK: Duration = Duration::from_secs(3);

/// Why the orchestrator stopped waiting.
enum Wake {
    /// The condition it waited for holds.
    Done,
    /// Ctrl-C or SIGTERM.
    Signal(&'static str),
    /// The deadline passed.
    Deadline,
}

struct Orchestrator {
    cfg: FleetConfig,
    roster: Roster,
    fleet_size: Option<FleetSize>,
    published_size: Option<u64>,
    discovery: Discovery,
    view: View,
    started: Instant,
    tx: mpsc::UnboundedSender<Message>,
    rx: mpsc::UnboundedReceiver<Message>,
    tick: tokio::time::Interval,
    sigint: Signal,
    sigterm: Signal,
    /// Set when a second signal made the orchestrator kill every process.
    forced: bool,
}

/// Runs a fleet until `--duration` elapses, Ctrl-C or SIGTERM, then stops it
/// in order and prints the summary.
///
/// # Errors
/// The backend could not be installed, signals could not be watched, or the
/// servers did not start.
pub async fn run(cfg: FleetConfig) -> Result<(), Box<dyn Error>> {
    // The orchestrator keeps /metrics up for `--linger` itself (pumping the
    // children's last events meanwhile), so it asks no final-scrape wait.
    let guard = backend::install(
        Role::orchestrator(),
        loopback(cfg.metrics_port),
        Duration::ZERO,
        cfg.web_config.as_deref(),
    )?;
    let (tx, rx) = mpsc::unbounded_channel();
    let header = format!(
        "gym-fleet | backend {} | seed {} | {} | {} | pass ratio {}",
        backend::NAME,
        cfg.simulation.seed,
        count(cfg.servers, "server"),
        count(cfg.agents, "agent"),
        cfg.simulation.pass_ratio
    );
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let run_id = cfg.run_id.clone().unwrap_or_else(fresh_run_id);
    let mut o = Orchestrator {
        fleet_size: guard.fleet_size(),
        published_size: None,
        discovery: Discovery::new(
            guard.fleet_size(),
            guard.metrics_addr(),
            run_id,
            cfg.file_sd.clone(),
        ),
        roster: Roster::default(),
        view: View::new(header),
        started: Instant::now(),
        tx,
        rx,
        tick,
        sigint: signal(SignalKind::interrupt())?,
        sigterm: signal(SignalKind::terminate())?,
        forced: false,
        cfg,
    };
    o.view.announce();
    o.announce_scrape_targets(guard.metrics_addr())?;
    o.publish_targets();
    let result = o.run_fleet().await.and_then(|()| {
        if o.forced {
            Err("interrupted twice: every process was killed without flushing its metrics".into())
        } else {
            Ok(())
        }
    });
    o.publish_size(0);
    o.publish_targets();
    if result.is_ok() {
        o.linger().await;
    }
    o.view
        .message(&summary(&o.roster, o.cfg.simulation.pass_ratio));
    if let Err(e) = guard.shutdown() {
        eprintln!("gym-fleet: flushing the orchestrator's metrics failed: {e}");
    }
    result
}

impl Orchestrator {
    async fn run_fleet(&mut self) -> Result<(), Box<dyn Error>> {
        for i in 0..self.cfg.servers {
            self.launch(Kind::Server, i)?;
        }
        match self
            .pump_until(Some(Instant::now() + STARTUP_BOUND), |r| {
                r.of(Kind::Server).all(|m| m.health != Health::Starting)
            })
            .await
        {
            Wake::Done
                if self
                    .roster
                    .of(Kind::Server)
                    .all(|m| m.health == Health::Running) => {}
            Wake::Signal(why) => {
                self.stop(why).await;
                return Ok(());
            }
            _ => {
                let failed: Vec<String> = self
                    .roster
                    .of(Kind::Server)
                    .filter(|m| m.health != Health::Running)
                    .map(|m| match &m.health {
                        Health::Crashed(how) => format!("{} ({how})", m.name),
                        _ => format!("{} (not ready within {STARTUP_BOUND:?})", m.name),
                    })
                    .collect();
                self.stop("a server did not start").await;
                let hint = if backend::SERVES_METRICS {
                    format!(
                        "; the fleet serves /metrics on ports {}..={}: if one is taken, pick another base with --metrics-port",
                        self.cfg.metrics_port,
                        self.cfg.child_metrics_port(self.cfg.servers + self.cfg.agents - 1)
                    )
                } else {
                    String::new()
                };
                return Err(format!(
                    "servers did not start: {} (see their messages above){hint}",
                    failed.join(", ")
                )
                .into());
            }
        }
        for i in 0..self.cfg.agents {
            self.launch(Kind::Agent, i)?;
        }
        if let Wake::Signal(why) = self
            .pump_until(Some(Instant::now() + STARTUP_BOUND), |r| {
                r.of(Kind::Agent).all(|m| m.health != Health::Starting)
            })
            .await
        {
            self.stop(why).await;
            return Ok(());
        }
        self.announce_processes();
        let deadline = self.cfg.duration.map(|d| self.started + d);
        let why = match self
            .pump_until(deadline, |r| {
                !r.any_alive(Kind::Server) && !r.any_alive(Kind::Agent)
            })
            .await
        {
            Wake::Done => "every process exited",
            Wake::Signal(why) => why,
            Wake::Deadline => "--duration elapsed",
        };
        self.stop(why).await;
        Ok(())
    }

    /// Agents first (no new rollouts, in-flight ones finish), then servers.
    async fn stop(&mut self, why: &str) {
        let sim = &self.cfg.simulation;
        let bound = sim.drain + sim.linger + STOP_SLACK;
        self.view.message(&format!(
            "stopping ({why}): agents finish their rollouts in flight (at most {:?}), then servers stop; Ctrl-C again kills everything",
            sim.drain
        ));
        for kind in [Kind::Agent, Kind::Server] {
            self.roster.of_mut(kind).for_each(Member::ask_to_stop);
            let wake = self
                .pump_until(Some(Instant::now() + bound), move |r| !r.any_alive(kind))
                .await;
            match wake {
                Wake::Done => {}
                Wake::Deadline => {
                    self.view.message(&format!(
                        "some {} did not stop within {bound:?}: killing them",
                        kind.label()
                    ));
                    self.kill_kind(kind);
                }
                Wake::Signal(_) => {
                    self.view
                        .message("interrupted again: killing every process");
                    self.forced = true;
                    self.kill_all();
                }
            }
        }
        // Collect the exits of anything killed above.
        let _ = self
            .pump_until(Some(Instant::now() + STOP_SLACK), |r| {
                !r.any_alive(Kind::Server) && !r.any_alive(Kind::Agent)
            })
            .await;
        self.draw();
        self.view.keep();
    }

    /// Keeps the orchestrator's own `/metrics` up a little, so a scraper reads
    /// the final fleet size of 0.
    async fn linger(&mut self) {
        let linger = self.cfg.simulation.linger;
        if !linger.is_zero() {
            let _ = self
                .pump_until(Some(Instant::now() + linger), |_| false)
                .await;
        }
    }

    fn launch(&mut self, kind: Kind, index: usize) -> Result<(), Box<dyn Error>> {
        let position = self.roster.members.len();
        let name = format!("{}-{index}", kind.label());
        let metrics_port = if backend::SERVES_METRICS {
            self.cfg.child_metrics_port(position)
        } else {
            0
        };
        let mut args = vec![
            match kind {
                Kind::Server => "server".to_string(),
                Kind::Agent => "agent".to_string(),
            },
            "--name".into(),
            name.clone(),
            "--index".into(),
            index.to_string(),
            "--metrics-port".into(),
            metrics_port.to_string(),
        ];
        if kind == Kind::Agent {
            let targets: Vec<String> = self
                .roster
                .of(Kind::Server)
                .filter_map(|m| m.verify_addr)
                .map(|a| a.to_string())
                .collect();
            args.extend(["--targets".into(), targets.join(",")]);
            if !self.cfg.gym_targets.is_empty() {
                let gym: Vec<String> = self.cfg.gym_targets.iter().map(|a| a.to_string()).collect();
                args.extend(["--gym-targets".into(), gym.join(",")]);
            }
        }
        args.extend(self.cfg.simulation.to_args());
        let env = backend::child_env(self.cfg.web_config.as_deref());
        let launched = launch(position, &args, &env, self.tx.clone())
            .map_err(|e| format!("could not launch {name}: {e}"))?;
        let mut member = Member::new(name, kind, launched.pid);
        member.stdin = launched.stdin;
        member.kill = Some(launched.kill);
        self.roster.members.push(member);
        // The list changes only here (an exited member stays, as in Gym);
        // sampled only with Gym's memory profiling on.
        if let Some(fleet) = self.fleet_size {
            fleet.publish_processes(&self.roster.processes());
        }
        Ok(())
    }

    /// Prints every scrape URL and writes the Prometheus configuration if asked.
    fn announce_scrape_targets(
        &mut self,
        own: Option<std::net::SocketAddr>,
    ) -> Result<(), Box<dyn Error>> {
        if !backend::SERVES_METRICS {
            self.view.message(match backend::NAME {
                "otel" => "every process pushes OTLP where the standard OTEL_EXPORTER_OTLP_* variables say (default http://localhost:4318)",
                _ => "this build records nothing (noop backend): the fleet runs the same, the view reads each process's own tally",
            });
            let asked = [
                ("--prometheus-config", &self.cfg.prometheus_config),
                ("--file-sd", &self.cfg.file_sd),
            ];
            if let Some((flag, Some(path))) = asked.into_iter().find(|(_, p)| p.is_some()) {
                return Err(format!(
                    "{flag} {}: this gym-fleet is built with the {} backend, which serves no /metrics (build with the default `prom` feature)",
                    path.display(),
                    backend::NAME
                )
                .into());
            }
            return Ok(());
        }
        let mut targets: Vec<String> = own.iter().map(|a| a.to_string()).collect();
        targets.extend(
            (0..self.cfg.servers + self.cfg.agents)
                .map(|p| loopback(self.cfg.child_metrics_port(p)).to_string()),
        );
        let scheme = backend::scheme(self.cfg.web_config.as_deref());
        let urls: Vec<String> = targets
            .iter()
            .map(|t| format!("  {scheme}://{t}/metrics"))
            .collect();
        self.view
            .message(&format!("scrape targets:\n{}", urls.join("\n")));
        let sd_url = own
            .map(|a| format!("{scheme}://{a}/sd"))
            .unwrap_or_default();
        self.view.message(&format!(
            "service discovery (http_sd_configs): {sd_url} lists every live process, labelled nemo_run_id=\"{}\"",
            self.discovery.run_id()
        ));
        if let Some(path) = &self.cfg.file_sd {
            self.view.message(&format!(
                "file_sd_configs: {} is kept listing the same targets",
                path.display()
            ));
        }
        if let Some(path) = &self.cfg.prometheus_config {
            let security = match &self.cfg.web_config {
                Some(web) => backend::scrape_security(
                    web,
                    self.cfg.scrape_ca_file.as_deref(),
                    self.cfg.scrape_password_file.as_deref(),
                )?,
                None => scrape_config::ScrapeSecurity::default(),
            };
            scrape_config::write(path, &sd_url, &security)
                .map_err(|e| format!("could not write {}: {e}", path.display()))?;
            self.view.message(&format!(
                "wrote a Prometheus scrape configuration: prometheus --config.file={}",
                path.display()
            ));
        }
        Ok(())
    }

    fn announce_processes(&mut self) {
        // Whoever reads this table may ask `GET /sd` next: no change waits
        // for its publish slot once every process is announced.
        self.publish_targets();
        let mut text = String::from("processes:\n");
        text.push_str(&format!(
            "  {:<14} pid {:<8}{}\n",
            "orchestrator",
            std::process::id(),
            metrics_url(backend::SERVES_METRICS.then(|| loopback(self.cfg.metrics_port))),
        ));
        for m in &self.roster.members {
            let verify = m
                .verify_addr
                .map(|a| format!("  verify http://{a}/verify"))
                .unwrap_or_default();
            text.push_str(&format!(
                "  {:<14} pid {:<8}{}{verify}\n",
                m.name,
                m.pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
                metrics_url(m.metrics_addr),
            ));
        }
        self.view.message(text.trim_end());
    }

    /// Handles messages, redraws once a second, until `done` holds, a signal
    /// arrives or `deadline` passes.
    async fn pump_until(
        &mut self,
        deadline: Option<Instant>,
        done: impl Fn(&Roster) -> bool,
    ) -> Wake {
        loop {
            if done(&self.roster) {
                return Wake::Done;
            }
            let deadline_passed = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            };
            let targets_due = self.discovery.due();
            let publish_due = async {
                match targets_due {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                Some(message) = self.rx.recv() => self.handle(message),
                _ = self.tick.tick() => self.draw(),
                () = publish_due => self.publish_targets(),
                Some(()) = self.sigint.recv() => return Wake::Signal("Ctrl-C"),
                Some(()) = self.sigterm.recv() => return Wake::Signal("SIGTERM"),
                () = deadline_passed => return Wake::Deadline,
            }
        }
    }

    fn handle(&mut self, message: Message) {
        let now = Instant::now();
        // Only a process becoming ready or ending changes the fleet size or
        // the scrape targets. Status reports (one per process per second)
        // must not rebuild the target list: that made the orchestrator's
        // work grow with the square of the fleet.
        let membership = matches!(
            message,
            Message::Event(_, Event::Ready { .. }) | Message::Exited(..)
        );
        match message {
            Message::Event(i, event) => {
                let Some(m) = self.roster.members.get_mut(i) else {
                    return;
                };
                match event {
                    Event::Ready {
                        verify_addr,
                        metrics_addr,
                    } => {
                        m.verify_addr = verify_addr;
                        m.metrics_addr = metrics_addr;
                        if m.health == Health::Starting {
                            m.health = Health::Running;
                        }
                    }
                    Event::Status(tally) => m.observe(tally, now),
                    Event::Final(tally) => {
                        m.observe(tally, now);
                        m.reported_final = true;
                    }
                }
            }
            Message::Log(i, line) => {
                let name = self
                    .roster
                    .members
                    .get(i)
                    .map(|m| m.name.as_str())
                    .unwrap_or("?");
                let text = if line.starts_with(name) {
                    line
                } else {
                    format!("{name}: {line}")
                };
                self.view.message(&text);
            }
            Message::Exited(i, status) => {
                let Some(m) = self.roster.members.get_mut(i) else {
                    return;
                };
                let how = describe(&status);
                let report = if m.health == Health::Stopping {
                    m.health = Health::Exited(if status.as_ref().is_ok_and(ExitStatus::success) {
                        "stopped".into()
                    } else {
                        format!("stopped: {how}")
                    });
                    None
                } else {
                    m.health = Health::Crashed(how.clone());
                    Some(format!(
                        "{} (pid {}) died unexpectedly: {how}",
                        m.name,
                        m.pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into())
                    ))
                };
                m.stdin = None;
                m.kill = None;
                if let Some(report) = report {
                    self.view.message(&report);
                }
            }
        }
        if membership {
            self.publish_size(self.roster.live_servers());
            if let Some(warning) = self.discovery.changed(&self.roster) {
                self.view.warn(&warning);
            }
        }
    }

    /// Publishes the scrape targets (`GET /sd`, `--file-sd`) when they changed.
    fn publish_targets(&mut self) {
        if let Some(warning) = self.discovery.update(&self.roster) {
            self.view.warn(&warning);
        }
    }

    /// Sets `gym.servers.active` when it changed.
    fn publish_size(&mut self, size: u64) {
        if self.published_size != Some(size) {
            if let Some(fleet) = self.fleet_size {
                fleet.set(size);
            }
            self.published_size = Some(size);
        }
    }

    fn draw(&mut self) {
        let size = self.published_size.unwrap_or(0);
        self.view.draw(
            &self.roster,
            size,
            self.started.elapsed(),
            self.cfg.duration,
        );
    }

    fn kill_kind(&mut self, kind: Kind) {
        self.roster.of_mut(kind).for_each(Member::kill);
    }

    fn kill_all(&mut self) {
        self.roster.members.iter_mut().for_each(|m| {
            m.ask_to_stop();
            m.kill();
        });
    }
}

/// `1 agent`, `3 servers`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn metrics_url(addr: Option<std::net::SocketAddr>) -> String {
    addr.map(|a| format!("metrics http://{a}/metrics"))
        .unwrap_or_default()
}

fn describe(status: &Result<ExitStatus, String>) -> String {
    match status {
        Err(e) => format!("could not be waited for: {e}"),
        Ok(s) => match (s.code(), s.signal()) {
            (Some(0), _) => "exit code 0".into(),
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(9)) => "killed by SIGKILL".into(),
            (None, Some(15)) => "killed by SIGTERM".into(),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            (None, None) => format!("{s}"),
        },
    }
}

/// A run id for a fleet started without `--run-id`: the launch time and the
/// orchestrator's pid, unique on one host and readable in a query.
fn fresh_run_id() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!("run-{secs}-{}", std::process::id())
}
