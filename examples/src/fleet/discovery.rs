//! What the orchestrator tells scrapers about its fleet: every live process
//! that serves `/metrics`, itself included, published through the
//! orchestrator-only [`FleetSize`] capability (served at `GET /sd`) and, if
//! asked, kept in a `file_sd_configs` file.
//!
//! The orchestrator lists itself so that a scraper configured with the SD
//! alone finds the fleet-size series too, and so that sharding (vmagent
//! cluster members, Prometheus `hashmod`) splits one list: a static job for
//! it beside the SD would be scraped by every shard.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gym_metrics_api::{FleetSize, FleetTarget, Role};

use super::roster::{Health, Roster};

/// The shortest time between two publishes: changes in between wait for
/// the next slot, so a launch or a mass exit of N processes costs a few
/// renders of the list, not N (which made launching grow with N²).
pub const MIN_PUBLISH_GAP: Duration = Duration::from_millis(200);

/// Publishes the fleet's target list when it changes.
pub struct Discovery {
    fleet: Option<FleetSize>,
    own: Option<SocketAddr>,
    run_id: String,
    file_sd: Option<PathBuf>,
    published: Option<Vec<FleetTarget>>,
    /// What the file holds, once written.
    written: Option<Vec<FleetTarget>>,
    /// The last write failure shown, so a lasting one is shown once.
    last_warning: Option<String>,
    /// When the list was last published.
    last_publish: Option<Instant>,
    /// A change waiting for its slot: publish then.
    due: Option<Instant>,
}

impl Discovery {
    /// Publishes through `fleet` (none: a build that records nothing), with
    /// the orchestrator's own `/metrics` at `own`, every target labelled
    /// with `run_id`, mirrored to `file_sd` if given.
    pub fn new(
        fleet: Option<FleetSize>,
        own: Option<SocketAddr>,
        run_id: String,
        file_sd: Option<PathBuf>,
    ) -> Self {
        Self {
            fleet,
            own,
            run_id,
            file_sd,
            published: None,
            written: None,
            last_warning: None,
            last_publish: None,
            due: None,
        }
    }

    /// The roster changed: publishes now if the last publish is at least
    /// [`MIN_PUBLISH_GAP`] old, else at [`Discovery::due`] (the caller calls
    /// [`Discovery::update`] then). Returns what `update` returns.
    pub fn changed(&mut self, roster: &Roster) -> Option<String> {
        match self.last_publish {
            Some(at) if at.elapsed() < MIN_PUBLISH_GAP => {
                self.due = Some(at + MIN_PUBLISH_GAP);
                None
            }
            _ => self.update(roster),
        }
    }

    /// When a change waiting for its slot is to be published.
    pub fn due(&self) -> Option<Instant> {
        self.due
    }

    /// The run id the targets carry.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Publishes the targets of `roster` if they changed since the last
    /// call. A file that cannot be written is the returned warning, once per
    /// distinct failure (the fleet runs on; the next call tries again).
    pub fn update(&mut self, roster: &Roster) -> Option<String> {
        self.due = None;
        self.last_publish = Some(Instant::now());
        let fleet = self.fleet?;
        let targets = targets(self.own, roster, &self.run_id);
        if self.published.as_ref() != Some(&targets) {
            fleet.publish_targets(&targets);
            self.published = Some(targets.clone());
        }
        let path = self.file_sd.as_ref()?;
        if self.written.as_ref() == Some(&targets) {
            return None;
        }
        match fleet.write_file_sd(&targets, path) {
            Ok(()) => {
                self.written = Some(targets);
                self.last_warning = None;
                None
            }
            Err(e) => {
                let warning = e.to_string();
                (self.last_warning.as_ref() != Some(&warning)).then(|| {
                    self.last_warning = Some(warning.clone());
                    warning
                })
            }
        }
    }
}

/// The orchestrator (at `own`) and every member that is ready to be scraped
/// and has not exited: it reported its `/metrics` address and is running or
/// stopping (a stopping process still serves its last values).
pub fn targets(own: Option<SocketAddr>, roster: &Roster, run_id: &str) -> Vec<FleetTarget> {
    let orchestrator = own.map(|addr| (addr, Role::orchestrator()));
    let members = roster
        .members
        .iter()
        .filter(|m| matches!(m.health, Health::Running | Health::Stopping))
        .filter_map(|m| Some((m.metrics_addr?, Role::server(&m.name, m.kind.server_type()))));
    orchestrator
        .into_iter()
        .chain(members)
        .filter_map(|(addr, role)| {
            // A SocketAddr always renders as a valid host:port.
            FleetTarget::of_process(addr.to_string(), &role, Some(run_id)).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::roster::{Kind, Member};

    fn member(name: &str, kind: Kind, port: Option<u16>, health: Health) -> Member {
        let mut m = Member::new(name.into(), kind, None);
        m.metrics_addr = port.map(|p| SocketAddr::from(([127, 0, 0, 1], p)));
        m.health = health;
        m
    }

    #[test]
    fn changes_closer_than_the_gap_wait_for_one_publish() {
        let mut d = Discovery::new(None, None, "r".into(), None);
        let roster = Roster::default();
        assert!(d.changed(&roster).is_none());
        assert_eq!(d.due(), None, "the first change publishes at once");
        let first = d.last_publish.expect("published");
        for _ in 0..100 {
            d.changed(&roster);
        }
        assert_eq!(d.due(), Some(first + MIN_PUBLISH_GAP), "one slot for all");
        d.update(&roster);
        assert_eq!(d.due(), None);
    }

    #[test]
    fn lists_the_orchestrator_and_every_scrapable_live_process() {
        let roster = Roster {
            members: vec![
                member("resources-0", Kind::Server, Some(2), Health::Running),
                member("resources-1", Kind::Server, None, Health::Starting),
                member("resources-2", Kind::Server, Some(4), Health::Stopping),
                member(
                    "resources-3",
                    Kind::Server,
                    Some(5),
                    Health::Crashed("SIGKILL".into()),
                ),
                member("agent-0", Kind::Agent, Some(6), Health::Running),
                member(
                    "agent-1",
                    Kind::Agent,
                    Some(7),
                    Health::Exited("stopped".into()),
                ),
            ],
        };
        let own = Some(SocketAddr::from(([127, 0, 0, 1], 1)));
        let listed: Vec<(String, String, String)> = targets(own, &roster, "run-1")
            .iter()
            .map(|t| {
                assert_eq!(t.labels()["nemo_run_id"], "run-1");
                (
                    t.address().to_string(),
                    t.labels()["nemo_gym_server_name"].clone(),
                    t.labels()["nemo_gym_server_type"].clone(),
                )
            })
            .collect();
        let expected = [
            ("127.0.0.1:1", "orchestrator", "orchestrator"),
            ("127.0.0.1:2", "resources-0", "resources_servers"),
            ("127.0.0.1:4", "resources-2", "resources_servers"),
            ("127.0.0.1:6", "agent-0", "responses_api_agents"),
        ]
        .map(|(a, n, t)| (a.to_string(), n.to_string(), t.to_string()));
        assert_eq!(listed, expected);
        assert!(targets(None, &Roster::default(), "r").is_empty());
    }
}
