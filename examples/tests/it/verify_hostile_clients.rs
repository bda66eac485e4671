//! The resources server's `/verify` listener against clients that anyone who
//! can reach its port could be: a body far over the cap, clients that never
//! finish their request, more connections than the cap, malformed tasks, and
//! a flood under a 64-file-descriptor limit. Each attack is bounded in size
//! and time, on loopback, against a real `gym-fleet server` killed by its PID.

use std::io::Write;
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::resources_server::{read_until_closed, send, series, ResourcesServer, Watched};
use gym_metrics_examples::fleet::accept::WARN_EVERY;
use gym_metrics_examples::fleet::server::{
    HEADER_READ_TIMEOUT, MAX_CONNECTIONS, MAX_REQUEST_HEAD_BYTES, VERIFY_TIMEOUT,
};
use gym_metrics_examples::fleet::task_body::{BODY_READ_TIMEOUT, MAX_BODY_BYTES};

/// Scheduling slack on top of a server-side timeout (a debug build on a
/// shared 2-core machine).
const SLACK: Duration = Duration::from_secs(3);

const MIB: u64 = 1024 * 1024;

/// 16 MiB, sent with its length declared and again chunked (no length, so
/// the cap must stop it while it streams): both 413, the peak RSS barely
/// moves, and neither is a verification.
#[test]
fn a_body_over_the_cap_is_refused_413_and_memory_stays_bounded() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    const BODY: usize = 16 * 1024 * 1024;
    let server = ResourcesServer::start();
    assert_eq!(server.verify_once(1).expect("answered").0, 200);
    let peak_before = server.status_kib("VmHWM");

    let mut statuses = Vec::new();
    for chunked in [false, true] {
        let mut s = server.connect(Duration::from_secs(20));
        let head = if chunked {
            "POST /verify HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".to_string()
        } else {
            format!("POST /verify HTTP/1.1\r\nHost: x\r\nContent-Length: {BODY}\r\n\r\n")
        };
        send(&mut s, head.as_bytes());
        let mut writer = s.try_clone().expect("a second handle");
        let sender = std::thread::spawn(move || {
            let chunk = vec![b'x'; 64 * 1024];
            let mut sent = 0;
            while sent < BODY {
                let written = if chunked {
                    write!(writer, "{:x}\r\n", chunk.len())
                        .and_then(|()| writer.write_all(&chunk))
                        .and_then(|()| writer.write_all(b"\r\n"))
                } else {
                    writer.write_all(&chunk)
                };
                if written.is_err() {
                    break; // the server closed: it read all it meant to
                }
                sent += chunk.len();
            }
            sent
        });
        let (status, closed) = read_until_closed(&mut s, Instant::now() + Duration::from_secs(20));
        let sent = sender.join().expect("the sender thread");
        eprintln!(
            "{} 16 MiB body: answered {status:?}, closed {closed}, {} KiB sent before the server stopped reading",
            if chunked { "chunked" } else { "declared" },
            sent / 1024
        );
        statuses.push(status);
    }
    let peak_after = server.status_kib("VmHWM");
    let rss = server.status_kib("VmRSS");
    eprintln!("server RSS: peak {peak_before} KiB before, {peak_after} KiB after ({rss} KiB now)");

    assert_eq!(statuses, [Some(413), Some(413)]);
    assert!(
        (peak_after - peak_before) * 1024 < 4 * MIB,
        "peak RSS grew by {} KiB for bodies capped at {MAX_BODY_BYTES} bytes",
        peak_after - peak_before
    );
    assert_eq!(server.verify_once(2).expect("still answers").0, 200);
    let last = server.stop();
    assert_eq!(
        last["completed"], 2,
        "a refused body is no verification: {last}"
    );
}

/// What a hostile connection does.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Slow {
    /// Connects and sends nothing.
    Silent,
    /// Sends half a head and stops.
    PartialHead,
    /// Sends a head one byte per tick, never ending it.
    Trickle,
    /// Sends a whole head with `Content-Length: 40` and 5 bytes of body.
    TrickledBody,
    /// One whole request kept alive, then idle.
    IdleKeepAlive,
}

