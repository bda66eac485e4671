//! The reference for `/metrics` throughput: a minimal hyper 1 server (a
//! current-thread runtime on one thread, as our endpoint has) answering every
//! request with a fixed body of the given size.
//!
//! `fixed_body_server <bytes>`: prints `http://ADDR/metrics` on the first
//! line of standard output, serves until standard input closes.

use std::convert::Infallible;
use std::io::Read;
use std::process::ExitCode;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::Response;
use hyper_util::rt::TokioIo;

fn main() -> ExitCode {
    let Some(size) = std::env::args()
        .nth(1)
        .and_then(|s| s.parse::<usize>().ok())
    else {
        eprintln!("usage: fixed_body_server <bytes>");
        return ExitCode::from(2);
    };
    let body = Bytes::from(vec![b'x'; size]);
    let listener = match std::net::TcpListener::bind("127.0.0.1:0") {
        Ok(l) => l,
        Err(e) => {
            eprintln!("fixed_body_server: bind: {e}");
            return ExitCode::FAILURE;
        }
    };
    let serving = std::thread::spawn(move || serve(listener, body));
    // Serve until the parent closes our standard input.
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(serving);
    ExitCode::SUCCESS
}

fn serve(listener: std::net::TcpListener, body: Bytes) -> std::io::Result<()> {
    println!("http://{}/metrics", listener.local_addr()?);
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        loop {
            let (stream, _) = listener.accept().await?;
            let body = body.clone();
            tokio::spawn(async move {
                let service = service_fn(move |_request| {
                    let response = Response::builder()
                        .header("content-type", "text/plain; version=0.0.4; charset=utf-8")
                        .body(Full::new(body.clone()));
                    async move {
                        Ok::<_, Infallible>(
                            response.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))),
                        )
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}
