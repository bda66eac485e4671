//! A minimal blocking HTTP/1.1 client for tests, loopback only.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Status, headers (names lower-cased) and body of a response.
pub type Response = (u16, Vec<(String, String)>, Vec<u8>);

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// A minimal blocking HTTP/1.1 client for tests (loopback only): returns
/// (status, headers lower-cased, body). Chunked bodies are decoded; a gzip body
/// (if the caller asked for one) is returned as sent.
pub fn http_get(url: &str, headers: &[(&str, &str)]) -> Result<Response, String> {
    request("GET", url, headers, &[])
}

/// Like [`http_get`], but a `POST` of `body` (the caller sets `Content-Type`).
pub fn http_post(url: &str, headers: &[(&str, &str)], body: &[u8]) -> Result<Response, String> {
    request("POST", url, headers, body)
}

fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<Response, String> {
    let target = Target::parse(url)?;
    let addr = target.loopback_addr()?;
    let mut stream = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)
        .map_err(|e| format!("{method} {url}: connect failed: {e}"))?;
    let _ = stream.set_read_timeout(Some(IO_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IO_TIMEOUT));

    let mut head = format!(
        "{method} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
        target.path, target.authority
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if method != "GET" || !body.is_empty() {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body))
        .map_err(|e| format!("{method} {url}: write failed: {e}"))?;

    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .map_err(|e| format!("{method} {url}: read failed: {e}"))?;
    parse_response(&raw).map_err(|e| format!("{method} {url}: {e}"))
}

/// The parts of an `http://` URL this client needs.
struct Target {
    host: String,
    authority: String,
    port: u16,
    path: String,
}

impl Target {
    fn parse(url: &str) -> Result<Self, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{url}: only http:// URLs are supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => {
                let port = port
                    .parse()
                    .map_err(|_| format!("{url}: bad port {port:?}"))?;
                (host, port)
            }
            _ => (authority, 80),
        };
        Ok(Self {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            authority: authority.to_string(),
            port,
            path: path.to_string(),
        })
    }

    fn loopback_addr(&self) -> Result<SocketAddr, String> {
        let addrs = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {}: {e}", self.host))?;
        let addrs: Vec<SocketAddr> = addrs.collect();
        addrs
            .iter()
            .find(|a| a.ip().is_loopback() && a.is_ipv4())
            .or_else(|| addrs.iter().find(|a| a.ip().is_loopback()))
            .copied()
            .ok_or_else(|| format!("{}: the test HTTP client only talks to loopback", self.host))
    }
}

fn parse_response(raw: &[u8]) -> Result<Response, String> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("no complete response head in {} bytes", raw.len()))?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let body = &raw[split + 4..];
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        decode_chunked(body)?
    } else {
        body.to_vec()
    };
    Ok((status, headers, body))
}

fn decode_chunked(mut data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("truncated chunk size line")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size_hex = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|_| format!("bad chunk size {size_hex:?}"))?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if data.len() < size {
            return Err(format!(
                "truncated chunk: want {size} bytes, have {}",
                data.len()
            ));
        }
        out.extend_from_slice(&data[..size]);
        data = data.get(size + 2..).unwrap_or_default();
    }
}

/// Percent-encodes a query-string value (RFC 3986 unreserved characters kept).
pub(crate) fn encode_query_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn serve_once(response: &'static [u8]) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            conn.write_all(response).unwrap();
        });
        port
    }

    #[test]
    fn reads_a_plain_response() {
        let port = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi",
        );
        let (status, headers, body) = http_get(&format!("http://127.0.0.1:{port}/x"), &[]).unwrap();
        assert_eq!(status, 200);
        assert!(headers.contains(&("content-type".into(), "text/plain".into())));
        assert_eq!(body, b"hi");
    }

    #[test]
    fn decodes_a_chunked_response() {
        let port = serve_once(b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
        let (status, _, body) = http_get(&format!("http://localhost:{port}/"), &[]).unwrap();
        assert_eq!(status, 404);
        assert_eq!(body, b"abcde");
    }

    #[test]
    fn refuses_other_hosts_and_schemes() {
        assert!(http_get("https://127.0.0.1/", &[]).is_err());
        assert!(http_get("http://192.0.2.1:80/", &[]).is_err());
    }

    #[test]
    fn encodes_promql() {
        assert_eq!(
            encode_query_value("up{job=\"gym\"} > 0"),
            "up%7Bjob%3D%22gym%22%7D%20%3E%200"
        );
    }
}
