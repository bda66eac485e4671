//! Command-line flags of `gym-fleet`, shared by the orchestrator and the
//! processes it launches (it re-executes itself with a subcommand).
//!
//! A small hand-written parser: every flag is `--name VALUE` (or
//! `--name=VALUE`), except `--help`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use super::client::{Protocol, Target};
use super::scrape_config;
use crate::backend;

/// What this process is asked to be.
#[derive(Debug, Clone)]
pub enum Command {
    /// Launch and supervise a fleet (no subcommand).
    Orchestrate(FleetConfig),
    /// `server`: one resources server.
    Server(ServerConfig),
    /// `agent`: one agent collecting rollouts.
    Agent(AgentConfig),
    /// `--help`.
    Help,
}

/// An inclusive range of milliseconds, written `MIN..MAX` or `MS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsRange {
    /// Shortest delay.
    pub min: u64,
    /// Longest delay.
    pub max: u64,
}

/// The longest simulated delay a range may name: 10 minutes, far beyond any
/// verification an agent waits for, and small enough that no sum overflows.
pub const MAX_DELAY_MS: u64 = 600_000;

/// The most processes one fleet launches (`--servers` plus `--agents`): each
/// is a process with its own runtime and ports, all on this host.
pub const MAX_CHILDREN: usize = 256;

/// The most rollouts one agent runs at once (`--concurrency`).
pub const MAX_CONCURRENCY: usize = 1024;

/// The lowest `--metrics-port` of a fleet: its children serve on the ports
/// after it, and ports below 1024 need privileges.
pub const MIN_METRICS_PORT: u16 = 1024;

/// The longest `--duration`: a year.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// The longest `--drain` and `--linger`: an hour.
pub const MAX_WAIT: Duration = Duration::from_secs(3600);

impl FromStr for MsRange {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let parse = |v: &str| {
            let ms = v
                .trim()
                .parse::<u64>()
                .map_err(|_| format!("{v:?} is not a whole number of milliseconds"))?;
            if ms > MAX_DELAY_MS {
                return Err(format!(
                    "{ms} ms is longer than the longest simulated delay, {MAX_DELAY_MS} ms"
                ));
            }
            Ok(ms)
        };
        let (min, max) = match s.split_once("..") {
            Some((a, b)) => (parse(a)?, parse(b)?),
            None => (parse(s)?, parse(s)?),
        };
        if min > max {
            return Err(format!("range {s:?} runs backwards: write MIN..MAX"));
        }
        Ok(Self { min, max })
    }
}

impl std::fmt::Display for MsRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}", self.min, self.max)
    }
}

/// The simulation knobs every process shares.
#[derive(Debug, Clone)]
pub struct Simulation {
    /// Seed of every random draw in the fleet (each process derives its own stream).
    pub seed: u64,
    /// Fraction of verifications that pass.
    pub pass_ratio: f64,
    /// Fraction of verifications whose handler fails (counted as failed verifications).
    pub error_ratio: f64,
    /// Simulated generation time of one rollout, before its `/verify` call.
    pub generate_ms: MsRange,
    /// Simulated verification work inside `/verify`.
    pub verify_ms: MsRange,
    /// Rollouts each agent runs at once.
    pub concurrency: usize,
    /// How long in-flight work may take to finish once a stop is asked.
    pub drain: Duration,
    /// How long a process keeps serving `/metrics` after its work stopped, so a
    /// scraper reads the final values.
    pub linger: Duration,
}

/// The orchestrator's configuration.
#[derive(Debug, Clone)]
pub struct FleetConfig {
    /// Resources servers to launch.
    pub servers: usize,
    /// Agents to launch.
    pub agents: usize,
    /// Stop after this long; `None` runs until Ctrl-C.
    pub duration: Option<Duration>,
    /// The orchestrator's `/metrics` port; children use the next ports.
    pub metrics_port: u16,
    /// Where to write a Prometheus scrape configuration.
    pub prometheus_config: Option<PathBuf>,
    /// Where to keep a `file_sd_configs` file of the fleet's targets.
    pub file_sd: Option<PathBuf>,
    /// The run id every discovered target is labelled with (`nemo_run_id`);
    /// `None`: a fresh one per run.
    pub run_id: Option<String>,
    /// The web configuration file (TLS, basic auth) every process's
    /// `/metrics` serves by: the orchestrator's own, and every child's
    /// through `GYM_METRICS_WEB_CONFIG_FILE`.
    pub web_config: Option<PathBuf>,
    /// For the written scrape configuration: the CA that signed the web
    /// configuration's certificate (default: that certificate, as for a
    /// self-signed one).
    pub scrape_ca_file: Option<PathBuf>,
    /// For the written scrape configuration: the file holding the password
    /// of the web configuration's (first) basic-auth user.
    pub scrape_password_file: Option<PathBuf>,
    /// NeMo Gym resources servers outside the fleet that its agents call
    /// too, in Gym's `/verify` dialect.
    pub gym_targets: Vec<SocketAddr>,
    /// Shared knobs, forwarded to every child.
    pub simulation: Simulation,
}

