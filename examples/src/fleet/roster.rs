//! The orchestrator's table of the processes it launched.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use gym_metrics_api::Role;
use tokio::process::ChildStdin;
use tokio::sync::oneshot;

use super::protocol::Tally;

/// How far back the live view's rates look.
const RATE_WINDOW: Duration = Duration::from_secs(5);

/// What a launched process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A resources server (`/verify`).
    Server,
    /// An agent (rollouts).
    Agent,
}

impl Kind {
    /// The server type it declares, shown in the view.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Server => "resources",
            Kind::Agent => "agent",
        }
    }

    /// The server type it declares (`nemo.gym.server.type`): NeMo Gym's own
    /// names for a resources server and an agent, so one dashboard filters a
    /// fleet that mixes Gym's Python servers and ours.
    pub fn server_type(self) -> &'static str {
        match self {
            Kind::Server => "resources_servers",
            Kind::Agent => "responses_api_agents",
        }
    }
}

/// Where a process is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// Launched, not ready yet.
    Starting,
    /// Ready and working.
    Running,
    /// Asked to stop, finishing its work.
    Stopping,
    /// Exited when asked to (or the reason it failed then).
    Exited(String),
    /// Died without being asked to: how.
    Crashed(String),
}

/// One launched process.
#[derive(Debug)]
pub struct Member {
    /// Unique name, e.g. `resources-0`.
    pub name: String,
    /// Server or agent.
    pub kind: Kind,
    /// OS process id.
    pub pid: Option<u32>,
    /// Where it serves `/metrics` (prom), once ready.
    pub metrics_addr: Option<SocketAddr>,
    /// A server's `/verify` address, once ready.
    pub verify_addr: Option<SocketAddr>,
    /// Where it is in its life.
    pub health: Health,
    /// The latest numbers it reported (its final ones once it stopped).
    pub tally: Tally,
    /// True once its final numbers arrived.
    pub reported_final: bool,
    /// Closing it asks the process to stop.
    pub stdin: Option<ChildStdin>,
    /// Sending on it kills the process.
    pub kill: Option<oneshot::Sender<()>>,
    history: VecDeque<(Instant, u64)>,
}

impl Member {
    /// A process just launched.
    pub fn new(name: String, kind: Kind, pid: Option<u32>) -> Self {
        Self {
            name,
            kind,
            pid,
            metrics_addr: None,
            verify_addr: None,
            health: Health::Starting,
            tally: Tally::default(),
            reported_final: false,
            stdin: None,
            kill: None,
            history: VecDeque::new(),
        }
    }

    /// Takes in a status (or final) report.
    pub fn observe(&mut self, tally: Tally, now: Instant) {
        self.history.push_back((now, tally.completed));
        while self
            .history
            .front()
            .is_some_and(|(at, _)| now.duration_since(*at) > RATE_WINDOW)
        {
            self.history.pop_front();
        }
        self.tally = tally;
    }

    /// Completions per second over the last few seconds.
    pub fn rate(&self) -> Option<f64> {
        let (first, last) = (self.history.front()?, self.history.back()?);
        let secs = last.0.duration_since(first.0).as_secs_f64();
        (secs > 0.5).then(|| last.1.saturating_sub(first.1) as f64 / secs)
    }

    /// Not exited nor crashed.
    pub fn is_alive(&self) -> bool {
        !matches!(self.health, Health::Exited(_) | Health::Crashed(_))
    }

    /// Asks the process to stop by closing its standard input.
    pub fn ask_to_stop(&mut self) {
        if self.is_alive() {
            self.health = Health::Stopping;
        }
        self.stdin = None;
    }

    /// Kills the process (SIGKILL).
    pub fn kill(&mut self) {
        if let Some(kill) = self.kill.take() {
            let _ = kill.send(());
        }
    }
}

/// Every launched process, servers first.
#[derive(Debug, Default)]
pub struct Roster {
    /// The processes, in launch order.
    pub members: Vec<Member>,
}

impl Roster {
    /// Servers that are ready and have not exited: the fleet size.
    pub fn live_servers(&self) -> u64 {
        self.of(Kind::Server)
            .filter(|m| matches!(m.health, Health::Running | Health::Stopping))
            .count() as u64
    }

    /// Every member launched, as Gym's memory profiling samples it: its
    /// role and the pid it was launched with. An exited one stays, as in
    /// Gym: it reads zero, its sampled peak kept.
    pub fn processes(&self) -> Vec<(Role, u32)> {
        (self.members.iter())
            .filter_map(|m| Some((Role::server(&m.name, m.kind.server_type()), m.pid?)))
            .collect()
    }

    /// The members of one kind.
    pub fn of(&self, kind: Kind) -> impl Iterator<Item = &Member> {
        self.members.iter().filter(move |m| m.kind == kind)
    }

    /// The members of one kind, mutably.
    pub fn of_mut(&mut self, kind: Kind) -> impl Iterator<Item = &mut Member> {
        self.members.iter_mut().filter(move |m| m.kind == kind)
    }

    /// True while some member of `kind` is alive.
    pub fn any_alive(&self, kind: Kind) -> bool {
        self.of(kind).any(Member::is_alive)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(kind: Kind, health: Health) -> Member {
        let mut m = Member::new("m".into(), kind, None);
        m.health = health;
        m
    }

    #[test]
    fn fleet_size_counts_live_servers_only() {
        let roster = Roster {
            members: vec![
                member(Kind::Server, Health::Starting),
                member(Kind::Server, Health::Running),
                member(Kind::Server, Health::Stopping),
                member(Kind::Server, Health::Crashed("killed by SIGKILL".into())),
                member(Kind::Server, Health::Exited("stopped".into())),
                member(Kind::Agent, Health::Running),
            ],
        };
        assert_eq!(roster.live_servers(), 2);
        assert!(roster.any_alive(Kind::Agent));
    }

    #[test]
    fn rate_spans_the_recent_window() {
        let mut m = member(Kind::Agent, Health::Running);
        let t0 = Instant::now();
        let tally = |completed| Tally {
            completed,
            ..Tally::default()
        };
        m.observe(tally(0), t0);
        assert_eq!(m.rate(), None);
        m.observe(tally(10), t0 + Duration::from_secs(2));
        assert_eq!(m.rate(), Some(5.0));
        // Older than the window: forgotten.
        m.observe(tally(40), t0 + Duration::from_secs(8));
        m.observe(tally(46), t0 + Duration::from_secs(10));
        assert_eq!(m.rate(), Some(3.0));
    }

    #[test]
    fn asking_to_stop_closes_stdin_and_keeps_the_dead_dead() {
        let mut crashed = member(Kind::Server, Health::Crashed("exit code 1".into()));
        crashed.ask_to_stop();
        assert!(matches!(crashed.health, Health::Crashed(_)));
        let mut running = member(Kind::Server, Health::Running);
        running.ask_to_stop();
        assert_eq!(running.health, Health::Stopping);
    }
}
