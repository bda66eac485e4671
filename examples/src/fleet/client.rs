//! The agents' HTTP client: one `POST /verify` on a fresh loopback connection,
//! to one of our resources servers or to a NeMo Gym one, each in its own body.

use std::error::Error;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

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

/// The largest `/verify` answer an agent reads: 1 MiB. Ours is a few bytes;
/// Gym's echoes the request (`BaseVerifyResponse` extends the request, well
/// under 1 KiB for the agents' bodies) and adds the reward. A longer answer
/// is a call without a verdict, read no further, so that a hostile or broken
/// server cannot make an agent hold more than this per call in flight.
pub const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The reward of a Gym verify response: the number under `reward` in a
/// JSON object. Read from the object itself, not through a derived
/// `Deserialize`, which would also take an array (`[1.0]`) as the struct's
/// fields in order and pass it.
fn gym_reward(body: &[u8]) -> Option<f64> {
    let answer: serde_json::Value = serde_json::from_slice(body).ok()?;
    answer.as_object()?.get("reward")?.as_f64()
}

/// Why a `/verify` call got no verdict.
#[derive(Debug)]
pub enum CallError {
    /// No answer at all: refused, reset, or timed out. The server did not count it.
    Unanswered(Box<dyn Error + Send + Sync>),
    /// The server answered, but not with a pass/fail verdict (e.g. HTTP 500,
    /// a body that is not the dialect's verdict, or one over
    /// [`MAX_ANSWER_BYTES`]).
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
/// [`CallError::Unanswered`] when no response arrived within `timeout`
/// (its head and its whole body), [`CallError::NoVerdict`] when the response
/// carried no verdict or a body over [`MAX_ANSWER_BYTES`].
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
        Ok(Ok((status, Some(body)))) => (status, body),
        // Answered, but longer than any verdict: not read to its end.
        Ok(Ok((status, None))) => return Err(CallError::NoVerdict(status)),
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
        Protocol::Fleet => serde_json::from_slice::<Verdict>(&body)
            .ok()
            .map(|v| v.passed),
        Protocol::Gym => gym_reward(&body).map(|reward| reward >= 1.0),
    };
    passed.ok_or(CallError::NoVerdict(status))
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

/// The answer's status and body; `None` for a body over [`MAX_ANSWER_BYTES`]
/// (declared so, or found so while reading), which is read no further.
async fn post(
    addr: SocketAddr,
    body: Vec<u8>,
    traceparent: Option<&str>,
) -> Result<(StatusCode, Option<Bytes>), Box<dyn Error + Send + Sync>> {
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
    let declared = response
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let body = if declared.is_some_and(|n| n > MAX_ANSWER_BYTES as u64) {
        None
    } else {
        match Limited::new(response.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
        {
            Ok(body) => Some(body.to_bytes()),
            Err(e) if e.is::<LengthLimitError>() => None,
            Err(e) => return Err(e),
        }
    };
    drop(sender); // one request per connection: closing it ends the driver
    if body.is_none() {
        // The rest is never read: drop the connection, not wait for its end.
        driver.abort();
    }
    let _ = driver.await;
    Ok((status, body))
}