/// A resources server's configuration.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Unique name in the fleet, e.g. `resources-0`.
    pub name: String,
    /// Position in the fleet, to derive a random stream.
    pub index: u64,
    /// Port of this process's `/metrics` (0: any free port).
    pub metrics_port: u16,
    /// Shared knobs.
    pub simulation: Simulation,
}

/// An agent's configuration.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// Unique name in the fleet, e.g. `agent-0`.
    pub name: String,
    /// Position in the fleet, to derive a random stream.
    pub index: u64,
    /// Port of this process's `/metrics` (0: any free port).
    pub metrics_port: u16,
    /// The resources servers it calls: the fleet's (`--targets`), then
    /// NeMo Gym's (`--gym-targets`).
    pub targets: Vec<Target>,
    /// Shared knobs.
    pub simulation: Simulation,
}

/// Usage text for `--help` and errors.
pub const USAGE: &str = "\
gym-fleet: a real multi-process gym fleet on loopback that records every gym metric

usage: gym-fleet [OPTIONS]              run a fleet (until Ctrl-C, or --duration)
       gym-fleet server|agent [OPTIONS]  (launched by the fleet itself)

options:
  --servers N              resources-server processes            [default: 3]
  --agents M               agent processes                        [default: 1]
  --duration SECS          stop after SECS seconds                [default: run until Ctrl-C]
  --seed S                 seed of every random draw              [default: from the clock]
  --pass-ratio R           fraction of verifications that pass    [default: 0.7]
  --error-ratio E          fraction whose handler errors (fails)  [default: 0.05]
  --generate-ms MIN..MAX   simulated generation per rollout       [default: 200..2500]
  --verify-ms MIN..MAX     simulated verification work            [default: 50..600]
                           (one past 20 s is answered 503: a failed verification)
  --concurrency K          rollouts in flight per agent           [default: 8]
  --drain SECS             bound on finishing in-flight work      [default: 5]
  --linger SECS            on prom, keep /metrics up after stopping until one more scrape
                           has read the last increments, at most SECS (ends as soon as it
                           has)         [default: 2 on prom (two 1 s scrape intervals), else 0]
  --metrics-port P         orchestrator /metrics port (prom, 1024 or above); children use
                           P+1..        [default: 9464]
  --prometheus-config FILE write a Prometheus scrape configuration for the fleet: it discovers
                           every process from the orchestrator's GET /sd (http_sd_configs)
  --file-sd FILE           keep FILE (JSON, replaced atomically) listing the fleet's live
                           targets, for file_sd_configs
  --run-id ID              the run id the discovered targets carry (label nemo_run_id)
                                        [default: run-<launch time>-<orchestrator pid>]
  --web-config FILE        serve every /metrics by this exporter-toolkit web configuration
                           (TLS, basic auth; prom): passed to every process it launches
  --scrape-ca-file FILE    the written scrape configuration trusts this CA
                           [default: the web configuration's cert_file, as if self-signed]
  --scrape-password-file FILE
                           the written scrape configuration's basic_auth password_file
                           (needed when the web configuration has basic_auth_users)
  --gym-resources-servers ADDRS
                           NeMo Gym resources servers (host:port,...) the agents call too,
                           in Gym's /verify body; a reward of 1 or more passes
  -h, --help               this text";

/// Parses the arguments after the program name.
///
/// # Errors
/// An unknown flag or subcommand, a missing or malformed value, or values that
/// do not fit together (e.g. pass + error ratio above 1).
pub fn parse(args: &[String]) -> Result<Command, String> {
    let (sub, rest) = match args.first().map(String::as_str) {
        Some("server") => ("server", &args[1..]),
        Some("agent") => ("agent", &args[1..]),
        _ => ("", args),
    };
    let Some(mut flags) = Flags::collect(rest)? else {
        return Ok(Command::Help);
    };
    let simulation = Simulation::take(&mut flags)?;
    let command = match sub {
        "server" => Command::Server(ServerConfig {
            name: flags.required("name")?,
            index: flags.take("index")?.unwrap_or(0),
            metrics_port: flags.take("metrics-port")?.unwrap_or(0),
            simulation,
        }),
        "agent" => Command::Agent(AgentConfig {
            name: flags.required("name")?,
            index: flags.take("index")?.unwrap_or(0),
            metrics_port: flags.take("metrics-port")?.unwrap_or(0),
            targets: {
                let fleet = parse_targets("targets", &flags.required::<String>("targets")?)?;
                let gym = flags.take::<String>("gym-targets")?;
                let gym = parse_targets("gym-targets", gym.as_deref().unwrap_or(""))?;
                let target = |protocol| move |addr| Target { addr, protocol };
                (fleet.into_iter().map(target(Protocol::Fleet)))
                    .chain(gym.into_iter().map(target(Protocol::Gym)))
                    .collect()
            },
            simulation,
        }),
        _ => Command::Orchestrate(FleetConfig::take(&mut flags, simulation)?),
    };
    flags.finish()?;
    Ok(command)
}

impl FleetConfig {
    fn take(flags: &mut Flags, simulation: Simulation) -> Result<Self, String> {
        let servers: usize = flags.take("servers")?.unwrap_or(3);
        let agents: usize = flags.take("agents")?.unwrap_or(1);
        if servers == 0 && agents > 0 {
            return Err("agents need at least one server: --servers must be 1 or more".into());
        }
        let children = servers
            .checked_add(agents)
            .filter(|&n| n <= MAX_CHILDREN)
            .ok_or_else(|| {
                format!(
                    "--servers {servers} plus --agents {agents} is more than the {MAX_CHILDREN} processes one fleet launches on a host"
                )
            })?;
        let duration = flags
            .take::<f64>("duration")?
            .map(|secs| seconds("duration", secs, MAX_DURATION))
            .transpose()?;
        let metrics_port: u16 = flags.take("metrics-port")?.unwrap_or(9464);
        if metrics_port < MIN_METRICS_PORT {
            return Err(format!(
                "--metrics-port {metrics_port}: the children serve on the ports after it, so it must be a fixed port of {MIN_METRICS_PORT} or above"
            ));
        }
        let last_port = usize::from(metrics_port) + children;
        if last_port > usize::from(u16::MAX) {
            return Err(format!(
                "--metrics-port {metrics_port} leaves no room for {children} more ports after it"
            ));
        }
        // Absolute: the children read it wherever they run.
        let web_config = flags
            .take::<PathBuf>("web-config")?
            .map(|p| {
                std::path::absolute(&p).map_err(|e| format!("--web-config {}: {e}", p.display()))
            })
            .transpose()?;
        let scrape_ca_file: Option<PathBuf> = flags.take("scrape-ca-file")?;
        let scrape_password_file: Option<PathBuf> = flags.take("scrape-password-file")?;
        if web_config.is_none() && (scrape_ca_file.is_some() || scrape_password_file.is_some()) {
            return Err("--scrape-ca-file and --scrape-password-file describe how to scrape a fleet served by --web-config: give --web-config too".into());
        }
        Ok(Self {
            servers,
            agents,
            duration,
            metrics_port,
            gym_targets: parse_targets(
                "gym-resources-servers",
                &flags
                    .take::<String>("gym-resources-servers")?
                    .unwrap_or_default(),
            )?,
            prometheus_config: flags.take("prometheus-config")?,
            file_sd: flags.take("file-sd")?,
            run_id: flags
                .take::<String>("run-id")?
                .map(|id| {
                    if id.is_empty() {
                        Err(
                            "--run-id is empty: give the run's id, or leave it out for a fresh one"
                                .to_string(),
                        )
                    } else if id.chars().any(char::is_control) {
                        // It is printed and becomes a label: no terminal escapes.
                        Err(format!(
                            "--run-id {id:?} holds control characters: give printable text"
                        ))
                    } else {
                        Ok(id)
                    }
                })
                .transpose()?,
            web_config,
            scrape_ca_file,
            scrape_password_file,
            simulation,
        })
    }

    /// The `/metrics` port of the `position`-th child (servers first, then
    /// agents); 0 (any free port) if it would pass `u16::MAX`, which parsing
    /// rules out for every child of the fleet.
    pub fn child_metrics_port(&self, position: usize) -> u16 {
        position
            .checked_add(1)
            .and_then(|offset| u16::try_from(offset).ok())
            .and_then(|offset| self.metrics_port.checked_add(offset))
            .unwrap_or(0)
    }
}

impl Simulation {
    fn take(flags: &mut Flags) -> Result<Self, String> {
        let seed = match flags.take::<u64>("seed")? {
            Some(seed) => seed,
            None => clock_seed(),
        };
        let pass_ratio: f64 = flags.take("pass-ratio")?.unwrap_or(0.7);
        let error_ratio: f64 = flags.take("error-ratio")?.unwrap_or(0.05);
        for (name, r) in [("pass-ratio", pass_ratio), ("error-ratio", error_ratio)] {
            if !(0.0..=1.0).contains(&r) {
                return Err(format!("--{name} {r} is not within 0..=1"));
            }
        }
        if pass_ratio + error_ratio > 1.0 + 1e-9 {
            return Err(format!(
                "--pass-ratio {pass_ratio} plus --error-ratio {error_ratio} exceed 1: an errored verification is a failed one"
            ));
        }
        let concurrency: usize = flags.take("concurrency")?.unwrap_or(8);
        if !(1..=MAX_CONCURRENCY).contains(&concurrency) {
            return Err(format!(
                "--concurrency {concurrency} is not within 1..={MAX_CONCURRENCY} rollouts in flight per agent"
            ));
        }
        Ok(Self {
            seed,
            pass_ratio,
            error_ratio,
            generate_ms: flags.take("generate-ms")?.unwrap_or(MsRange {
                min: 200,
                max: 2500,
            }),
            verify_ms: flags
                .take("verify-ms")?
                .unwrap_or(MsRange { min: 50, max: 600 }),
            concurrency,
            drain: seconds("drain", flags.take("drain")?.unwrap_or(5.0), MAX_WAIT)?,
            linger: match flags.take::<f64>("linger")? {
                Some(secs) => seconds("linger", secs, MAX_WAIT)?,
                None => default_linger(),
            },
        })
    }

    /// The flags that hand these knobs to a child process.
    pub fn to_args(&self) -> Vec<String> {
        [
            ("--seed", self.seed.to_string()),
            ("--pass-ratio", self.pass_ratio.to_string()),
            ("--error-ratio", self.error_ratio.to_string()),
            ("--generate-ms", self.generate_ms.to_string()),
            ("--verify-ms", self.verify_ms.to_string()),
            ("--concurrency", self.concurrency.to_string()),
            ("--drain", self.drain.as_secs_f64().to_string()),
            ("--linger", self.linger.as_secs_f64().to_string()),
        ]
        .into_iter()
        .flat_map(|(k, v)| [k.to_string(), v])
        .collect()
    }
}

/// `--linger` unless given: on a scraped backend two scrape intervals of the
/// configuration `--prometheus-config` writes, so a scrape lands after the
/// last increment; nothing to wait for on the others (they flush at shutdown).
pub fn default_linger() -> Duration {
    if backend::SERVES_METRICS {
        2 * scrape_config::SCRAPE_INTERVAL
    } else {
        Duration::ZERO
    }
}

fn seconds(name: &str, secs: f64, max: Duration) -> Result<Duration, String> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|duration| *duration <= max)
        .ok_or_else(|| {
            format!(
                "--{name} {secs} is not a number of seconds within 0..={}",
                max.as_secs()
            )
        })
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
        % 1_000_000
}

