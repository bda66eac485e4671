//! TLS settings are checked at start-up: a missing or unreadable file, a PEM
//! without a certificate or key, a key that does not match its certificate,
//! or half a client identity is a configuration error naming the setting or
//! variable and the path, never a panic or a failure at the first export;
//! the key's contents are never printed.
#![cfg(all(
    feature = "tls",
    any(feature = "grpc", feature = "http-proto", feature = "http-json")
))]

use std::path::Path;

use crate::support::tls::Pki;
use gym_metrics_otel::{BuildError, ConfigError, OtelBuilder, OtlpProtocol};

fn config_error(builder: OtelBuilder) -> ConfigError {
    match builder.build() {
        Err(BuildError::Config(e)) => e,
        Err(other) => panic!("expected a configuration error, got {other}"),
        Ok(_) => panic!("expected a configuration error, got a running pipeline"),
    }
}

/// Every transport this build has, to an https endpoint nobody listens on
/// (nothing is sent: the files are checked before the exporter exists).
fn both(configure: impl Fn(OtelBuilder) -> OtelBuilder) -> Vec<ConfigError> {
    [
        (OtlpProtocol::HttpProtobuf, "https://127.0.0.1:9/v1/metrics"),
        (OtlpProtocol::HttpJson, "https://127.0.0.1:9/v1/metrics"),
        (OtlpProtocol::Grpc, "https://127.0.0.1:9"),
    ]
    .into_iter()
    .filter(|(protocol, _)| protocol.is_built())
    .map(|(protocol, endpoint)| {
        config_error(configure(
            OtelBuilder::new().protocol(protocol).endpoint(endpoint),
        ))
    })
    .collect()
}

fn from_env(vars: &[(&str, &Path)]) -> ConfigError {
    let env = |name: &str| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.display().to_string())
            .or_else(|| {
                (name == "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
                    .then(|| "https://127.0.0.1:9/v1/metrics".to_string())
            })
    };
    config_error(OtelBuilder::from_env_lookup(env).unwrap())
}

fn assert_names(e: &ConfigError, variable: &str, path: &Path, says: &str) {
    let text = e.to_string();
    assert_eq!(e.variable(), variable, "{text}");
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains(says), "expected {says:?} in {text}");
}

#[test]
fn a_missing_or_unreadable_file_names_the_setting() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let pki = Pki::new("missing");
    let missing = pki.dir().join("no-such-ca.pem");
    for e in both(|b| b.certificate(&missing)) {
        assert_names(&e, "certificate", &missing, "readable");
    }
    // A directory cannot be read as a file.
    let e = from_env(&[("OTEL_EXPORTER_OTLP_CERTIFICATE", pki.dir())]);
    assert_names(&e, "OTEL_EXPORTER_OTLP_CERTIFICATE", pki.dir(), "readable");
    let e = from_env(&[
        ("OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE", &missing),
        ("OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY", &pki.client_key),
    ]);
    assert_names(
        &e,
        "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE",
        &missing,
        "readable",
    );
}

#[test]
fn a_pem_without_a_certificate_is_rejected() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let pki = Pki::new("nocert");
    let garbage = pki.file("garbage.pem", "not a certificate\n");
    for e in both(|b| b.certificate(&pki.client_key)) {
        assert_names(&e, "certificate", &pki.client_key, "CERTIFICATE");
    }
    let e = from_env(&[("OTEL_EXPORTER_OTLP_CERTIFICATE", &garbage)]);
    assert_names(
        &e,
        "OTEL_EXPORTER_OTLP_CERTIFICATE",
        &garbage,
        "CERTIFICATE",
    );
    for e in both(|b| {
        b.client_certificate(&pki.client_key)
            .client_key(&pki.client_key)
    }) {
        assert_names(&e, "client_certificate", &pki.client_key, "CERTIFICATE");
    }
}

#[test]
fn a_key_file_without_a_key_is_rejected() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let pki = Pki::new("nokey");
    for e in both(|b| {
        b.client_certificate(&pki.client_cert)
            .client_key(&pki.client_cert)
    }) {
        assert_names(&e, "client_key", &pki.client_cert, "private key");
    }
}

#[test]
fn a_key_that_does_not_match_its_certificate_is_rejected_without_printing_it() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let pki = Pki::new("mismatch");
    let key_text = std::fs::read_to_string(&pki.other_key).unwrap();
    let key_body = key_text.lines().nth(1).unwrap().to_string();
    for e in both(|b| {
        b.client_certificate(&pki.client_cert)
            .client_key(&pki.other_key)
    }) {
        assert_names(&e, "client_key", &pki.other_key, "does not match");
        assert!(e.to_string().contains("client_certificate"), "{e}");
        assert!(
            !format!("{e} {e:?}").contains(&key_body),
            "the key leaked: {e}"
        );
    }
    let e = from_env(&[
        ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &pki.client_cert),
        ("OTEL_EXPORTER_OTLP_CLIENT_KEY", &pki.other_key),
    ]);
    assert_names(
        &e,
        "OTEL_EXPORTER_OTLP_CLIENT_KEY",
        &pki.other_key,
        "does not match",
    );
    // The matching pair is accepted: the check is not a blanket refusal.
    let (_recorder, guard) = OtelBuilder::new()
        .endpoint("https://127.0.0.1:9/v1/metrics")
        .certificate(&pki.ca)
        .client_certificate(&pki.client_cert)
        .client_key(&pki.client_key)
        .build()
        .unwrap();
    drop(guard);
}

#[test]
fn half_a_client_identity_is_rejected() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let pki = Pki::new("half");
    for e in both(|b| b.client_certificate(&pki.client_cert)) {
        assert_names(&e, "client_certificate", &pki.client_cert, "CLIENT_KEY");
    }
    let e = from_env(&[("OTEL_EXPORTER_OTLP_CLIENT_KEY", &pki.client_key)]);
    assert_names(
        &e,
        "OTEL_EXPORTER_OTLP_CLIENT_KEY",
        &pki.client_key,
        "CLIENT_CERTIFICATE",
    );
}

#[test]
fn a_bad_insecure_value_names_the_variable() {
    if gym_testkit::ran_in_child() {
        return;
    }
    let e = OtelBuilder::from_env_lookup(|name| {
        (name == "OTEL_EXPORTER_OTLP_INSECURE").then(|| "maybe".to_string())
    })
    .unwrap_err();
    assert_eq!(e.variable(), "OTEL_EXPORTER_OTLP_INSECURE");
    assert!(e.to_string().contains("\"maybe\""), "{e}");
}

#[test]
fn an_endless_file_is_refused_at_the_size_bound() {
    if gym_testkit::ran_in_child() {
        return;
    }
    // Read whole, `/dev/zero` took 18 GB of memory in 51 s (issue 26).
    let started = std::time::Instant::now();
    let zero = Path::new("/dev/zero");
    let e = from_env(&[("OTEL_EXPORTER_OTLP_CERTIFICATE", zero)]);
    assert_names(&e, "OTEL_EXPORTER_OTLP_CERTIFICATE", zero, "more than");
    for e in both(|b| b.certificate(zero)) {
        assert_names(&e, "certificate", zero, "more than");
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}
