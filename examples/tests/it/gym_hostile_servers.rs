//! Issue 43, door 6: a NeMo Gym resources server that answers the agents'
//! `/verify` with hostile bodies, served on 127.0.0.1 by a small HTTP server
//! of std threads. The agents' client (`fleet::client::verify`, the Gym
//! dialect) must read no more than its bound, time out, count a hostile
//! answer as a call without a verdict, and hold up no other call; the real
//! `gym-fleet` must keep its numbers right.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gym_metrics_examples::fleet::client::{self, CallError, Protocol, Target, MAX_ANSWER_BYTES};
use gym_metrics_examples::fleet::server::Task;
use hyper::StatusCode;

/// What the hostile server answers.
#[derive(Debug, Clone, Copy)]
enum Answer {
    /// `200` with this exact body.
    Body(&'static str),
    /// `200`, `Content-Length` 50 MB, and the 50 MB.
    Huge,
    /// `200`, chunked, 64 KiB chunks until the client goes (at most 256 MiB).
    Endless,
    /// The head a byte a second (for at most 10 s).
    ByteASecond,
    /// The whole head (`Content-Length: 20`), then silence for 10 s.
    HeadThenSilence,
}

/// The hostile answers that come at once, each with the verdict the client owes.
const FAST: [(Answer, &str); 9] = [
    (Answer::Body("{\"reward\": 1"), "truncated JSON"),
    (Answer::Body("{\"reward\": \"x\"}"), "a string reward"),
    (Answer::Body("{\"reward\": null}"), "a null reward"),
    (Answer::Body("[1.0]"), "an array"),
    (Answer::Body("{}"), "no reward"),
    (Answer::Body("{\"reward\": 1e999}"), "a reward past f64"),
    (Answer::Body("not json at all"), "not JSON"),
    (Answer::Huge, "50 MB"),
    (Answer::Endless, "an endless chunked body"),
];

/// A hostile Gym server on 127.0.0.1: each connection gets the next of its
/// answers, in turn; it counts connections and the body bytes it got out.
struct Hostile {
    addr: SocketAddr,
    /// Read by the fleet test, which needs the `prom` backend.
    #[cfg_attr(not(feature = "prom"), allow(dead_code))]
    connections: Arc<AtomicU64>,
    sent: Arc<AtomicU64>,
}

impl Hostile {
    fn start(answers: Vec<Answer>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicU64::new(0));
        let sent = Arc::new(AtomicU64::new(0));
        let (count, bytes) = (Arc::clone(&connections), Arc::clone(&sent));
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let n = count.fetch_add(1, Ordering::Relaxed);
                let answer = answers[(n % answers.len() as u64) as usize];
                let bytes = Arc::clone(&bytes);
                std::thread::spawn(move || serve(stream, answer, &bytes));
            }
        });
        Self {
            addr,
            connections,
            sent,
        }
    }

    fn target(&self) -> Target {
        Target {
            addr: self.addr,
            protocol: Protocol::Gym,
        }
    }
}

