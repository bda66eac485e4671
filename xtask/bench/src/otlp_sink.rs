//! A loopback OTLP/HTTP receiver that answers every request `200 OK` and
//! counts requests and body bytes: what an export costs on the wire.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Requests and body bytes received so far.
#[derive(Debug, Default)]
pub struct SinkCounts {
    /// Requests answered.
    pub requests: AtomicU64,
    /// Request body bytes received.
    pub body_bytes: AtomicU64,
    /// Notified after every request, for [`OtlpSink::wait_beyond`].
    arrived: (Mutex<()>, Condvar),
}

/// A running sink; it serves until the process ends.
#[derive(Debug)]
pub struct OtlpSink {
    addr: SocketAddr,
    counts: Arc<SinkCounts>,
}

impl OtlpSink {
    /// Binds `127.0.0.1:0` and serves from a thread per connection.
    ///
    /// # Errors
    /// The socket could not be bound.
    pub fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let counts = Arc::new(SinkCounts::default());
        let c = Arc::clone(&counts);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let c = Arc::clone(&c);
                std::thread::spawn(move || {
                    // A closed or broken connection simply ends this thread.
                    let _ = serve(stream, &c);
                });
            }
        });
        Ok(Self { addr, counts })
    }

    /// The OTLP/HTTP metrics URL.
    pub fn url(&self) -> String {
        format!("http://{}/v1/metrics", self.addr)
    }

    /// Blocks (without polling, so the wait costs no CPU time of its own)
    /// until more than `seen` requests have arrived; their number.
    pub fn wait_beyond(&self, seen: u64) -> u64 {
        let (lock, arrived) = &self.counts.arrived;
        let mut guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = self.counts.requests.load(Ordering::Acquire);
            if now > seen {
                return now;
            }
            guard = arrived.wait(guard).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// `(requests, body bytes)` so far.
    pub fn snapshot(&self) -> (u64, u64) {
        (
            self.counts.requests.load(Ordering::Acquire),
            self.counts.body_bytes.load(Ordering::Acquire),
        )
    }
}

fn serve(stream: TcpStream, counts: &SinkCounts) -> std::io::Result<()> {
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    loop {
        let mut content_length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            if let Some((name, value)) = trimmed.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    content_length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; content_length];
        reader.read_exact(&mut body)?;
        counts
            .body_bytes
            .fetch_add(content_length as u64, Ordering::AcqRel);
        counts.requests.fetch_add(1, Ordering::AcqRel);
        {
            // Taking the lock orders this notification after a waiter's
            // check of the count, so no wake-up is lost.
            let _guard = counts.arrived.0.lock().unwrap_or_else(|p| p.into_inner());
            counts.arrived.1.notify_all();
        }
        writer.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n",
        )?;
    }
}