fn parse_targets(flag: &str, list: &str) -> Result<Vec<SocketAddr>, String> {
    list.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse()
                .map_err(|_| format!("--{flag}: {s:?} is not an address like 127.0.0.1:8080"))
        })
        .collect()
}

/// `--name VALUE` pairs, consumed by name; leftovers are errors.
struct Flags(BTreeMap<String, String>);

impl Flags {
    /// `None` when `--help` was asked.
    fn collect(args: &[String]) -> Result<Option<Self>, String> {
        let mut map = BTreeMap::new();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            if arg == "-h" || arg == "--help" {
                return Ok(None);
            }
            let Some(flag) = arg.strip_prefix("--") else {
                return Err(format!("unexpected argument {arg:?}\n\n{USAGE}"));
            };
            let (name, value) = match flag.split_once('=') {
                Some((n, v)) => (n.to_string(), v.to_string()),
                None => {
                    let value = it
                        .next()
                        .ok_or_else(|| format!("--{flag} needs a value\n\n{USAGE}"))?;
                    (flag.to_string(), value.clone())
                }
            };
            if map.insert(name.clone(), value).is_some() {
                return Err(format!("--{name} is given twice"));
            }
        }
        Ok(Some(Self(map)))
    }

    fn take<T: FromStr>(&mut self, name: &str) -> Result<Option<T>, String>
    where
        T::Err: std::fmt::Display,
    {
        self.0
            .remove(name)
            .map(|v| v.parse::<T>().map_err(|e| format!("--{name} {v:?}: {e}")))
            .transpose()
    }

    fn required<T: FromStr>(&mut self, name: &str) -> Result<T, String>
    where
        T::Err: std::fmt::Display,
    {
        self.take(name)?
            .ok_or_else(|| format!("--{name} is required"))
    }

    fn finish(self) -> Result<(), String> {
        match self.0.keys().next() {
            None => Ok(()),
            Some(name) => Err(format!("unknown option --{name}\n\n{USAGE}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn defaults_and_overrides() {
        let Command::Orchestrate(c) = parse(&args("--servers 2 --seed 9 --duration 1.5")).unwrap()
        else {
            panic!("not an orchestrator");
        };
        assert_eq!((c.servers, c.agents, c.metrics_port), (2, 1, 9464));
        assert_eq!(c.duration, Some(Duration::from_millis(1500)));
        assert_eq!(c.simulation.seed, 9);
        assert_eq!(c.child_metrics_port(1), 9466);
    }

    #[test]
    fn the_help_names_each_flag_once_and_a_run_id_is_printable() {
        for flag in USAGE.split_whitespace().filter(|w| w.starts_with("--")) {
            let lines = USAGE.lines().filter(|l| l.trim_start().starts_with(flag));
            assert!(lines.count() <= 1, "{flag} is listed twice");
        }
        let e = parse(&["--run-id".into(), "r\x1b[2J".into()]).unwrap_err();
        assert!(e.to_string().contains("control characters"), "{e}");
    }

    #[test]
    fn gym_resources_servers_reach_the_agents_as_gym_targets() {
        let Command::Orchestrate(c) =
            parse(&args("--gym-resources-servers 127.0.0.1:7,127.0.0.1:8")).unwrap()
        else {
            panic!("not an orchestrator");
        };
        assert_eq!(c.gym_targets.len(), 2);
        assert!(parse(&args("--gym-resources-servers gym:8000")).is_err());
        let child = args("agent --name a --targets 127.0.0.1:1 --gym-targets 127.0.0.1:7");
        let Command::Agent(a) = parse(&child).unwrap() else {
            panic!("not an agent");
        };
        let protocols: Vec<Protocol> = a.targets.iter().map(|t| t.protocol).collect();
        assert_eq!(protocols, [Protocol::Fleet, Protocol::Gym]);
        assert_eq!(a.targets[1].addr.port(), 7);
    }

    #[test]
    fn child_args_round_trip() {
        let Command::Orchestrate(c) = parse(&args("--seed 3 --verify-ms 5..9 --linger 2")).unwrap()
        else {
            panic!("not an orchestrator");
        };
        let mut child = args("agent --name agent-0 --targets 127.0.0.1:1,127.0.0.1:2");
        child.extend(c.simulation.to_args());
        let Command::Agent(a) = parse(&child).unwrap() else {
            panic!("not an agent");
        };
        assert_eq!(a.targets.len(), 2);
        assert_eq!(a.simulation.verify_ms, MsRange { min: 5, max: 9 });
        assert_eq!(a.simulation.linger, Duration::from_secs(2));
        assert_eq!(a.simulation.seed, 3);
    }

    #[test]
    fn rejects_bad_input_with_a_reason() {
        for (bad, why) in [
            ("--servers x", "--servers"),
            ("--bogus 1", "unknown option --bogus"),
            ("--pass-ratio 0.9 --error-ratio 0.2", "exceed 1"),
            ("--verify-ms 9..5", "backwards"),
            ("--servers", "needs a value"),
            ("--servers 0", "at least one server"),
            ("--metrics-port 65534", "no room"),
        ] {
            let e = parse(&args(bad)).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(matches!(parse(&args("--help")), Ok(Command::Help)));
    }

    /// Inputs that overflowed (a panic in a debug build, a truncated count in
    /// a release one) or asked for absurd sizes: each an error saying why.
    #[test]
    fn huge_counts_ranges_and_durations_are_errors_not_panics() {
        let max = u64::MAX;
        for (bad, why) in [
            (format!("--verify-ms 0..{max}"), "longest simulated delay"),
            (format!("--generate-ms {max}"), "longest simulated delay"),
            ("--verify-ms 0..600001".to_string(), "600000 ms"),
            (
                format!("--servers {max} --agents 1"),
                "processes one fleet launches",
            ),
            (
                format!("--servers 1 --agents {max}"),
                "processes one fleet launches",
            ),
            ("--servers 200 --agents 57".to_string(), "more than the 256"),
            ("--concurrency 1025".to_string(), "1..=1024"),
            ("--concurrency 0".to_string(), "1..=1024"),
            ("--duration 1e19".to_string(), "within 0..=31536000"),
            ("--duration inf".to_string(), "within 0..=31536000"),
            ("--drain 1e300".to_string(), "within 0..=3600"),
            ("--linger 3601".to_string(), "within 0..=3600"),
            ("--drain -1".to_string(), "within 0..=3600"),
            ("--linger NaN".to_string(), "within 0..=3600"),
            ("--metrics-port 0".to_string(), "1024 or above"),
            ("--metrics-port 65400 --servers 200".to_string(), "no room"),
        ] {
            let e = parse(&args(&bad)).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn the_largest_fleet_that_fits_is_accepted() {
        let fleet = "--servers 200 --agents 56 --metrics-port 65279 --verify-ms 0..600000";
        let Command::Orchestrate(c) = parse(&args(fleet)).unwrap() else {
            panic!("not an orchestrator");
        };
        assert_eq!(c.child_metrics_port(255), u16::MAX);
        assert_eq!(c.simulation.verify_ms.max, MAX_DELAY_MS);
        // A child asks for any free port.
        let Command::Server(s) = parse(&args("server --name s --metrics-port 0")).unwrap() else {
            panic!("not a server");
        };
        assert_eq!(s.metrics_port, 0);
    }

    #[test]
    fn the_usage_states_the_verification_timeout() {
        let secs = crate::fleet::server::VERIFY_TIMEOUT.as_secs();
        assert!(
            USAGE.contains(&format!("one past {secs} s is answered 503")),
            "{USAGE}"
        );
    }

    #[test]
    fn web_config_is_made_absolute_and_the_scrape_flags_need_it() {
        let Command::Orchestrate(c) = parse(&args(
            "--web-config web.yml --scrape-ca-file ca.crt --scrape-password-file pw",
        ))
        .unwrap() else {
            panic!("not an orchestrator")
        };
        let web = c.web_config.unwrap();
        assert!(
            web.is_absolute() && web.ends_with("web.yml"),
            "{}",
            web.display()
        );
        assert_eq!(
            c.scrape_ca_file.as_deref(),
            Some(std::path::Path::new("ca.crt"))
        );
        assert_eq!(
            c.scrape_password_file.as_deref(),
            Some(std::path::Path::new("pw"))
        );
        for lone in ["--scrape-ca-file ca.crt", "--scrape-password-file pw"] {
            let e = parse(&args(lone)).unwrap_err();
            assert!(e.contains("--web-config"), "{e}");
        }
    }

    #[test]
    fn linger_defaults_to_two_scrape_intervals_when_scraped() {
        let Command::Orchestrate(c) = parse(&args("")).unwrap() else {
            panic!("not an orchestrator");
        };
        let expected = if backend::SERVES_METRICS {
            Duration::from_secs(2)
        } else {
            Duration::ZERO
        };
        assert_eq!(c.simulation.linger, expected);
        assert_eq!(default_linger(), expected);
        assert!(USAGE.contains("[default: 2 on prom (two 1 s scrape intervals), else 0]"));
        assert_eq!(scrape_config::SCRAPE_INTERVAL, Duration::from_secs(1));
    }
}
