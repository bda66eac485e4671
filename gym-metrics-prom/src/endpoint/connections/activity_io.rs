//! The connection's socket, telling its state when a read brings bytes, when
//! a write finds the socket full and when everything written is on it, for
//! the watchdog and the pipelining bound (why it exists: the endpoint's
//! module doc).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::connection_state::ConnectionState;
use super::final_scrape::FinalScrapeWatch;
use crate::endpoint::endpoint_state::Shared;

/// A `TcpStream` that reports its reads, writes and flushes to its [`ConnectionState`].
#[derive(Debug)]
pub(crate) struct ActivityIo {
    stream: TcpStream,
    state: Arc<ConnectionState>,
    shared: Arc<Shared>,
}

impl ActivityIo {
    pub(crate) fn new(stream: TcpStream, state: Arc<ConnectionState>, shared: Arc<Shared>) -> Self {
        Self {
            stream,
            state,
            shared,
        }
    }

    fn note_write<T>(&self, result: &Poll<io::Result<T>>) {
        if result.is_pending() {
            self.state.write_stalled();
        }
    }

    fn final_scrape(&self) -> &FinalScrapeWatch {
        &self.shared.final_scrape
    }
}

impl AsyncRead for ActivityIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // Reads are no progress: a client trickling a request head byte by
        // byte is still idle (no request in progress). They are counted, so
        // a request that needed none came pipelined.
        let before = buf.filled().len();
        let result = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.state.read();
        }
        result
    }
}

impl AsyncWrite for ActivityIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.note_write(&result);
        result
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.note_write(&result);
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // hyper (and rustls beneath it) flush the socket only once their own
        // write buffers are empty, so a flush that succeeds means every byte
        // so far reached the socket: the end of an answer.
        let result = Pin::new(&mut self.stream).poll_flush(cx);
        if matches!(result, Poll::Ready(Ok(()))) && self.state.flushed() {
            self.final_scrape().answered();
        }
        result
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
