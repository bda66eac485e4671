//! The agents' HTTP client: one `POST /verify` on a fresh loopback connection.

use std::error::Error;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::server::{Task, Verdict};

/// Why a `/verify` call got no verdict.
#[derive(Debug)]
pub enum CallError {
    /// No answer at all: refused, reset, or timed out. The server did not count it.
    Unanswered(Box<dyn Error + Send + Sync>),
    /// The server answered, but not with a pass/fail verdict (e.g. HTTP 500).
    NoVerdict(StatusCode),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Unanswered(e) => write!(f, "no answer: {e}"),
            CallError::NoVerdict(status) => write!(f, "answered {status} without a verdict"),
        }
    }
}

/// Sends `task` to `POST http://{addr}/verify`, with `traceparent` (the
/// rollout's span) as its header if given; `Ok(passed)` on a verdict.
///
/// # Errors
/// [`CallError::Unanswered`] when no response arrived within `timeout`,
/// [`CallError::NoVerdict`] when the response carried no verdict.
pub async fn verify(
    addr: SocketAddr,
    task: &Task,
    traceparent: Option<&str>,
    timeout: Duration,
) -> Result<bool, CallError> {
    let (status, body) = match tokio::time::timeout(timeout, post(addr, task, traceparent)).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => return Err(CallError::Unanswered(e)),
        Err(_) => {
            return Err(CallError::Unanswered(
                format!("timed out after {timeout:?}").into(),
            ))
        }
    };
    if status != StatusCode::OK {
        return Err(CallError::NoVerdict(status));
    }
    serde_json::from_slice::<Verdict>(&body)
        .map(|v| v.passed)
        .map_err(|_| CallError::NoVerdict(status))
}

async fn post(
    addr: SocketAddr,
    task: &Task,
    traceparent: Option<&str>,
) -> Result<(StatusCode, Bytes), Box<dyn Error + Send + Sync>> {
    let stream = TcpStream::connect(addr).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    let driver = tokio::spawn(connection);
    let mut request = Request::post("/verify")
        .header(hyper::header::HOST, addr.to_string())
        .header(hyper::header::CONTENT_TYPE, "application/json");
    if let Some(traceparent) = traceparent {
        request = request.header("traceparent", traceparent);
    }
    let request = request.body(Full::new(Bytes::from(serde_json::to_vec(task)?)))?;
    let response = sender.send_request(request).await?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    drop(sender); // one request per connection: closing it ends the driver
    let _ = driver.await;
    Ok((status, body))
}
