//! A hyper 1 server on 127.0.0.1 behind the API's tower layer (through
//! `TowerToHyperService`, as a fleet server runs it) with a handler of the
//! test's own, and a keep-alive raw client that can send any bytes.

use std::convert::Infallible;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::Bytes;
use gym_metrics_api::{HttpServerMetricsLayer, RouteTable};
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tower::{service_fn, Layer};

/// The handler: the status to answer a request with (it runs inside the
/// layer, in the caller's trace context when that is valid).
pub type Answer = fn(&http::Request<hyper::body::Incoming>) -> u16;

/// Serves `answer` behind the layer for the life of the process.
pub fn serve(routes: RouteTable, answer: Answer) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let layer = HttpServerMetricsLayer::new(routes);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    std::thread::spawn(move || {
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let handler = service_fn(move |req: http::Request<_>| async move {
                    let status = http::StatusCode::from_u16(answer(&req)).unwrap_or_default();
                    let mut response = http::Response::new(Full::new(Bytes::new()));
                    *response.status_mut() = status;
                    Ok::<_, Infallible>(response)
                });
                let service = TowerToHyperService::new(layer.layer(handler));
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    addr
}

/// One kept-alive connection, reopened when the server closes it.
pub struct Client {
    addr: SocketAddr,
    stream: Option<TcpStream>,
}

impl Client {
    pub fn new(addr: SocketAddr) -> Self {
        Self { addr, stream: None }
    }

    /// Sends `method target` with `headers` as raw bytes; the status.
    pub fn send(&mut self, method: &str, target: &str, headers: &[(&str, &[u8])]) -> u16 {
        let mut head =
            format!("{method} {target} HTTP/1.1\r\nHost: {}\r\n", self.addr).into_bytes();
        for (name, value) in headers {
            head.extend_from_slice(name.as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value);
            head.extend_from_slice(b"\r\n");
        }
        head.extend_from_slice(b"\r\n");
        // A connection the server has closed (after a 400, or a CONNECT it
        // took as an upgrade) is reopened, and the request sent again once.
        for attempt in 0..2 {
            let stream = match self.stream.take() {
                Some(stream) => stream,
                None => {
                    let s = TcpStream::connect_timeout(&self.addr, Duration::from_secs(5)).unwrap();
                    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                    s.set_nodelay(true).unwrap();
                    s
                }
            };
            let mut stream = stream;
            match stream
                .write_all(&head)
                .and_then(|()| read_answer(&mut stream))
            {
                Ok((status, close)) => {
                    if !close && method != "CONNECT" {
                        self.stream = Some(stream);
                    }
                    return status;
                }
                // A CONNECT answered 2xx is an upgrade hyper closes at once.
                Err(_) if attempt == 0 && method == "CONNECT" => {}
                Err(e) if attempt == 0 => eprintln!("{method} {target}: {e}; sent again"),
                Err(e) => panic!("{method} {target}: {e}"),
            }
        }
        unreachable!()
    }
}

/// Reads one answer's head and its `Content-Length` body; whether the
/// server closes the connection after it.
fn read_answer(stream: &mut TcpStream) -> std::io::Result<(u16, bool)> {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte)? == 0 {
            return Err(std::io::Error::other("closed mid-answer"));
        }
        raw.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&raw).to_ascii_lowercase();
    let status = (head.get(9..12).and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("not an answer: {head:?}"));
    let header = |name: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
    };
    let length: usize = header("content-length:").map_or(0, |v| v.parse().unwrap());
    let mut body = vec![0; length];
    stream.read_exact(&mut body)?;
    if header("transfer-encoding:").is_some_and(|v| v == "chunked") {
        // Chunks until the empty one (no trailers here).
        loop {
            let mut line = Vec::new();
            while !line.ends_with(b"\r\n") {
                if stream.read(&mut byte)? == 0 {
                    return Err(std::io::Error::other("closed mid-chunk"));
                }
                line.push(byte[0]);
            }
            let size = std::str::from_utf8(&line).ok().map(str::trim);
            let size = size.and_then(|s| usize::from_str_radix(s, 16).ok());
            let size = size.ok_or_else(|| std::io::Error::other("bad chunk size"))?;
            let mut chunk = vec![0; size + 2];
            stream.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
        }
    }
    Ok((status, header("connection:").is_some_and(|v| v == "close")))
}

/// This process's resident set and its peak, from `/proc/self/status`, in KiB.
pub fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let field = |name: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}
