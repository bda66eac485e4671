//! Reading the body of `POST /verify`: capped in size ([`MAX_BODY_BYTES`],
//! with http-body-util's `Limited`), bounded in time ([`BODY_READ_TIMEOUT`]),
//! then parsed as a [`Task`]. A body refused here is answered 4xx and is not
//! a verification: it never reaches the verifier.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Body;
use hyper::StatusCode;

use super::server::Task;

/// The largest body read: a task is a few dozen bytes, so 64 KiB is generous,
/// and a server holding [`super::server::MAX_CONNECTIONS`] of them holds 16 MiB.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// How long the whole body may take to arrive once the head is in: a client
/// that trickles it would otherwise hold its connection for ever.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a body was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Longer than [`MAX_BODY_BYTES`], by its `Content-Length` or as it arrived: 413.
    #[error(
        "the body is over {} bytes: a task is a small JSON object",
        MAX_BODY_BYTES
    )]
    TooLarge,
    /// Not complete within [`BODY_READ_TIMEOUT`]: 408.
    #[error(
        "the body did not arrive within {:?}: send the whole request at once",
        BODY_READ_TIMEOUT
    )]
    TooSlow,
    /// The connection failed while it was read: 400.
    #[error("unreadable body: {0}")]
    Unreadable(String),
    /// Not a task: 400.
    #[error("expected {{\"task_id\": N, \"answer\": \"...\"}}: {0}")]
    NotATask(String),
}

impl Refusal {
    /// The status it is answered with.
    ///
    /// ```
    /// use gym_metrics_examples::fleet::task_body::Refusal;
    /// assert_eq!(Refusal::TooLarge.status(), 413);
    /// assert_eq!(Refusal::NotATask("expected a task".into()).status(), 400);
    /// ```
    pub fn status(&self) -> StatusCode {
        match self {
            Refusal::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Refusal::TooSlow => StatusCode::REQUEST_TIMEOUT,
            Refusal::Unreadable(_) | Refusal::NotATask(_) => StatusCode::BAD_REQUEST,
        }
    }
}

/// Reads `body` within the limits and parses it as a task.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// use gym_metrics_examples::fleet::task_body::{read_task, Refusal};
/// use http_body_util::Full;
/// let task = read_task(Full::new(r#"{"task_id": 7, "answer": "42"}"#.into())).await?;
/// assert_eq!(task.task_id, 7);
/// let big = Full::new(vec![b' '; 100_000].into());
/// assert_eq!(read_task(big).await.unwrap_err(), Refusal::TooLarge);
/// # Ok::<(), Refusal>(()) })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A [`Refusal`]: too large, too slow, unreadable, or not a task.
pub async fn read_task<B>(body: B) -> Result<Task, Refusal>
where
    B: Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    // A declared length over the cap is refused before a byte is read.
    let declared_too_long =
        usize::try_from(body.size_hint().lower()).map_or(true, |n| n > MAX_BODY_BYTES);
    if declared_too_long {
        return Err(Refusal::TooLarge);
    }
    let read = tokio::time::timeout(
        BODY_READ_TIMEOUT,
        Limited::new(body, MAX_BODY_BYTES).collect(),
    )
    .await;
    let bytes = match read {
        Err(_elapsed) => return Err(Refusal::TooSlow),
        Ok(Err(e)) if e.is::<LengthLimitError>() => return Err(Refusal::TooLarge),
        Ok(Err(e)) => return Err(Refusal::Unreadable(e.to_string())),
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    serde_json::from_slice(&bytes).map_err(|e| Refusal::NotATask(e.to_string()))
}
