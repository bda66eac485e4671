//! The agents' HTTP client: one `POST /verify` on a fresh loopback connection,
//! to one of our resources servers or to a NeMo Gym one, each in its own body.

use std::error::Error;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use serde::Deserialize;
use serde_json::json;

use super::server::{Task, Verdict};

/// The `/verify` dialect a resources server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Ours: a [`Task`], answered by a [`Verdict`].
    Fleet,
    /// NeMo Gym's (`BaseVerifyRequest`: `responses_create_params` and the
    /// rollout's `response`), answered with a `reward`; 1 or more passes.
    Gym,
}

/// A resources server an agent calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    /// Its `/verify` address.
    pub addr: SocketAddr,
    /// The body it reads.
    pub protocol: Protocol,
}

/// The part of a Gym verify response the agent reads.
#[derive(Deserialize)]
struct GymVerdict {
    reward: f64,
}

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

/// Sends `task` to `POST http://{target}/verify` in the target's dialect,
/// with `traceparent` (the rollout's span) as its header if given;
/// `Ok(passed)` on a verdict.
///
/// # Errors
/// [`CallError::Unanswered`] when no response arrived within `timeout`,
/// [`CallError::NoVerdict`] when the response carried no verdict.
pub async fn verify(
    target: Target,
    task: &Task,
    traceparent: Option<&str>,
    timeout: Duration,
) -> Result<bool, CallError> {
    let body = match target.protocol {
        // A task (a number and a string) always serializes; an empty body
        // would be refused with a 400, a call without a verdict.
        Protocol::Fleet => serde_json::to_vec(task).unwrap_or_default(),
        Protocol::Gym => gym_request(task).to_string().into_bytes(),
    };
    let posted = post(target.addr, body, traceparent);
    let (status, body) = match tokio::time::timeout(timeout, posted).await {
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
    let passed = match target.protocol {
        Protocol::Fleet => serde_json::from_slice::<Verdict>(&body).map(|v| v.passed),
        Protocol::Gym => serde_json::from_slice::<GymVerdict>(&body).map(|v| v.reward >= 1.0),
    };
    passed.map_err(|_| CallError::NoVerdict(status))
}

/// `task` as a Gym verify request: the prompt's parameters (the task id in
/// their metadata) and the rollout's response, whose one message is the answer.
fn gym_request(task: &Task) -> serde_json::Value {
    let id = task.task_id.to_string();
    json!({
        "responses_create_params": {
            "input": format!("task {id}"),
            "metadata": { "task_id": id },
        },
        "response": {
            "id": format!("rollout-{id}"),
            "created_at": 0,
            "model": "gym-fleet",
            "object": "response",
            "output": [{
                "type": "message",
                "id": format!("message-{id}"),
                "role": "assistant",
                "status": "completed",
                "content": [{ "type": "output_text", "text": task.answer, "annotations": [] }],
            }],
            "parallel_tool_calls": false,
            "tool_choice": "auto",
            "tools": [],
        },
    })
}

async fn post(
    addr: SocketAddr,
    body: Vec<u8>,
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
    let request = request.body(Full::new(Bytes::from(body)))?;
    let response = sender.send_request(request).await?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    drop(sender); // one request per connection: closing it ends the driver
    let _ = driver.await;
    Ok((status, body))
}