/// 300 slow connections, 44 more than the cap: the server holds no more than
/// the cap open, closes every one (an idle kept-alive one too) within the
/// header timeout of its accept, answers a slow body 408, and answers a valid
/// request that arrived meanwhile.
#[test]
fn slow_clients_are_cut_off_at_the_header_timeout_and_the_cap_holds() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let server = ResourcesServer::start();
    let fds_before = server.open_fds();
    let total = MAX_CONNECTIONS + 44;
    let mut kinds = vec![Slow::IdleKeepAlive];
    kinds.extend([Slow::TrickledBody; 4]);
    kinds.extend([Slow::Trickle; 4]);
    while kinds.len() < total {
        kinds.push(if kinds.len() % 2 == 0 {
            Slow::Silent
        } else {
            Slow::PartialHead
        });
    }
    let started = Instant::now();
    let mut conns: Vec<(Slow, Watched)> = Vec::new();
    for kind in kinds {
        let mut s = server.connect(Duration::from_secs(1));
        match kind {
            Slow::Silent | Slow::Trickle => {}
            Slow::PartialHead => send(&mut s, b"POST /verify HTTP/1.1\r\nHost: x\r\n"),
            Slow::TrickledBody => send(
                &mut s,
                b"POST /verify HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{\"tas",
            ),
            Slow::IdleKeepAlive => {
                let task = r#"{"task_id": 1, "answer": "42"}"#;
                let request = format!(
                    "POST /verify HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{task}",
                    task.len()
                );
                send(&mut s, request.as_bytes());
            }
        }
        conns.push((kind, Watched::new(s)));
    }
    // A valid request while every slot is taken: it waits for a free one.
    let (answered_tx, answered) = mpsc::channel();
    let verify = server.verify;
    std::thread::spawn(move || {
        let sent = Instant::now();
        let result = gym_testkit::http_post(
            &format!("http://{verify}/verify"),
            &[("content-type", "application/json")],
            br#"{"task_id": 2, "answer": "42"}"#,
        );
        let _ = answered_tx.send((result.map(|r| r.0), sent.elapsed()));
    });

    let deadline = started + 2 * HEADER_READ_TIMEOUT + SLACK;
    let mut closed_after: Vec<Option<Duration>> = vec![None; conns.len()];
    let mut max_fds = 0;
    let mut ticks = 0u32;
    while Instant::now() < deadline && closed_after.iter().any(Option::is_none) {
        max_fds = max_fds.max(server.open_fds());
        ticks += 1;
        for (i, (kind, watched)) in conns.iter_mut().enumerate() {
            if closed_after[i].is_some() {
                continue;
            }
            if *kind == Slow::Trickle && ticks % 5 == 0 {
                send(&mut watched.stream, b"X");
            }
            if watched.poll() {
                closed_after[i] = Some(started.elapsed());
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let valid_answer = answered.recv_timeout(SLACK).ok();

    let still_open = closed_after.iter().filter(|o| o.is_none()).count();
    let slowest = closed_after.iter().flatten().max();
    let status_of = |kind: Slow| -> Vec<Option<u16>> {
        conns
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, watched)| watched.status())
            .collect()
    };
    eprintln!(
        "{total} slow connections: {still_open} still open after {:?}, the last closed after {slowest:?}; \
         server fds {fds_before} before, {max_fds} at most; valid request meanwhile: {valid_answer:?}",
        started.elapsed()
    );
    assert_eq!(still_open, 0, "connections the server never closed");
    assert!(
        max_fds <= fds_before + MAX_CONNECTIONS,
        "the server held {max_fds} fds open ({fds_before} before) with a cap of {MAX_CONNECTIONS} connections"
    );
    assert_eq!(status_of(Slow::IdleKeepAlive), [Some(200)]);
    assert_eq!(status_of(Slow::TrickledBody), [Some(408); 4]);
    let (status, waited) = valid_answer.expect("the valid request was answered");
    assert_eq!(status, Ok(200));
    assert!(
        waited < HEADER_READ_TIMEOUT + SLACK,
        "the valid request waited {waited:?} for a slot"
    );
    let last = server.stop();
    assert_eq!(last["completed"], 2, "{last}");
    // Bounds the test can rely on, whatever the machine: the server-side limits.
    assert!(BODY_READ_TIMEOUT <= HEADER_READ_TIMEOUT + SLACK);
}

/// Not a task, in every way: each answered 400 (and counted under
/// `http.server.request.duration` with that status), none a verification:
/// `gym_verify_completed_total` and the server's own count do not move. A
/// head over the cap is answered 431.
#[test]
fn a_malformed_task_is_answered_400_and_is_no_verification() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let server = ResourcesServer::start();
    assert_eq!(server.verify_once(1).expect("answered").0, 200);
    let completed = |text: &str| series(text, "gym_verify_completed_total");
    let before = server.scrape();
    let url = format!("http://{}/verify", server.verify);
    let bad: [&[u8]; 6] = [
        b"not json",
        b"",
        b"{}",
        br#"{"task_id": "seven", "answer": "42"}"#,
        br#"{"task_id": -1, "answer": "42"}"#,
        b"\xff\xfe{\"task_id\": 3}",
    ];
    for body in bad {
        let (status, _, answer) =
            gym_testkit::http_post(&url, &[("content-type", "application/json")], body)
                .expect("answered");
        let answer = String::from_utf8_lossy(&answer);
        assert_eq!(status, 400, "{body:?}: {answer}");
        assert!(answer.contains("expected {"), "{answer}");
    }
    // A head over the cap is refused before any handler runs.
    let mut s = server.connect(Duration::from_secs(10));
    let big_head = format!(
        "POST /verify HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\nContent-Length: 2\r\n\r\n{{}}",
        "a".repeat(MAX_REQUEST_HEAD_BYTES)
    );
    send(&mut s, big_head.as_bytes());
    let (status, _) = read_until_closed(&mut s, Instant::now() + Duration::from_secs(10));
    assert_eq!(status, Some(431));
    if let (Some(before), Some(after)) = (before, server.scrape()) {
        assert_eq!(completed(&before), Some(1.0), "{before}");
        assert_eq!(completed(&after), Some(1.0), "{after}");
        let bad_requests = series(
            &after,
            r#"http_server_request_duration_seconds_count{http_request_method="POST",http_response_status_code="400",http_route="/verify""#,
        );
        assert_eq!(bad_requests, Some(bad.len() as f64), "{after}");
    }
    let last = server.stop();
    assert_eq!(last["completed"], 1, "{last}");
    assert_eq!(last["succeeded"], 1, "{last}");
}

