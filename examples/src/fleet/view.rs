//! The live view: one row per process, a total row per kind, and a progress
//! bar; redrawn in place on a terminal, plain lines otherwise. Also the final
//! summary.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use crossterm::terminal::{self, ClearType};
use crossterm::{cursor, QueueableCommand};

use super::histogram::Buckets;
use super::protocol::{Source, Tally};
use super::roster::{Health, Kind, Member, Roster};

/// The narrowest terminal the full table fits in; below it the view drops
/// the role, pid and p95 columns.
const FULL_WIDTH: usize = 100;

/// Draws the fleet on standard output.
///
/// On a terminal every line is fitted to its width (read at each draw, so a
/// resize is honoured): nothing wraps, so moving the cursor up by the lines
/// drawn lands on the table's first line, and the redraw leaves nothing
/// behind. A table taller than the terminal is cut, with a line saying how
/// much. Elsewhere (a pipe, a file) each frame is plain lines.
pub struct View {
    terminal: bool,
    /// Lines of the table on screen (each one terminal row), to erase.
    drawn_lines: u16,
    /// The terminal's width when they were drawn.
    drawn_width: u16,
    header: String,
}

impl View {
    /// A view that redraws in place when standard output is a terminal.
    pub fn new(header: String) -> Self {
        Self {
            terminal: std::io::stdout().is_terminal(),
            drawn_lines: 0,
            drawn_width: 0,
            header,
        }
    }

    /// Prints a message above the table (which is redrawn at the next tick).
    pub fn message(&mut self, text: &str) {
        let mut out = std::io::stdout().lock();
        self.erase(&mut out);
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }

    /// Logs a warning (to standard error, as every warning of the demo) with
    /// the table out of its way (it is redrawn at the next tick).
    pub fn warn(&mut self, text: &str) {
        let mut out = std::io::stdout().lock();
        self.erase(&mut out);
        let _ = out.flush();
        log::warn!("{text}");
    }

    /// Prints the run's header as a message where no table line repeats it:
    /// a terminal shows it as the table's first line instead.
    pub fn announce(&mut self) {
        if !self.terminal {
            let header = self.header.clone();
            self.message(&header);
        }
    }

