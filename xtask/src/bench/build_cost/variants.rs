//! The consumers `cargo xtask bench build-cost` builds: one row of the
//! table each (its `[dependencies]` and its `main.rs`), every program
//! registering one histogram, recording one observation and rendering,
//! serving or exporting it, so that each pulls in its whole path.

/// One minimal consumer.
pub struct Variant {
    /// Its name in the table and for `--only`; its package is `bc-<name>`.
    pub name: &'static str,
    /// What it depends on, in words.
    pub what: &'static str,
    /// Its `[dependencies]` lines; `{root}` stands for our workspace root.
    pub deps: &'static str,
    /// Its `main.rs`, the parts joined by a newline.
    pub program: &'static [&'static str],
}

/// The API crate (for `Role` and the `Recorder` trait) and one backend.
macro_rules! gym {
    ($backend:literal, $features:literal) => {
        concat!(
            "gym-metrics-api = { path = \"{root}/gym-metrics-api\" }\n",
            "gym-metrics-",
            $backend,
            " = { path = \"{root}/gym-metrics-",
            $backend,
            "\"",
            $features,
            " }",
        )
    };
}

/// A plain hyper 1 server on tokio, as an application would write one.
macro_rules! hyper_stack {
    () => {
        "hyper = { version = \"1\", default-features = false, features = [\"server\", \"http1\"] }
hyper-util = { version = \"0.1\", default-features = false, features = [\"tokio\"] }
tokio = { version = \"1\", default-features = false, features = [\"rt\", \"net\"] }"
    };
}

/// The OpenTelemetry API and SDK with metrics only.
macro_rules! otel_sdk {
    () => {
        "opentelemetry = { version = \"0.33\", default-features = false, features = [\"metrics\"] }
opentelemetry_sdk = { version = \"0.33\", default-features = false, features = [\"metrics\"] }
"
    };
}

/// Every variant, in the table's order.
pub const VARIANTS: [Variant; 10] = [
    Variant {
        name: "prom-default",
        what: "gym-metrics-prom, default features",
        deps: gym!("prom", ""),
        program: &[PROM],
    },
    Variant {
        name: "prom-lean",
        what: "gym-metrics-prom, no default features",
        deps: gym!("prom", ", default-features = false"),
        program: &[PROM],
    },
    Variant {
        name: "otel-default",
        what: "gym-metrics-otel, default features",
        deps: gym!("otel", ""),
        program: &[OTEL],
    },
    Variant {
        name: "otel-http-proto",
        what: "gym-metrics-otel, `http-proto` only",
        deps: gym!("otel", ", default-features = false, features = [\"http-proto\"]"),
        program: &[OTEL],
    },
    Variant {
        name: "otel-grpc",
        what: "gym-metrics-otel, `grpc` only",
        deps: gym!("otel", ", default-features = false, features = [\"grpc\"]"),
        program: &[OTEL],
    },
    Variant {
        name: "metrics-exporter-prometheus",
        what: "metrics-exporter-prometheus 0.18 (`http-listener`), metrics 0.24",
        deps: "metrics = \"0.24\"
metrics-exporter-prometheus = { version = \"0.18\", default-features = false, features = [\"http-listener\"] }",
        program: &[METRICS_EXPORTER],
    },
    Variant {
        name: "prometheus-hyper",
        what: "prometheus 0.14 on hyper 1",
        deps: concat!(
            "prometheus = { version = \"0.14\", default-features = false }\n",
            hyper_stack!()
        ),
        program: &[PROMETHEUS, HYPER_SERVE],
    },
    Variant {
        name: "prometheus-client-hyper",
        what: "prometheus-client 0.26 on hyper 1",
        deps: concat!("prometheus-client = \"0.26\"\n", hyper_stack!()),
        program: &[PROMETHEUS_CLIENT, HYPER_SERVE],
    },
    Variant {
        name: "otlp-http-proto",
        what: "opentelemetry-otlp 0.33, http/protobuf on reqwest's blocking client",
        deps: concat!(
            otel_sdk!(),
            "opentelemetry-otlp = { version = \"0.33\", default-features = false, features = [\"http-proto\", \"reqwest-blocking-client\", \"metrics\"] }"
        ),
        program: &[OTLP_HTTP],
    },
    Variant {
        name: "otlp-grpc-tonic",
        what: "opentelemetry-otlp 0.33, gRPC on tonic, tokio",
        deps: concat!(
            otel_sdk!(),
            "opentelemetry-otlp = { version = \"0.33\", default-features = false, features = [\"grpc-tonic\", \"metrics\"] }
tokio = { version = \"1\", default-features = false, features = [\"rt-multi-thread\"] }"
        ),
        program: &[OTLP_GRPC],
    },
];

/// gym-metrics-prom: installed, serving `/metrics` from its own thread, as
/// the peers serve theirs.
const PROM: &str = r#"use gym_metrics_api::Role;
use gym_metrics_prom::PrometheusBuilder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let guard = PrometheusBuilder::new().role(Role::server("a", "resources")).install()?;
    gym_metrics_api::record_verify(std::time::Duration::from_millis(1), true);
    guard.shutdown()?;
    Ok(())
}"#;

/// gym-metrics-otel: the console exporter (the OTLP ones stay selectable at run time).
const OTEL: &str = r#"use gym_metrics_api::backend::Recorder;
use gym_metrics_api::Role;
use gym_metrics_otel::{MetricsExporter, OtelBuilder};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (recorder, guard) = OtelBuilder::new()
        .role(Role::server("a", "resources"))
        .exporter(MetricsExporter::Console)
        .build()?;
    recorder.record_verify_ms(1.0, true);
    guard.shutdown()?;
    Ok(())
}"#;

/// metrics-exporter-prometheus: its own listener, on a runtime of its own.
const METRICS_EXPORTER: &str = r#"fn main() -> Result<(), Box<dyn std::error::Error>> {
    metrics_exporter_prometheus::PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], 0))
        .install()?;
    metrics::histogram!("x").record(1.0);
    Ok(())
}"#;

