//! What one `GET /sd` costs: the body's size, plain and as gzip would make
//! it, and the request time a client sees.

use std::io::Write as _;
use std::time::Instant;

use flate2::write::GzEncoder;
use flate2::Compression;

use super::figures::{SdCost, Stats};

/// `requests` sequential `GET`s of `url` (a new connection each, as a
/// scraper's SD refresh may make); the list must hold `targets` entries.
///
/// # Errors
/// A request failed, did not answer 200, or listed another number of targets.
pub fn measure(
    url: &str,
    targets: usize,
    publish_ms: Option<f64>,
    requests: usize,
) -> Result<SdCost, String> {
    let mut times = Vec::with_capacity(requests);
    let mut body = Vec::new();
    for _ in 0..requests.max(1) {
        let started = Instant::now();
        let (status, _, got) = gym_testkit::http_get(url, &[])?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        if status != 200 {
            return Err(format!("GET {url}: HTTP {status}"));
        }
        body = got;
    }
    let listed = serde_json::from_slice::<serde_json::Value>(&body)
        .map_err(|e| format!("GET {url}: not JSON: {e}"))?
        .as_array()
        .map_or(0, Vec::len);
    if listed != targets {
        return Err(format!(
            "GET {url}: {listed} targets listed, {targets} expected"
        ));
    }
    Ok(SdCost {
        targets,
        bytes: body.len(),
        gzip_bytes: gzip_len(&body),
        request_ms: Stats::of(&times),
        publish_ms,
    })
}

/// The length of `body` gzip-compressed at the default level.
pub fn gzip_len(body: &[u8]) -> usize {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    if encoder.write_all(body).is_err() {
        return 0;
    }
    encoder.finish().map_or(0, |v| v.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repetitive_list_compresses_well() {
        let list = "{\"targets\":[\"h:1\"],\"labels\":{\"a\":\"b\"}},".repeat(1000);
        let n = gzip_len(list.as_bytes());
        assert!(n > 20 && n * 20 < list.len(), "{n} of {}", list.len());
    }
}