    /// Draws the table for `roster`, `elapsed` into the run.
    pub fn draw(
        &mut self,
        roster: &Roster,
        fleet_size: u64,
        elapsed: Duration,
        duration: Option<Duration>,
    ) {
        let size = self.size();
        let compact = size.is_some_and(|(width, _)| usize::from(width) < FULL_WIDTH);
        // The progress first: a narrow terminal cuts the header's tail.
        let mut lines = vec![format!(
            "{}  {}",
            progress(elapsed, duration, self.terminal),
            self.header
        )];
        lines.push(columns(
            compact,
            [
                "process", "role", "pid", "rate", "success", "p50 ms", "p95 ms", "total", "state",
            ]
            .map(String::from),
        ));
        lines.push(columns(
            compact,
            [
                "orchestrator".into(),
                "orchestr.".into(),
                std::process::id().to_string(),
                format!("{fleet_size} servers live"),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ],
        ));
        for m in &roster.members {
            lines.push(member_row(m, compact));
        }
        for kind in [Kind::Agent, Kind::Server] {
            if roster.of(kind).next().is_some() {
                lines.push(total_row(roster, kind, compact));
            }
        }
        let note = source_note(roster);
        let mut out = std::io::stdout().lock();
        self.erase(&mut out);
        let Some((width, height)) = size else {
            let _ = writeln!(out);
            for line in lines.iter().map(String::as_str).chain([note]) {
                let _ = writeln!(out, "{line}");
            }
            let _ = out.flush();
            return;
        };
        // One column spare: a line that fills the last column leaves some
        // terminals' cursor pending a wrap.
        let usable = usize::from(width).saturating_sub(1).max(1);
        let mut lines: Vec<String> = lines.iter().map(|l| fit(l, usable)).collect();
        lines.extend(wrap(note, usable));
        // Keep the table on the screen: a cursor cannot move above its top row.
        let room = usize::from(height).saturating_sub(1).max(1);
        if lines.len() > room {
            let cut = lines.len() - room + 1;
            lines.truncate(room - 1);
            lines.push(fit(
                &format!("... {cut} more lines (a taller terminal shows them)"),
                usable,
            ));
        }
        for line in &lines {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
        self.drawn_lines = u16::try_from(lines.len()).unwrap_or(u16::MAX);
        self.drawn_width = width;
    }

    /// Leaves the table drawn last on the screen: what follows goes below it.
    pub fn keep(&mut self) {
        self.drawn_lines = 0;
    }

    /// The terminal's (columns, rows), or `None` when standard output is not one.
    fn size(&self) -> Option<(u16, u16)> {
        if !self.terminal {
            return None;
        }
        Some(terminal::size().unwrap_or((80, 24)))
    }

    fn erase(&mut self, out: &mut impl Write) {
        if self.drawn_lines == 0 {
            return;
        }
        let resized = self
            .size()
            .is_some_and(|(width, _)| width != self.drawn_width);
        if resized {
            // The terminal may have reflowed the old frame's lines: start afresh.
            let _ = out.queue(terminal::Clear(ClearType::All));
            let _ = out.queue(cursor::MoveTo(0, 0));
        } else {
            // Up to the table's first line, then clear to the end of the screen.
            let _ = out.queue(cursor::MoveToPreviousLine(self.drawn_lines));
            let _ = out.queue(terminal::Clear(ClearType::FromCursorDown));
        }
        self.drawn_lines = 0;
    }
}

/// `line` cut to `width` characters, the last one `…` where it was cut.
fn fit(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `text` broken at spaces into lines of at most `width` characters (a word
/// longer than that is cut).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let last = lines.last_mut().map_or(0, |l| l.chars().count());
        if last > 0 && last + 1 + word.chars().count() > width {
            lines.push(String::new());
        }
        if let Some(line) = lines.last_mut() {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines.into_iter().map(|l| fit(&l, width)).collect()
}

/// One table row from its nine cells (process, role, pid, rate, success,
/// p50, p95, total, state); `compact` leaves out role, pid and p95.
fn columns(
    compact: bool,
    [name, role, pid, rate, success, p50, p95, total, state]: [String; 9],
) -> String {
    let row = if compact {
        format!("{name:<14} {rate:>16} {success:>8} {p50:>7} {total:>8}  {state}")
    } else {
        format!(
            "{name:<14} {role:<10} {pid:>7} {rate:>16} {success:>8} {p50:>9} {p95:>9} {total:>8}  {state}"
        )
    };
    row.trim_end().to_string()
}

/// Where the table's figures come from, said once under it.
fn source_note(roster: &Roster) -> &'static str {
    let any = |source| roster.members.iter().any(|m| m.tally.source == source);
    if any(Source::Off) {
        "recording is compiled off (noop build): no metrics are recorded, so none are shown"
    } else if !any(Source::Metrics) && !any(Source::Local) {
        "waiting for the first reports"
    } else if any(Source::Local) {
        "figures from each process's own tally (local): this backend pushes its metrics and keeps nothing to read back"
    } else {
        "rate, total, success and p50/p95 read back from each process's own /metrics; \
         an agent's success (*) is its own tally: no gym instrument carries it"
    }
}

fn unit(kind: Kind) -> &'static str {
    match kind {
        Kind::Agent => "rollouts/s",
        Kind::Server => "verif/s",
    }
}

fn member_row(m: &Member, compact: bool) -> String {
    let state = match &m.health {
        Health::Starting => "starting".to_string(),
        Health::Running => "running".to_string(),
        Health::Stopping => "stopping".to_string(),
        Health::Exited(how) => how.clone(),
        Health::Crashed(how) => format!("CRASHED: {how}"),
    };
    let rate = if m.is_alive() { m.rate() } else { None };
    row(
        compact,
        &m.name,
        m.kind.label(),
        m.pid.map(|p| p.to_string()).unwrap_or_default(),
        rate,
        m.kind,
        &m.tally,
        &state,
    )
}

fn total_row(roster: &Roster, kind: Kind, compact: bool) -> String {
    let mut total = Tally::default();
    let mut rate = 0.0;
    for m in roster.of(kind) {
        total.completed += m.tally.completed;
        total.succeeded += m.tally.succeeded;
        total.durations.merge(&m.tally.durations);
        total.source = m.tally.source;
        if m.is_alive() {
            rate += m.rate().unwrap_or(0.0);
        }
    }
    let name = match kind {
        Kind::Agent => "agents",
        Kind::Server => "servers",
    };
    row(
        compact,
        name,
        "total",
        String::new(),
        Some(rate),
        kind,
        &total,
        "",
    )
}

#[allow(clippy::too_many_arguments)]
fn row(
    compact: bool,
    name: &str,
    role: &str,
    pid: String,
    rate: Option<f64>,
    kind: Kind,
    t: &Tally,
    state: &str,
) -> String {
    let (name, role, state) = (name.to_string(), role.to_string(), state.to_string());
    if t.source == Source::Off {
        let off = "recording compiled off".to_string();
        let blank = String::new;
        return columns(
            compact,
            [
                name,
                role,
                pid,
                off,
                blank(),
                blank(),
                blank(),
                blank(),
                state,
            ],
        );
    }
    let rate = rate
        .map(|r| format!("{r:.1} {}", unit(kind)))
        .unwrap_or_else(|| "-".into());
    let mut success = percent(t.succeeded, t.completed);
    if t.source == Source::Metrics && kind == Kind::Agent {
        success.push('*');
    }
    columns(
        compact,
        [
            name,
            role,
            pid,
            rate,
            success,
            quantile(&t.durations, 0.5),
            quantile(&t.durations, 0.95),
            t.completed.to_string(),
            state,
        ],
    )
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}%", 100.0 * part as f64 / whole as f64)
}

fn quantile(b: &Buckets, q: f64) -> String {
    b.quantile(q)
        .map(|v| format!("{v:.0}"))
        .unwrap_or_else(|| "-".into())
}

