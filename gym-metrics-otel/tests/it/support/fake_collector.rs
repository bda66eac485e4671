//! A tiny OTLP/HTTP metrics receiver on 127.0.0.1 for the fault tests: it
//! decodes requests with opentelemetry-proto's types, can answer 500, and can
//! be stopped (connections refused) and restarted on the same port. OTLP/JSON
//! requests (`Content-Type: application/json`) are kept as parsed JSON, read
//! independently of opentelemetry-proto (see `support::otlp_json`).
//! Gzipped bodies (`Content-Encoding: gzip`) are gunzipped first; a queue of
//! answers ([`FakeCollector::answer_next`]) is served before the standing one.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsPartialSuccess, ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::metrics::v1::{
    metric, number_data_point, HistogramDataPoint, Metric,
};
use prost::Message;

/// How the collector answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// 200 with an empty ExportMetricsServiceResponse; the request is kept.
    Ok,
    /// 500 Internal Server Error; the request is dropped.
    InternalError,
    /// 429 Too Many Requests with `Retry-After: 1`; the request is dropped.
    TooManyRequests,
    /// 200 like [`Answer::Ok`], but only after this delay (a slow collector).
    Slow(Duration),
    /// 307 Temporary Redirect to `http://127.0.0.1:<port>/v1/metrics`
    /// (the collector's own port makes a loop); the request is dropped.
    Redirect(u16),
    /// This status, with this `Retry-After` header if any; dropped.
    Status(u16, Option<&'static str>),
    /// 200 with a partial success: this many data points rejected, this
    /// message; the request is kept (in `accepted`).
    PartialSuccess(i64, &'static str),
}

#[derive(Default)]
struct Shared {
    answer: Mutex<Option<Answer>>,
    attempts: AtomicUsize,
    accepted: Mutex<Vec<ExportMetricsServiceRequest>>,
    last_headers: Mutex<Vec<(String, String)>>,
    targets: Mutex<Vec<String>>,
    connections: Mutex<Vec<TcpStream>>,
    slow_answered: Mutex<Vec<ExportMetricsServiceRequest>>,
    accepted_json: Mutex<Vec<serde_json::Value>>,
    queue: Mutex<VecDeque<Answer>>,
    attempt_times: Mutex<Vec<Instant>>,
    gzipped: AtomicUsize,
}

pub struct FakeCollector {
    port: u16,
    shared: Arc<Shared>,
    running: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl FakeCollector {
    pub fn start(answer: Answer) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared::default());
        *shared.answer.lock().unwrap() = Some(answer);
        let mut c = Self {
            port,
            shared,
            running: None,
        };
        c.serve(listener);
        c
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/v1/metrics", self.port)
    }

    /// Export attempts that reached the collector (answered either way).
    pub fn attempts(&self) -> usize {
        self.shared.attempts.load(Ordering::SeqCst)
    }

    /// Requests answered 200, decoded.
    pub fn accepted(&self) -> Vec<ExportMetricsServiceRequest> {
        self.shared.accepted.lock().unwrap().clone()
    }

    /// OTLP/JSON requests answered 200, parsed.
    pub fn accepted_json(&self) -> Vec<serde_json::Value> {
        self.shared.accepted_json.lock().unwrap().clone()
    }

    /// Requests a [`Answer::Slow`] collector answered 200 (late), decoded.
    pub fn slow_answered(&self) -> Vec<ExportMetricsServiceRequest> {
        self.shared.slow_answered.lock().unwrap().clone()
    }

    /// The request target (`/v1/metrics?…`) of every request, in order.
    pub fn targets(&self) -> Vec<String> {
        self.shared.targets.lock().unwrap().clone()
    }

    /// The headers of the latest request, names lower-cased.
    pub fn last_headers(&self) -> Vec<(String, String)> {
        self.shared.last_headers.lock().unwrap().clone()
    }

    /// When each attempt arrived (its body read), in order.
    pub fn attempt_times(&self) -> Vec<Instant> {
        self.shared.attempt_times.lock().unwrap().clone()
    }

    /// Requests that came gzipped (`Content-Encoding: gzip`).
    pub fn gzipped(&self) -> usize {
        self.shared.gzipped.load(Ordering::SeqCst)
    }

    /// Answers for the next requests, in order, before the standing answer.
    pub fn answer_next(&self, answers: impl IntoIterator<Item = Answer>) {
        self.shared.queue.lock().unwrap().extend(answers);
    }

    pub fn set_answer(&self, answer: Answer) {
        *self.shared.answer.lock().unwrap() = Some(answer);
    }

    /// Waits until at least `n` requests were accepted.
    pub fn wait_accepted(&self, n: usize, timeout: Duration) -> Vec<ExportMetricsServiceRequest> {
        let start = Instant::now();
        loop {
            let got = self.accepted();
            if got.len() >= n || start.elapsed() > timeout {
                return got;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops listening and closes every connection: from now on connections are refused.
    pub fn stop(&mut self) {
        if let Some((stop, thread)) = self.running.take() {
            stop.store(true, Ordering::SeqCst);
            thread.join().unwrap();
        }
        for c in self.shared.connections.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }

    /// Listens again on the same port.
    pub fn restart(&mut self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port)).unwrap();
        self.serve(listener);
    }

    fn serve(&mut self, listener: TcpListener) {
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::clone(&self.shared);
        let stopping = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        stream.set_nonblocking(false).unwrap();
                        shared
                            .connections
                            .lock()
                            .unwrap()
                            .push(stream.try_clone().unwrap());
                        let shared = Arc::clone(&shared);
                        std::thread::spawn(move || handle(stream, &shared));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        self.running = Some((stop, thread));
    }
}

impl Drop for FakeCollector {
    fn drop(&mut self) {
        self.stop();
    }
}

fn handle(stream: TcpStream, shared: &Shared) {
    let mut writer = match stream.try_clone() {
        Ok(w) => w,
        Err(_) => return,
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut content_length = 0usize;
        let mut headers = Vec::new();
        let mut target = None;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if line == "\r\n" {
                break;
            }
            if target.is_none() {
                let mut words = line.split_whitespace();
                target = Some(words.nth(1).unwrap_or_default().to_string());
                continue;
            }
            if let Some((k, v)) = line.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
                if k.eq_ignore_ascii_case("content-length") {
                    content_length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0u8; content_length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if headers
            .iter()
            .any(|(k, v)| k == "content-encoding" && v.eq_ignore_ascii_case("gzip"))
        {
            let mut plain = Vec::new();
            flate2::read::GzDecoder::new(body.as_slice())
                .read_to_end(&mut plain)
                .expect("a gzipped body that gunzips");
            body = plain;
            shared.gzipped.fetch_add(1, Ordering::SeqCst);
        }
        shared.attempt_times.lock().unwrap().push(Instant::now());
        let json = headers
            .iter()
            .any(|(k, v)| k == "content-type" && v.starts_with("application/json"));
        *shared.last_headers.lock().unwrap() = headers;
        shared
            .targets
            .lock()
            .unwrap()
            .push(target.unwrap_or_default());
        shared.attempts.fetch_add(1, Ordering::SeqCst);
        let queued = shared.queue.lock().unwrap().pop_front();
        let answer = queued.unwrap_or_else(|| shared.answer.lock().unwrap().unwrap_or(Answer::Ok));
        let redirect;
        let status;
        let partial;
        let response: &[u8] = match answer {
            Answer::Redirect(port) => {
                redirect = format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:{port}/v1/metrics\r\nContent-Length: 0\r\n\r\n"
                );
                redirect.as_bytes()
            }
            Answer::Status(code, retry_after) => {
                let retry_after = retry_after
                    .map(|v| format!("Retry-After: {v}\r\n"))
                    .unwrap_or_default();
                status = format!(
                    "HTTP/1.1 {code} Refused\r\n{retry_after}Content-Type: text/plain\r\nContent-Length: 4\r\n\r\nfail"
                );
                status.as_bytes()
            }
            Answer::PartialSuccess(rejected, message) => {
                let request = ExportMetricsServiceRequest::decode(body.as_slice()).unwrap();
                shared.accepted.lock().unwrap().push(request);
                let answer = ExportMetricsServiceResponse {
                    partial_success: Some(ExportMetricsPartialSuccess {
                        rejected_data_points: rejected,
                        error_message: message.to_string(),
                    }),
                }
                .encode_to_vec();
                let mut bytes = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: {}\r\n\r\n",
                    answer.len()
                )
                .into_bytes();
                bytes.extend_from_slice(&answer);
                partial = bytes;
                &partial
            }
            Answer::Ok if json => {
                let doc: serde_json::Value = serde_json::from_slice(&body).unwrap();
                shared.accepted_json.lock().unwrap().push(doc);
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
            }
            Answer::Ok => {
                let request = ExportMetricsServiceRequest::decode(body.as_slice()).unwrap();
                shared.accepted.lock().unwrap().push(request);
                b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n"
            }
            Answer::InternalError => {
                b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nboom"
            }
            Answer::TooManyRequests => {
                b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nslow"
            }
            Answer::Slow(delay) => {
                std::thread::sleep(delay);
                // Kept only if the client is still there to be answered.
                let request = ExportMetricsServiceRequest::decode(body.as_slice()).unwrap();
                let ok = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
                // Held across the write: a test that got this answer and then
                // reads `slow_answered` waits for the push, never races it.
                let mut answered = shared.slow_answered.lock().unwrap();
                if writer.write_all(ok).is_ok() && writer.flush().is_ok() {
                    answered.push(request);
                }
                continue;
            }
        };
        if writer.write_all(response).is_err() {
            return;
        }
    }
}