/// prometheus: a registry's text exposition, served by [`HYPER_SERVE`].
const PROMETHEUS: &str = r#"fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = prometheus::Registry::new();
    let histogram = prometheus::Histogram::with_opts(prometheus::HistogramOpts::new("x", "x"))?;
    registry.register(Box::new(histogram.clone()))?;
    histogram.observe(1.0);
    serve(move || {
        let families = registry.gather();
        prometheus::TextEncoder::new().encode_to_string(&families).unwrap_or_default()
    })?;
    Ok(())
}"#;

/// prometheus-client: a registry's text exposition, served by [`HYPER_SERVE`].
const PROMETHEUS_CLIENT: &str = r#"use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut registry = prometheus_client::registry::Registry::default();
    let histogram = Histogram::new(exponential_buckets(1.0, 2.0, 10));
    registry.register("x", "x", histogram.clone());
    histogram.observe(1.0);
    let registry = std::sync::Arc::new(registry);
    serve(move || {
        let mut text = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
        text
    })?;
    Ok(())
}"#;

/// `serve(render)`: every connection to 127.0.0.1:0 answered with `render()`
/// by hyper 1 on a current-thread runtime; returns once the listener is up.
const HYPER_SERVE: &str = r#"
fn serve(render: impl Fn() -> String + Clone + Send + 'static) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let render = render.clone();
                let service = hyper::service::service_fn(move |_: hyper::Request<hyper::body::Incoming>| {
                    let body = render();
                    async move { Ok::<_, std::convert::Infallible>(hyper::Response::new(body)) }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                tokio::spawn(hyper::server::conn::http1::Builder::new().serve_connection(io, service));
            }
        });
        tokio::task::yield_now().await;
        Ok(())
    })
}"#;

/// The SDK's periodic reader exporting with `exporter` until shutdown.
macro_rules! otlp_program {
    ($prelude:literal, $exporter:literal) => {
        concat!(
            "use opentelemetry::metrics::MeterProvider as _;

fn main() -> Result<(), Box<dyn std::error::Error>> {
",
            $prelude,
            "    let exporter = opentelemetry_otlp::MetricExporter::builder().",
            $exporter,
            "().build()?;
    let provider = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_periodic_exporter(exporter)
        .build();
    provider.meter(\"x\").f64_histogram(\"x\").build().record(1.0, &[]);
    if let Err(e) = provider.shutdown() {
        eprintln!(\"{e}\");
    }
    Ok(())
}"
        )
    };
}

/// opentelemetry-otlp over http/protobuf: no runtime needed.
const OTLP_HTTP: &str = otlp_program!("", "with_http");

/// opentelemetry-otlp over gRPC: tonic's channel needs a tokio runtime.
const OTLP_GRPC: &str = otlp_program!(
    "    let runtime = tokio::runtime::Runtime::new()?;
    let _entered = runtime.enter();
",
    "with_tonic"
);
