//! A loopback TCP proxy that can be stopped (connections refused and cut)
//! and restarted on the same port: a collector "restart" in front of a real one.

use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub struct TcpProxy {
    port: u16,
    target: SocketAddr,
    connections: Arc<Mutex<Vec<TcpStream>>>,
    running: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl TcpProxy {
    /// Proxies a fresh loopback port to `target`.
    pub fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut p = Self {
            port,
            target,
            connections: Arc::default(),
            running: None,
        };
        p.serve(listener);
        p
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops listening and cuts every proxied connection.
    pub fn stop(&mut self) {
        if let Some((stop, thread)) = self.running.take() {
            stop.store(true, Ordering::SeqCst);
            thread.join().unwrap();
        }
        for c in self.connections.lock().unwrap().drain(..) {
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
        let stopping = Arc::clone(&stop);
        let connections = Arc::clone(&self.connections);
        let target = self.target;
        let thread = std::thread::spawn(move || {
            while !stopping.load(Ordering::SeqCst) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                client.set_nonblocking(false).unwrap();
                let Ok(upstream) = TcpStream::connect(target) else {
                    continue;
                };
                let mut held = connections.lock().unwrap();
                held.push(client.try_clone().unwrap());
                held.push(upstream.try_clone().unwrap());
                pipe(client.try_clone().unwrap(), upstream.try_clone().unwrap());
                pipe(upstream, client);
            }
        });
        self.running = Some((stop, thread));
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Write);
    });
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.stop();
    }
}
