//! A loopback OTLP/HTTP receiver that answers every request `200 OK` and
//! counts requests and body bytes: what an export costs on the wire.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Requests and body bytes received so far.
#[derive(Debug, Default)]
pub struct SinkCounts {
    /// Requests answered.
    pub requests: AtomicU64,
    /// Request body bytes received.
    pub body_bytes: AtomicU64,
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
        writer.write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n",
        )?;
    }
}