fn progress(elapsed: Duration, duration: Option<Duration>, terminal: bool) -> String {
    let secs = elapsed.as_secs();
    let Some(duration) = duration else {
        return format!("{secs} s (Ctrl-C stops)");
    };
    let done = (elapsed.as_secs_f64() / duration.as_secs_f64().max(1e-9)).clamp(0.0, 1.0);
    let width = 24;
    let filled = (done * width as f64).round() as usize;
    let (full, empty) = if terminal { ('█', '░') } else { ('#', '.') };
    format!(
        "[{}{}] {secs} s / {} s",
        full.to_string().repeat(filled),
        empty.to_string().repeat(width - filled),
        duration.as_secs_f64().ceil() as u64,
    )
}

/// The final summary: totals per process and for the fleet, with a last
/// `fleet:` line of `key=value` pairs for scripts.
pub fn summary(roster: &Roster, pass_ratio: f64) -> String {
    let mut out = String::from("\nsummary\n");
    if roster
        .members
        .iter()
        .any(|m| matches!(m.tally.source, Source::Local | Source::Off))
    {
        out.push_str("(counts from each process's own tally: this build has no metrics to read them back from)\n");
    }
    out.push_str(&format!(
        "{:<14} {:<10} {:>9} {:>9} {:>8} {:>12} {:>12}  {}\n",
        "process", "role", "completed", "succeeded", "success", "verify calls", "unanswered", "end"
    ));
    for m in &roster.members {
        let end = match &m.health {
            Health::Crashed(how) => format!("CRASHED: {how}"),
            Health::Exited(how) => how.clone(),
            other => format!("{other:?}"),
        };
        let calls = |v: u64| {
            if m.kind == Kind::Agent {
                v.to_string()
            } else {
                "-".into()
            }
        };
        out.push_str(&format!(
            "{:<14} {:<10} {:>9} {:>9} {:>8} {:>12} {:>12}  {end}{}\n",
            m.name,
            m.kind.label(),
            m.tally.completed,
            m.tally.succeeded,
            percent(m.tally.succeeded, m.tally.completed),
            calls(m.tally.verify_calls),
            calls(m.tally.verify_errors),
            if m.reported_final {
                ""
            } else {
                " (no final report)"
            },
        ));
    }
    let sum = |kind, f: fn(&Tally) -> u64| roster.of(kind).map(|m| f(&m.tally)).sum::<u64>();
    let verifications = sum(Kind::Server, |t| t.completed);
    let verified_ok = sum(Kind::Server, |t| t.succeeded);
    let success = if verifications == 0 {
        "-".to_string()
    } else {
        format!("{:.3}", verified_ok as f64 / verifications as f64)
    };
    out.push_str(&format!(
        "fleet: rollouts={} rollouts_ok={} verify_calls={} verify_unanswered={} verifications={} verified_ok={} success_rate={success} pass_ratio={pass_ratio} crashed={}\n",
        sum(Kind::Agent, |t| t.completed),
        sum(Kind::Agent, |t| t.succeeded),
        sum(Kind::Agent, |t| t.verify_calls),
        sum(Kind::Agent, |t| t.verify_errors),
        verifications,
        verified_ok,
        roster
            .members
            .iter()
            .filter(|m| matches!(m.health, Health::Crashed(_)))
            .count(),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_bar_fills_with_time() {
        let d = Some(Duration::from_secs(10));
        assert_eq!(
            progress(Duration::from_secs(5), d, false),
            format!("[{}{}] 5 s / 10 s", "#".repeat(12), ".".repeat(12))
        );
        assert!(progress(Duration::from_secs(3), None, false).contains("Ctrl-C"));
    }

    #[test]
    fn lines_fit_the_width_and_words_wrap() {
        assert_eq!(fit("abcdef", 6), "abcdef");
        assert_eq!(fit("abcdefg", 6), "abcde…");
        assert_eq!(fit("██████", 3), "██…");
        let wrapped = wrap("rate, total and success read back from /metrics", 16);
        assert_eq!(
            wrapped,
            ["rate, total and", "success read", "back from", "/metrics"]
        );
        assert!(wrap(&"x".repeat(40), 10)
            .iter()
            .all(|l| l.chars().count() <= 10));
    }

    #[test]
    fn the_compact_table_keeps_rate_success_p50_total_and_state() {
        let cells = [
            "agent-0", "agent", "42", "1.0 r/s", "99%", "120", "300", "7", "running",
        ]
        .map(String::from);
        assert_eq!(
            columns(true, cells.clone()),
            "agent-0                 1.0 r/s      99%     120        7  running"
        );
        assert!(columns(false, cells).contains(" 42 "));
    }

    #[test]
    fn summary_ends_with_a_fleet_line() {
        let mut roster = Roster::default();
        let mut agent = Member::new("agent-0".into(), Kind::Agent, Some(1));
        agent.tally.completed = 4;
        agent.tally.verify_calls = 4;
        roster.members.push(agent);
        let text = summary(&roster, 0.7);
        let last = text.lines().last().unwrap();
        assert!(last.starts_with("fleet: rollouts=4 "), "{last}");
        assert!(last.contains("verify_calls=4"), "{last}");
    }
}