/// Reads the request (head and `Content-Length` body), then answers.
fn serve(mut stream: TcpStream, answer: Answer, sent: &AtomicU64) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut request = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            return;
        }
        request.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&request);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                })
                .unwrap_or(0);
            if body.len() >= length {
                break;
            }
        }
    }
    let ok = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n";
    let count = |n: usize| sent.fetch_add(n as u64, Ordering::Relaxed);
    match answer {
        Answer::Body(body) => {
            let _ = write!(stream, "{ok}Content-Length: {}\r\n\r\n{body}", body.len());
        }
        Answer::Huge => {
            const HUGE: usize = 50_000_000;
            let chunk = vec![b' '; 1 << 16];
            if write!(stream, "{ok}Content-Length: {HUGE}\r\n\r\n").is_err() {
                return;
            }
            let mut left = HUGE;
            while left > 0 {
                let n = left.min(chunk.len());
                if stream.write_all(&chunk[..n]).is_err() {
                    return;
                }
                count(n);
                left -= n;
            }
        }
        Answer::Endless => {
            let chunk = vec![b' '; 1 << 16];
            if write!(stream, "{ok}Transfer-Encoding: chunked\r\n\r\n").is_err() {
                return;
            }
            for _ in 0..4096 {
                // 4,096 × 64 KiB = 256 MiB at most, never a last chunk.
                let head = format!("{:x}\r\n", chunk.len());
                let wrote = (stream.write_all(head.as_bytes()))
                    .and_then(|()| stream.write_all(&chunk))
                    .and_then(|()| stream.write_all(b"\r\n"));
                if wrote.is_err() {
                    return;
                }
                count(chunk.len());
            }
        }
        Answer::ByteASecond => {
            for byte in ok.bytes().take(10) {
                if stream.write_all(&[byte]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        Answer::HeadThenSilence => {
            let _ = write!(stream, "{ok}Content-Length: 20\r\n\r\n");
            std::thread::sleep(Duration::from_secs(10));
        }
    }
}

/// This process's peak resident set (`VmHWM`), in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn task(id: u64) -> Task {
    Task {
        task_id: id,
        answer: "4".into(),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn hostile_gym_answers_are_calls_without_a_verdict_read_only_to_the_bound() {
    let hostile = Hostile::start(FAST.iter().map(|(a, _)| *a).collect());
    let rt = runtime();
    let before = peak_rss(std::process::id());
    let mut slowest = Duration::ZERO;
    // Each answer three times, in turn.
    for k in 0..3 * FAST.len() as u64 {
        let (_, what) = FAST[(k % FAST.len() as u64) as usize];
        let t = Instant::now();
        let got = rt.block_on(client::verify(
            hostile.target(),
            &task(k),
            None,
            Duration::from_secs(5),
        ));
        let took = t.elapsed();
        slowest = slowest.max(took);
        assert!(
            matches!(got, Err(CallError::NoVerdict(StatusCode::OK))),
            "{what}: {got:?}"
        );
        assert!(took < Duration::from_secs(2), "{what} took {took:?}");
    }
    let grew = peak_rss(std::process::id()).saturating_sub(before);
    let sent = hostile.sent.load(Ordering::Relaxed);
    eprintln!(
        "{} hostile answers, slowest {slowest:?}; peak RSS +{} KiB; {} MiB of body sent \
         (the socket buffers take some the client never reads)",
        3 * FAST.len(),
        grew / 1024,
        sent >> 20
    );
    // Six 50 MB bodies and six endless ones: each is read to MAX_ANSWER_BYTES
    // at most, plus what the kernel buffers before the connection is dropped.
    assert!(grew < 16 << 20, "peak RSS grew by {grew} bytes");
    assert!(sent < (6 * 32) << 20, "{sent} body bytes went out");
    assert_eq!(MAX_ANSWER_BYTES, 1 << 20);
}

#[test]
fn slow_gym_servers_time_out_and_hold_up_no_other_call() {
    let slow = Hostile::start(vec![Answer::ByteASecond, Answer::HeadThenSilence]);
    let good = Hostile::start(vec![
        Answer::Body("{\"reward\": 1.0}"),
        Answer::Body("{\"reward\": 0.5}"),
    ]);
    // One thread: the slow calls and the sound ones share it, as an agent's do.
    let rt = runtime();
    let timeout = Duration::from_secs(2);
    rt.block_on(async {
        let started = Instant::now();
        let mut stuck = tokio::task::JoinSet::new();
        for k in 0..8 {
            let target = slow.target();
            stuck.spawn(async move {
                let got = client::verify(target, &task(k), None, timeout).await;
                (got, started.elapsed())
            });
        }
        // While the eight hang, 40 calls to a sound server, one after another.
        let mut passed = 0;
        let mut slowest = Duration::ZERO;
        for k in 0..40 {
            let t = Instant::now();
            let got = client::verify(good.target(), &task(100 + k), None, timeout).await;
            slowest = slowest.max(t.elapsed());
            passed += u32::from(got.expect("a sound answer"));
        }
        let good_done = started.elapsed();
        assert_eq!(passed, 20, "reward 1.0 passes, 0.5 fails");
        assert!(
            slowest < Duration::from_millis(500),
            "a sound call took {slowest:?}"
        );
        assert!(
            good_done < timeout,
            "the sound calls waited for the slow ones"
        );
        let mut ends = Vec::new();
        while let Some(joined) = stuck.join_next().await {
            let (got, at) = joined.unwrap();
            assert!(matches!(got, Err(CallError::Unanswered(_))), "{got:?}");
            ends.push(at);
        }
        ends.sort();
        eprintln!(
            "40 sound calls in {good_done:?} (slowest {slowest:?}) beside 8 slow servers, \
             which timed out after {:?}..{:?}",
            ends[0],
            ends[ends.len() - 1]
        );
        assert!(ends[0] >= timeout && ends[ends.len() - 1] < timeout + Duration::from_secs(1));
    });
}

/// The real `gym-fleet`, one of our resources servers and one agent, with
/// `--gym-resources-servers` at the hostile server (every fast answer in
/// turn). Every rollout is counted once, as a `/verify` call that was
/// answered; those at the hostile server never pass; the agent's memory
/// stays small.
#[cfg(feature = "prom")]
#[test]
fn a_fleet_whose_gym_server_answers_hostile_bodies_keeps_its_numbers() {
    use crate::support::{fast_fleet_args, fleet_summary, Fleet};
    let hostile = Hostile::start(FAST.iter().map(|(a, _)| *a).collect());
    let base = gym_testkit::free_port_block(3);
    let mut args = fast_fleet_args(1, 1, 0.7);
    args.extend(
        [
            "--duration",
            "4",
            "--metrics-port",
            &base.to_string(),
            "--gym-resources-servers",
            &hostile.addr.to_string(),
            "--linger",
            "0",
        ]
        .map(String::from),
    );
    let mut fleet = Fleet::start(&args, &[]);
    let agent = fleet.pid_of("agent-0");
    let mut agent_peak = 0;
    let deadline = Instant::now() + Duration::from_secs(4);
    while Instant::now() < deadline {
        agent_peak = agent_peak.max(peak_rss(agent));
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, output) = fleet.wait(Duration::from_secs(30));
    assert!(status.success(), "{output}");
    let s = fleet_summary(&output);
    let hostile_calls = hostile.connections.load(Ordering::Relaxed) as f64;
    eprintln!(
        "rollouts {} (verify_calls {}, unanswered {}), our server's verifications {}, \
         hostile calls {hostile_calls}, agent peak RSS {} KiB",
        s["rollouts"],
        s["verify_calls"],
        s["verify_unanswered"],
        s["verifications"],
        agent_peak / 1024
    );
    assert_eq!(s["crashed"], 0.0, "{output}");
    assert!(hostile_calls >= FAST.len() as f64, "{output}");
    // Every hostile answer is an answered call without a verdict: a failed
    // rollout, its duration recorded as any other's.
    assert_eq!(s["verify_unanswered"], 0.0, "{output}");
    assert_eq!(s["rollouts"], s["verify_calls"], "{output}");
    assert_eq!(
        s["rollouts"],
        s["verifications"] + hostile_calls,
        "{output}"
    );
    assert!(s["rollouts_ok"] <= s["verified_ok"], "{output}");
    assert!(
        agent_peak > 0 && agent_peak < 48 << 20,
        "agent peak RSS {agent_peak}"
    );
}
