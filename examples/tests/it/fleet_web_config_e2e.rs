//! End to end: `gym-fleet --web-config` serves every process's `/metrics`
//! over TLS with basic auth (the children get the file through
//! `GYM_METRICS_WEB_CONFIG_FILE`), and the scrape configuration that
//! `--prometheus-config` writes lets a real Prometheus scrape all of them:
//! every target up over https. Certificates and hash made by the test.
#![cfg(all(feature = "prom", not(feature = "noop")))]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gym_testkit::{free_port_block, http_get, require, Prometheus, Tool};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};

/// Orchestrator, one server, one agent.
const PROCESSES: u16 = 3;

/// The fleet, killed by PID if the test ends before it does.
struct Fleet(Child);

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn every_process_serves_https_with_basic_auth_and_the_written_config_scrapes_them() {
    if gym_testkit::ran_in_child() {
        return;
    }
    require(Tool::Prometheus);
    let dir = Dir(std::env::temp_dir().join(format!("gym-fleet-web-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let mut ca_params = CertificateParams::new(Vec::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let server_key = KeyPair::generate().unwrap();
    let server_cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&server_key, &issuer)
        .unwrap();
    write("server.crt", &server_cert.pem());
    write("server.key", &server_key.serialize_pem());
    let ca_file = write("ca.crt", &ca_cert.pem());
    let password_file = write("password", "fleet-secret\n");
    let web = write(
        "web.yml",
        &format!(
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n\
             basic_auth_users:\n  prometheus: '{}'\n",
            bcrypt::hash("fleet-secret", 4).unwrap()
        ),
    );
    let scrape_config = dir.0.join("prometheus.yml");
    let base = free_port_block(PROCESSES);
    let mut fleet = Fleet(
        Command::new(env!("CARGO_BIN_EXE_gym-fleet"))
            .args([
                "--servers",
                "1",
                "--agents",
                "1",
                "--duration",
                "20",
                "--seed",
                "7",
            ])
            .args(["--generate-ms", "50..100", "--verify-ms", "10..20"])
            .arg("--metrics-port")
            .arg(base.to_string())
            .arg("--web-config")
            .arg(&web)
            .arg("--prometheus-config")
            .arg(&scrape_config)
            .arg("--scrape-ca-file")
            .arg(&ca_file)
            .arg("--scrape-password-file")
            .arg(&password_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let written = loop {
        if let Ok(text) = std::fs::read_to_string(&scrape_config) {
            if text.contains("http_sd_configs:") {
                break text;
            }
        }
        assert!(
            fleet.0.try_wait().unwrap().is_none(),
            "gym-fleet exited before writing its scrape configuration"
        );
        assert!(Instant::now() < deadline, "no scrape configuration written");
        std::thread::sleep(Duration::from_millis(100));
    };
    for expected in [
        "scheme: https",
        &format!("ca_file: '{}'", ca_file.display()),
        "username: 'prometheus'",
        &format!("password_file: '{}'", password_file.display()),
    ] {
        assert!(
            written.contains(expected),
            "{expected} missing in\n{written}"
        );
    }

    // A child's /metrics speaks TLS only: plain HTTP gets no exposition.
    let child_port = base + 1;
    let plain = http_get(&format!("http://127.0.0.1:{child_port}/metrics"), &[]);
    assert!(
        !matches!(plain, Ok((200, _, _))),
        "a child served plain HTTP: {plain:?}"
    );

    let prometheus = Prometheus::start_with_config(&written).expect("prometheus starts");
    let up = prometheus
        .wait_for(r#"up{job="gym-fleet"}"#, Duration::from_secs(20), |s| {
            s.len() == usize::from(PROCESSES) && s.iter().all(|s| s.value == 1.0)
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));
    assert_eq!(up.len(), usize::from(PROCESSES));
    let size = prometheus
        .wait_for("gym_servers_active", Duration::from_secs(10), |s| {
            s.len() == 1 && s[0].value == 1.0
        })
        .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log_tail()));
    assert_eq!(size[0].value, 1.0, "one resources server");
    drop(prometheus);
    // The fleet's own read-back of its children needs no credentials: it
    // runs to its end and exits cleanly.
    let status = fleet.0.wait().unwrap();
    let mut stderr = String::new();
    if let Some(mut e) = fleet.0.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    assert!(status.success(), "gym-fleet failed: {status}\n{stderr}");
}
