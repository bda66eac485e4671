//! A hyper 1 server behind the API's tower layer ([`HttpServerMetricsLayer`],
//! through hyper-util's `TowerToHyperService`), for the e2e tests that read
//! `http.server.request.duration` back from a real backend: a handler with
//! known routes and statuses, a raw client that can send any method and
//! target, and the request mix each backend's test expects series of.

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

/// The route templates of the layered server: only these may become a
/// `http.route` value.
pub const ROUTES: [&str; 4] = ["/health", "/verify", "/tasks/{id}", "/fail"];

/// The mix: (method, target, expected status, times). Raw paths, a query
/// with a secret, unknown and lower-case methods: none of it may become a
/// label value.
pub const MIX: [(&str, &str, u16, usize); 9] = [
    ("POST", "/verify", 200, 3),
    ("GET", "/tasks/17", 200, 2),
    ("GET", "/tasks/abc?secret=hunter2", 200, 1),
    ("GET", "/health", 200, 1),
    ("GET", "/no/such/path-12345", 404, 2),
    ("GET", "/fail", 500, 1),
    ("PURGE", "/verify", 405, 1),
    ("BREW", "/teapot", 404, 1),
    ("get", "/health", 404, 1),
];

async fn handler(
    req: http::Request<hyper::body::Incoming>,
) -> Result<http::Response<Full<Bytes>>, Infallible> {
    let status = match (req.method().as_str(), req.uri().path()) {
        ("GET", "/health") | ("POST", "/verify") => 200,
        ("GET", p) if p.starts_with("/tasks/") && p.len() > "/tasks/".len() => 200,
        ("GET", "/fail") => 500, // the failing handler
        (_, "/verify") => 405,
        _ => 404,
    };
    let mut response = http::Response::new(Full::new(Bytes::from_static(b"{}")));
    *response.status_mut() = http::StatusCode::from_u16(status).unwrap_or_default();
    Ok(response)
}

/// Serves the layered handler on 127.0.0.1 from a runtime thread of its own
/// (for the life of the process); requests record into whatever backend is
/// installed.
///
/// ```
/// let addr = gym_testkit::serve_layered().unwrap();
/// for (method, target, status, _) in gym_testkit::MIX {
///     assert_eq!(gym_testkit::send_raw(addr, method, target).unwrap(), status);
/// }
/// ```
pub fn serve_layered() -> Result<SocketAddr, String> {
    let bind = |e: std::io::Error| format!("layered server: cannot bind 127.0.0.1:0: {e}");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(bind)?;
    listener.set_nonblocking(true).map_err(bind)?;
    let addr = listener.local_addr().map_err(bind)?;
    let routes = RouteTable::new(ROUTES).map_err(|e| format!("layered server: {e}"))?;
    let layer = HttpServerMetricsLayer::new(routes);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("layered server: no runtime: {e}"))?;
    std::thread::spawn(move || {
        rt.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                return;
            };
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let service = TowerToHyperService::new(layer.layer(service_fn(handler)));
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    Ok(addr)
}

/// One request with any method and target, raw; returns the status.
///
/// ```
/// let addr = gym_testkit::serve_layered().unwrap();
/// assert_eq!(gym_testkit::send_raw(addr, "BREW", "/teapot").unwrap(), 404);
/// ```
pub fn send_raw(addr: SocketAddr, method: &str, target: &str) -> Result<u16, String> {
    let io = |e: std::io::Error| format!("{method} {target} to {addr}: {e}");
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(io)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(io)?;
    write!(
        s,
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    )
    .map_err(io)?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).map_err(io)?;
    raw.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("bad response: {raw}"))
}

/// Sends every request of [`MIX`] its number of times, each answered with
/// its expected status; returns how many were sent (what the backend's
/// request count must reach), or the first unexpected answer.
///
/// ```
/// let addr = gym_testkit::serve_layered().unwrap();
/// assert_eq!(gym_testkit::send_mix(addr).unwrap(), 13);
/// ```
pub fn send_mix(addr: SocketAddr) -> Result<u32, String> {
    let mut total = 0;
    for (method, target, status, times) in MIX {
        for _ in 0..times {
            let got = send_raw(addr, method, target)?;
            if got != status {
                return Err(format!(
                    "{method} {target}: status {got}, expected {status}"
                ));
            }
            total += 1;
        }
    }
    Ok(total)
}
