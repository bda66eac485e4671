//! The retry policy over OTLP/gRPC (issue 41 §2, issue 43 door 7), against
//! a tiny in-process gRPC receiver (hyper over HTTP/2 on 127.0.0.1) that
//! answers OK or a status, with or without a `google.rpc.RetryInfo` in its
//! details, and gunzips compressed messages: `UNAVAILABLE` is retried,
//! `RESOURCE_EXHAUSTED` only with RetryInfo (its delay honoured), anything
//! else never; an export never outlasts its timeout.
#![cfg(feature = "grpc")]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::io::Read;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use gym_metrics_api::backend::Instrument;
use gym_metrics_api::Role;
use gym_metrics_otel::{OtelBuilder, OtelGuard, OtelRecorder, OtlpProtocol};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{HeaderMap, HeaderValue};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use prost::Message;

use crate::support::fake_collector::{histogram_point, int_value};
use crate::support::*;

/// How the receiver answers.
#[derive(Debug, Clone, Copy)]
enum GrpcAnswer {
    Ok,
    /// This gRPC status code, with a RetryInfo of (seconds, nanos) if any.
    Status(i32, Option<(i64, i32)>),
}

struct Shared {
    queue: Mutex<VecDeque<GrpcAnswer>>,
    standing: Mutex<GrpcAnswer>,
    times: Mutex<Vec<Instant>>,
    accepted: Mutex<Vec<ExportMetricsServiceRequest>>,
    gzipped: AtomicUsize,
}

struct FakeGrpc {
    port: u16,
    shared: Arc<Shared>,
}

impl FakeGrpc {
    fn start(standing: GrpcAnswer) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            standing: Mutex::new(standing),
            times: Mutex::new(Vec::new()),
            accepted: Mutex::new(Vec::new()),
            gzipped: AtomicUsize::new(0),
        });
        let serving = Arc::clone(&shared);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        return;
                    };
                    let shared = Arc::clone(&serving);
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |request| {
                            answer(request, Arc::clone(&shared))
                        });
                        let _ = hyper::server::conn::http2::Builder::new(
                            hyper_util::rt::TokioExecutor::new(),
                        )
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                    });
                }
            });
        });
        Self { port, shared }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn answer_next(&self, answers: impl IntoIterator<Item = GrpcAnswer>) {
        self.shared.queue.lock().unwrap().extend(answers);
    }

    fn attempts(&self) -> usize {
        self.shared.times.lock().unwrap().len()
    }

    fn gaps(&self) -> Vec<Duration> {
        let times = self.shared.times.lock().unwrap();
        times.windows(2).map(|w| w[1] - w[0]).collect()
    }

    fn accepted(&self) -> Vec<ExportMetricsServiceRequest> {
        self.shared.accepted.lock().unwrap().clone()
    }
}

/// A unary gRPC answer: a message frame then trailers, or trailers only.
struct GrpcBody {
    data: Option<Bytes>,
    trailers: Option<HeaderMap>,
}

impl Body for GrpcBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(data) = self.data.take() {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none() && self.trailers.is_none()
    }
}

async fn answer(
    request: hyper::Request<Incoming>,
    shared: Arc<Shared>,
) -> Result<hyper::Response<GrpcBody>, Infallible> {
    let gzip_header = request
        .headers()
        .get("grpc-encoding")
        .is_some_and(|v| v == "gzip");
    let body = request.into_body().collect().await.unwrap().to_bytes();
    shared.times.lock().unwrap().push(Instant::now());
    let compressed = body[0] == 1;
    let len = u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize;
    let mut message = body[5..5 + len].to_vec();
    if compressed {
        assert!(
            gzip_header,
            "a compressed message without grpc-encoding: gzip"
        );
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(message.as_slice())
            .read_to_end(&mut plain)
            .unwrap();
        message = plain;
        shared.gzipped.fetch_add(1, Ordering::SeqCst);
    }
    let queued = shared.queue.lock().unwrap().pop_front();
    let answer = queued.unwrap_or_else(|| *shared.standing.lock().unwrap());
    let mut response = hyper::Response::builder()
        .status(200)
        .header("content-type", "application/grpc");
    let body = match answer {
        GrpcAnswer::Ok => {
            let request = ExportMetricsServiceRequest::decode(message.as_slice()).unwrap();
            shared.accepted.lock().unwrap().push(request);
            let mut trailers = HeaderMap::new();
            trailers.insert("grpc-status", HeaderValue::from_static("0"));
            GrpcBody {
                // An empty ExportMetricsServiceResponse, uncompressed.
                data: Some(Bytes::from_static(&[0, 0, 0, 0, 0])),
                trailers: Some(trailers),
            }
        }
        GrpcAnswer::Status(code, retry_info) => {
            response = response
                .header("grpc-status", code.to_string())
                .header("grpc-message", "refused");
            if let Some(delay) = retry_info {
                response = response.header("grpc-status-details-bin", status_details(code, delay));
            }
            GrpcBody {
                data: None,
                trailers: None,
            }
        }
    };
    Ok(response.body(body).unwrap())
}

