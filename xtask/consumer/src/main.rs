//! Records one rollout through the facade and reads it back the way the
//! backend's users do: a scrape of its own `/metrics` (prom), the OTLP/JSON
//! the console exporter prints at shutdown (otel), nothing at all (noop).
//! `cargo xtask package` checks what it prints.

use std::time::Duration;

use gym_metrics_api::{record_rollout_duration, Role};

fn role() -> Role {
    Role::server("consumer-0", "resources_servers")
}

#[cfg(feature = "prom")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    use std::io::{Read, Write};

    let guard = gym_metrics_prom::PrometheusBuilder::from_env()?
        .role(role())
        .install()?;
    record_rollout_duration(Duration::from_millis(1500));
    let mut stream = std::net::TcpStream::connect(guard.local_addr())?;
    stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: consumer\r\nConnection: close\r\n\r\n")?;
    let mut scrape = String::new();
    stream.read_to_string(&mut scrape)?;
    guard.shutdown()?;
    let count = scrape
        .lines()
        .find(|l| l.starts_with("gym_rollout_duration_ms_milliseconds_count"))
        .ok_or("the scrape has no gym_rollout_duration_ms_milliseconds_count")?;
    println!("{count}");
    Ok(())
}

#[cfg(feature = "otel")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let guard = gym_metrics_otel::OtelBuilder::from_env()?
        .role(role())
        .install()?;
    record_rollout_duration(Duration::from_millis(1500));
    // The console exporter prints the final values to stdout at shutdown.
    guard.shutdown()?;
    println!("consumer: otel: shut down");
    Ok(())
}

#[cfg(feature = "noop")]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let guard = gym_metrics_noop::NoopBuilder::new().role(role()).install()?;
    record_rollout_duration(Duration::from_millis(1500));
    println!("consumer: noop: recorded nothing, as compiled");
    guard.shutdown()?;
    Ok(())
}

#[cfg(not(any(feature = "prom", feature = "otel", feature = "noop")))]
compile_error!("pick a backend: --features prom, otel or noop");
