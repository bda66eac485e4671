//! What a report must name besides its figures: the machine, the toolchain
//! and the exact versions of every library measured.

use std::path::Path;
use std::process::Command;

/// The crates whose versions the report names, as in `Cargo.lock`.
pub const MEASURED_CRATES: [&str; 8] = [
    "gym-metrics-prom",
    "gym-metrics-otel",
    "prometheus",
    "prometheus-client",
    "opentelemetry_sdk",
    "metrics",
    "metrics-exporter-prometheus",
    "hyper",
];

/// The CPU as `/proc/cpuinfo` names it (its first processor): enough to
/// tell two machines of one "kind" apart, and the clock an implied
/// instructions-per-cycle figure is computed with.
#[derive(Debug, Clone, PartialEq)]
pub struct Cpu {
    /// `model name`, e.g. `AMD EPYC 7B13`.
    pub model_name: String,
    /// `cpu family` (25 for Zen 3).
    pub family: Option<u32>,
    /// `model`.
    pub model: Option<u32>,
    /// `cpu MHz` when read (at the end of the run): the current clock, which
    /// under a hypervisor is often the nominal one.
    pub mhz: Option<f64>,
    /// The clock measured by a chain of dependent adds ([`super::clock`]),
    /// at the end of the run.
    pub measured_mhz: Option<f64>,
}

impl Cpu {
    /// This machine's CPU (`unknown CPU` without `/proc/cpuinfo`), its clock
    /// measured too.
    pub fn read() -> Self {
        Self {
            measured_mhz: super::clock::measure_mhz(),
            ..Self::parse(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default())
        }
    }

    /// The clock implied instructions per cycle are computed at: the
    /// measured one, else what `/proc/cpuinfo` says.
    pub fn clock_mhz(&self) -> Option<f64> {
        self.measured_mhz.or(self.mhz)
    }

    /// The first processor's entry of a `/proc/cpuinfo` text.
    pub fn parse(cpuinfo: &str) -> Self {
        let first = cpuinfo.split("\n\n").next().unwrap_or_default();
        let field = |key: &str| {
            first.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        Self {
            model_name: field("model name").unwrap_or_else(|| "unknown CPU".into()),
            family: field("cpu family").and_then(|v| v.parse().ok()),
            model: field("model").and_then(|v| v.parse().ok()),
            mhz: field("cpu MHz").and_then(|v| v.parse().ok()),
            measured_mhz: None,
        }
    }

    /// `model name (family f, model m, c MHz)`, what the report names, with
    /// the measured clock when there is one.
    pub fn describe(&self) -> String {
        let or_unknown = |v: Option<u32>| v.map_or_else(|| "unknown".into(), |v| v.to_string());
        let reported = self
            .mhz
            .map_or_else(|| "unknown".into(), |m| format!("{m:.0}"));
        let clock = match self.measured_mhz {
            Some(m) => format!("{reported} MHz reported, {m:.0} MHz measured"),
            None => format!("{reported} MHz"),
        };
        format!(
            "{} (family {}, model {}, {clock})",
            self.model_name,
            or_unknown(self.family),
            or_unknown(self.model),
        )
    }
}

/// The machine, one line per fact.
pub fn describe(cpu: &Cpu) -> Vec<String> {
    let cpu = cpu.describe();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<f64>().ok())
        })
        .map_or_else(
            || "unknown".into(),
            |kib| format!("{:.1} GiB", kib / 1024.0 / 1024.0),
        );
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    vec![
        format!("CPU: {cpu}, {cores} logical cores available, {memory} RAM"),
        format!("kernel: {}", output_of("uname", &["-sr"])),
        format!("toolchain: {}", output_of("rustc", &["-V"])),
        format!("load average when the run ended (1, 5, 15 min): {load} (a shared machine: other builds ran meanwhile)"),
    ]
}

fn output_of(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| format!("({program} unavailable)"))
}

/// `(name, version)` of [`MEASURED_CRATES`] as locked in `lock_file`.
pub fn versions(lock_file: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(lock_file).unwrap_or_default();
    let mut found = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            if MEASURED_CRATES.contains(&n.as_str()) {
                found.push((n, v.trim_matches('"').to_string()));
            }
        }
    }
    found.sort_by_key(|(n, _)| MEASURED_CRATES.iter().position(|m| *m == n));
    found
}

#[cfg(test)]
mod tests {
    use super::Cpu;

    #[test]
    fn the_first_processor_is_named_with_family_model_and_clock() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n\
                    model name\t: AMD EPYC 7B13\ncpu MHz\t\t: 2449.998\n\n\
                    processor\t: 1\nmodel name\t: other\ncpu MHz\t\t: 1.0\n";
        let cpu = Cpu::parse(text);
        assert_eq!(cpu.model_name, "AMD EPYC 7B13");
        assert_eq!((cpu.family, cpu.model), (Some(25), Some(1)));
        assert_eq!(cpu.mhz, Some(2449.998));
        assert_eq!(
            cpu.describe(),
            "AMD EPYC 7B13 (family 25, model 1, 2450 MHz)"
        );
        let none = Cpu::parse("");
        assert_eq!(
            none.describe(),
            "unknown CPU (family unknown, model unknown, unknown MHz)"
        );
    }
}