/// The metric called `name` in `request`.
pub fn find<'a>(request: &'a ExportMetricsServiceRequest, name: &str) -> Option<&'a Metric> {
    request
        .resource_metrics
        .iter()
        .flat_map(|rm| &rm.scope_metrics)
        .flat_map(|sm| &sm.metrics)
        .find(|m| m.name == name)
}

/// The single histogram point of `name`.
pub fn histogram_point<'a>(
    request: &'a ExportMetricsServiceRequest,
    name: &str,
) -> &'a HistogramDataPoint {
    match find(request, name).and_then(|m| m.data.as_ref()) {
        Some(metric::Data::Histogram(h)) => &h.data_points[0],
        other => panic!("{name} is not a histogram: {other:?}"),
    }
}

/// The single integer value of the sum or gauge `name`.
pub fn int_value(request: &ExportMetricsServiceRequest, name: &str) -> i64 {
    let points = match find(request, name).and_then(|m| m.data.as_ref()) {
        Some(metric::Data::Sum(s)) => &s.data_points,
        Some(metric::Data::Gauge(g)) => &g.data_points,
        other => panic!("{name} is not a sum or gauge: {other:?}"),
    };
    match points[0].value {
        Some(number_data_point::Value::AsInt(v)) => v,
        other => panic!("{name} is not an integer: {other:?}"),
    }
}

/// The single double value of the gauge `name`.
pub fn double_value(request: &ExportMetricsServiceRequest, name: &str) -> f64 {
    match find(request, name).and_then(|m| m.data.as_ref()) {
        Some(metric::Data::Gauge(g)) => match g.data_points[0].value {
            Some(number_data_point::Value::AsDouble(v)) => v,
            other => panic!("{name} is not a double: {other:?}"),
        },
        other => panic!("{name} is not a gauge: {other:?}"),
    }
}