/// Out of file descriptors (`prlimit --nofile=64:64`, a flood of idle
/// connections 20 past what fits): the accept loop pauses instead of
/// spinning, warns once instead of flooding standard error, and the server
/// answers a valid request once the header timeout frees descriptors.
#[test]
fn out_of_file_descriptors_the_server_stays_answerable_and_quiet() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    const FD_LIMIT: u32 = 64;
    let server = ResourcesServer::start_with_fd_limit(FD_LIMIT);
    let fds_before = server.open_fds();
    let flood_size = FD_LIMIT as usize - fds_before + 20;
    let (stderr_before, cpu_before) = (server.stderr_bytes(), server.cpu_time());
    let started = Instant::now();
    let flood: Vec<TcpStream> = (0..flood_size)
        .map(|_| server.connect(Duration::from_millis(1)))
        .collect();
    std::thread::sleep(Duration::from_secs(1)); // the server runs out meanwhile

    let (answered_tx, answered) = mpsc::channel();
    let verify = server.verify;
    std::thread::spawn(move || {
        let sent = Instant::now();
        let result = gym_testkit::http_post(
            &format!("http://{verify}/verify"),
            &[("content-type", "application/json")],
            br#"{"task_id": 2, "answer": "42"}"#,
        );
        let _ = answered_tx.send((result.map(|r| r.0), sent.elapsed()));
    });
    let valid_answer = answered.recv_timeout(HEADER_READ_TIMEOUT + SLACK).ok();
    let elapsed = started.elapsed();
    let cpu = server.cpu_time().saturating_sub(cpu_before);
    let stderr = server.stderr_bytes() - stderr_before;
    let fds_during = server.open_fds();
    drop(flood);
    let after = server.verify_once(3);
    eprintln!(
        "flood of {flood_size} connections under {FD_LIMIT} fds ({fds_before} in use before): \
         valid request {valid_answer:?}; server CPU {cpu:?} in {elapsed:?}; {stderr} bytes on stderr; \
         {fds_during} fds open; after the flood: {after:?}\n{}",
        server.stderr_text()
    );
    let (status, _waited) =
        valid_answer.expect("a valid request answered within the header timeout");
    assert_eq!(status, Ok(200));
    assert!(
        stderr <= 2048,
        "{stderr} bytes written to stderr in {elapsed:?} (one warning per {WARN_EVERY:?} expected)"
    );
    let text = server.stderr_text();
    assert!(
        text.contains(
            "[WARN  gym_fleet] accepting a /verify connection failed: Too many open files"
        ),
        "{text}"
    );
    assert!(
        cpu < elapsed / 4,
        "the accept loop used {cpu:?} of CPU in {elapsed:?}: it spins"
    );
    assert_eq!(after.expect("answered after the flood").0, 200);
    let last = server.stop();
    assert_eq!(last["completed"], 2, "{last}");
}

/// A verifier that hangs (here: simulated work of 25 s, past the 20 s
/// bound) does not hold its caller: answered 503 at the bound, and counted
/// as a failed verification, in the metrics and in the server's own report.
#[test]
fn a_verification_past_its_timeout_is_answered_503_and_counted_as_failed() {
    if gym_testkit::ran_alone_in_child() {
        return;
    }
    let server = ResourcesServer::start_with(&["--verify-ms", "25000"]);
    let sent = Instant::now();
    let (status, answer) = server.verify_once(1).expect("answered");
    let waited = sent.elapsed();
    eprintln!("a 25 s verification: answered {status} after {waited:?}: {answer}");
    assert_eq!(status, 503, "{answer}");
    assert!(waited >= VERIFY_TIMEOUT, "{waited:?}");
    if let Some(text) = server.scrape() {
        assert_eq!(
            series(&text, "gym_verify_completed_total"),
            Some(1.0),
            "{text}"
        );
        assert_eq!(
            series(&text, "gym_verify_succeeded_total"),
            Some(0.0),
            "{text}"
        );
    }
    let last = server.stop();
    assert_eq!(
        (&last["completed"], &last["succeeded"]),
        (&1.into(), &0.into()),
        "{last}"
    );
}
