//! A process's resident memory and CPU time, read from `/proc` (Linux).

use std::process::Command;

/// `VmRSS` of `pid`, KiB; `None` when it has exited.
pub fn rss_kib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// User plus system CPU time of `pid`, in clock ticks; `None` when it has exited.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_cpu_ticks(&stat)
}

/// Fields 14 and 15 (`utime`, `stime`) of a `/proc/PID/stat` line; the
/// command name (field 2) may hold spaces and parentheses, so counting
/// starts after its last `)`.
fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// Clock ticks per second (`getconf CLK_TCK`; 100, Linux's, if that fails).
pub fn ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utime_and_stime_after_a_name_with_spaces_and_parentheses() {
        let stat = "42 (a b) c)) S 1 42 42 0 -1 4194560 100 0 0 0 7 5 0 0 20 0 1 0 99 1000 10";
        assert_eq!(parse_cpu_ticks(stat), Some(12));
        assert_eq!(parse_cpu_ticks("garbage"), None);
    }

    #[test]
    fn this_process_has_memory_and_cpu() {
        let me = std::process::id();
        assert!(rss_kib(me).is_some_and(|kib| kib > 0.0));
        assert!(cpu_ticks(me).is_some());
    }
}