/// `google.rpc.Status` with a `google.rpc.RetryInfo`, as written by hand
/// from the protos (independently of the backend's decoder).
#[derive(Clone, PartialEq, Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
    #[prost(message, repeated, tag = "3")]
    details: Vec<ProtoAny>,
}

#[derive(Clone, PartialEq, Message)]
struct ProtoAny {
    #[prost(string, tag = "1")]
    type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    value: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
struct RetryInfo {
    #[prost(message, optional, tag = "1")]
    retry_delay: Option<ProtoDuration>,
}

#[derive(Clone, PartialEq, Message)]
struct ProtoDuration {
    #[prost(int64, tag = "1")]
    seconds: i64,
    #[prost(int32, tag = "2")]
    nanos: i32,
}

fn status_details(code: i32, (seconds, nanos): (i64, i32)) -> String {
    let info = RetryInfo {
        retry_delay: Some(ProtoDuration { seconds, nanos }),
    };
    let status = RpcStatus {
        code,
        message: "refused".into(),
        details: vec![ProtoAny {
            type_url: "type.googleapis.com/google.rpc.RetryInfo".into(),
            value: info.encode_to_vec(),
        }],
    };
    base64_no_pad(&status.encode_to_vec())
}

fn base64_no_pad(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

const UNAVAILABLE: i32 = 14;
const RESOURCE_EXHAUSTED: i32 = 8;
const INVALID_ARGUMENT: i32 = 3;
const INTERNAL: i32 = 13;
const UNAUTHENTICATED: i32 = 16;

fn pipeline(endpoint: String, timeout: Duration, gzip: bool) -> (OtelRecorder, OtelGuard) {
    OtelBuilder::new()
        .role(Role::orchestrator())
        .protocol(OtlpProtocol::Grpc)
        .endpoint(endpoint)
        .compression(if gzip { "gzip" } else { "none" })
        .unwrap()
        .export_interval(Duration::from_secs(60))
        .export_timeout(timeout)
        .shutdown_timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

fn assert_reference_totals(first: &ExportMetricsServiceRequest) {
    let rollouts = histogram_point(first, Instrument::ROLLOUT_DURATION.name);
    assert_eq!(rollouts.count, 3);
    assert_eq!(rollouts.sum, Some(48520.0));
    assert_eq!(int_value(first, Instrument::VERIFY_COMPLETED.name), 4);
    assert_eq!(
        int_value(first, Instrument::SERVERS_ACTIVE.name),
        FLEET_SIZE as i64
    );
}

#[test]
fn fault_retry_grpc_unavailable_then_ok_within_one_export() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let collector = FakeGrpc::start(GrpcAnswer::Ok);
    let (recorder, guard) = pipeline(collector.endpoint(), Duration::from_secs(2), false);
    record_reference_sequence(&recorder);
    collector.answer_next([GrpcAnswer::Status(UNAVAILABLE, None)]);
    let start = Instant::now();
    let flushed = guard.force_flush();
    eprintln!(
        "UNAVAILABLE then OK: export {:?}, attempts {}, gaps {:?}",
        start.elapsed(),
        collector.attempts(),
        collector.gaps()
    );
    assert!(flushed.is_ok(), "{flushed:?}");
    assert_eq!(collector.attempts(), 2);
    assert_reference_totals(&collector.accepted()[0]);
    guard.shutdown().unwrap();
}

#[test]
fn fault_retry_grpc_resource_exhausted_only_with_retry_info_and_others_never() {
    if gym_testkit::ran_in_child() {
        return;
    }
    // With RetryInfo of 1 s under a 3 s timeout: retried 1 s later.
    let collector = FakeGrpc::start(GrpcAnswer::Ok);
    let (recorder, guard) = pipeline(collector.endpoint(), Duration::from_secs(3), false);
    record_reference_sequence(&recorder);
    collector.answer_next([GrpcAnswer::Status(RESOURCE_EXHAUSTED, Some((1, 0)))]);
    guard.force_flush().unwrap();
    let gaps = collector.gaps();
    eprintln!("RESOURCE_EXHAUSTED with RetryInfo 1 s: retried after {gaps:?}");
    assert_eq!(collector.attempts(), 2);
    assert!(
        gaps[0] >= Duration::from_millis(990) && gaps[0] < Duration::from_millis(1500),
        "{gaps:?}"
    );
    assert_reference_totals(&collector.accepted()[0]);
    guard.shutdown().unwrap();

    // Without RetryInfo, and every other code: one attempt per export.
    for code in [
        RESOURCE_EXHAUSTED,
        INVALID_ARGUMENT,
        INTERNAL,
        UNAUTHENTICATED,
    ] {
        let collector = FakeGrpc::start(GrpcAnswer::Status(code, None));
        let (recorder, guard) = pipeline(collector.endpoint(), Duration::from_secs(2), false);
        record_reference_sequence(&recorder);
        for export in 1..=2 {
            assert!(guard.force_flush().is_err(), "{code}");
            assert_eq!(
                collector.attempts(),
                export,
                "code {code}: one attempt per export"
            );
        }
        let _ = guard.shutdown(); // its final export is refused too
    }
    // INVALID_ARGUMENT with a RetryInfo is still not retried.
    let collector = FakeGrpc::start(GrpcAnswer::Status(INVALID_ARGUMENT, Some((0, 1_000_000))));
    let (recorder, guard) = pipeline(collector.endpoint(), Duration::from_secs(2), false);
    record_reference_sequence(&recorder);
    assert!(guard.force_flush().is_err());
    assert_eq!(collector.attempts(), 1);
    let _ = guard.shutdown(); // its final export is refused too
}

#[test]
fn fault_retry_grpc_huge_retry_info_never_holds_an_export_past_its_timeout() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let timeout = Duration::from_millis(600);
    for (code, delay) in [
        (UNAVAILABLE, (3600, 0)),
        (RESOURCE_EXHAUSTED, (3600, 0)),
        (RESOURCE_EXHAUSTED, (-5, 0)),
        (UNAVAILABLE, (0, -1)),
    ] {
        let collector = FakeGrpc::start(GrpcAnswer::Status(code, Some(delay)));
        let (recorder, guard) = pipeline(collector.endpoint(), timeout, false);
        record_reference_sequence(&recorder);
        let start = Instant::now();
        assert!(guard.force_flush().is_err());
        let took = start.elapsed();
        eprintln!(
            "code {code} RetryInfo {delay:?}: {} attempts, export {took:?}",
            collector.attempts()
        );
        assert!(took <= timeout + Duration::from_millis(150), "{took:?}");
        assert!(
            collector.attempts() >= 3,
            "fell back to the backoff: {}",
            collector.attempts()
        );
        let _ = guard.shutdown(); // its final export is refused too
    }
}

#[test]
fn fault_retry_grpc_gzip_messages_are_gunzipped_by_the_collector() {
    if gym_testkit::ran_in_child() {
        return;
    }
    for gzip in [true, false] {
        let collector = FakeGrpc::start(GrpcAnswer::Ok);
        let (recorder, guard) = pipeline(collector.endpoint(), Duration::from_secs(2), gzip);
        record_reference_sequence(&recorder);
        guard.force_flush().unwrap();
        let gzipped = collector.shared.gzipped.load(Ordering::SeqCst);
        eprintln!("gRPC gzip {gzip}: {gzipped} compressed message(s)");
        assert_eq!(gzipped, usize::from(gzip));
        assert_reference_totals(&collector.accepted()[0]);
        guard.shutdown().unwrap();
    }
}

#[test]
fn fault_retry_grpc_black_hole_export_is_bounded_by_its_timeout() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&held);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            keep.lock().unwrap().push(stream);
        }
    });
    let timeout = Duration::from_millis(500);
    let (recorder, guard) = pipeline(format!("http://{addr}"), timeout, false);
    record_reference_sequence(&recorder);
    let start = Instant::now();
    let flushed = guard.force_flush();
    let took = start.elapsed();
    eprintln!("gRPC black hole: export failed after {took:?}: {flushed:?}");
    assert!(flushed.is_err());
    assert!(took < timeout + Duration::from_millis(150), "{took:?}");
    let start = Instant::now();
    let _ = guard.shutdown();
    assert!(start.elapsed() < Duration::from_secs(10) + Duration::from_millis(300));
}
