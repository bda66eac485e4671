//! The OTLP transport: `OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL`, and which
//! transports this build contains (the Cargo features `grpc`, `http-proto`
//! and `http-json`).

use gym_metrics_kit::env::parse_choice;

use crate::{BuildError, ConfigError};

/// The OTLP transport protocol.
///
/// Each protocol is built in by a Cargo feature of this crate (see
/// [`OtlpProtocol::cargo_feature`]); all three are on by default. Selecting
/// one whose feature is off is a start-up error,
/// [`crate::BuildError::TransportNotBuilt`].
///
/// ```
/// use gym_metrics_otel::OtlpProtocol;
/// assert_eq!(OtlpProtocol::default(), OtlpProtocol::HttpProtobuf);
/// assert_eq!(OtlpProtocol::parse("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc").unwrap(), OtlpProtocol::Grpc);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OtlpProtocol {
    /// OTLP/HTTP with protobuf bodies (the default). Needs no async runtime.
    /// Cargo feature `http-proto`.
    #[default]
    HttpProtobuf,
    /// OTLP/HTTP with JSON bodies (the protocol's JSON mapping), for
    /// receivers or proxies that only take JSON. Larger on the wire than
    /// protobuf; otherwise the same as [`OtlpProtocol::HttpProtobuf`].
    /// Cargo feature `http-json`.
    HttpJson,
    /// OTLP/gRPC. The backend drives it from a thread of its own. Cargo
    /// feature `grpc`.
    Grpc,
}

impl OtlpProtocol {
    /// Parses `http/protobuf`, `http/json` or `grpc` (case-insensitive);
    /// `variable` names the source in the error. Each parses in every build:
    /// a transport whose feature is off is refused when the backend starts.
    ///
    /// # Errors
    /// Any other value, naming `variable` and the value.
    ///
    /// ```
    /// use gym_metrics_otel::OtlpProtocol;
    /// assert_eq!(OtlpProtocol::parse("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json").unwrap(), OtlpProtocol::HttpJson);
    /// assert!(OtlpProtocol::parse("OTEL_EXPORTER_OTLP_PROTOCOL", "http").is_err());
    /// ```
    pub fn parse(variable: &'static str, value: &str) -> Result<Self, ConfigError> {
        let words = [
            ("http/protobuf", OtlpProtocol::HttpProtobuf),
            ("http/json", OtlpProtocol::HttpJson),
            ("grpc", OtlpProtocol::Grpc),
        ];
        parse_choice(variable, value, &words, "")
    }

    /// The endpoint used when none is configured.
    ///
    /// ```
    /// use gym_metrics_otel::OtlpProtocol;
    /// assert_eq!(OtlpProtocol::Grpc.default_endpoint(), "http://localhost:4317");
    /// assert_eq!(OtlpProtocol::HttpJson.default_endpoint(), "http://localhost:4318/v1/metrics");
    /// ```
    pub fn default_endpoint(self) -> &'static str {
        match self {
            OtlpProtocol::HttpProtobuf | OtlpProtocol::HttpJson => {
                "http://localhost:4318/v1/metrics"
            }
            OtlpProtocol::Grpc => "http://localhost:4317",
        }
    }

    /// Whether this is one of the OTLP/HTTP encodings (the endpoint is a
    /// URL with a path; a base endpoint gets `/v1/metrics` appended).
    ///
    /// ```
    /// use gym_metrics_otel::OtlpProtocol;
    /// assert!(OtlpProtocol::HttpJson.is_http());
    /// assert!(!OtlpProtocol::Grpc.is_http());
    /// ```
    pub fn is_http(self) -> bool {
        matches!(self, OtlpProtocol::HttpProtobuf | OtlpProtocol::HttpJson)
    }

    /// The protocol's name in `OTEL_EXPORTER_OTLP_PROTOCOL`.
    ///
    /// ```
    /// use gym_metrics_otel::OtlpProtocol;
    /// assert_eq!(OtlpProtocol::HttpProtobuf.name(), "http/protobuf");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            OtlpProtocol::HttpProtobuf => "http/protobuf",
            OtlpProtocol::HttpJson => "http/json",
            OtlpProtocol::Grpc => "grpc",
        }
    }

    /// The Cargo feature of gym-metrics-otel that builds this transport in.
    ///
    /// ```
    /// use gym_metrics_otel::OtlpProtocol;
    /// assert_eq!(OtlpProtocol::Grpc.cargo_feature(), "grpc");
    /// assert_eq!(OtlpProtocol::HttpProtobuf.cargo_feature(), "http-proto");
    /// ```
    pub fn cargo_feature(self) -> &'static str {
        match self {
            OtlpProtocol::HttpProtobuf => "http-proto",
            OtlpProtocol::HttpJson => "http-json",
            OtlpProtocol::Grpc => "grpc",
        }
    }

    /// Whether this build contains the transport: its Cargo feature is on.
    ///
    /// ```
    /// use gym_metrics_otel::OtlpProtocol;
    /// assert_eq!(OtlpProtocol::Grpc.is_built(), cfg!(feature = "grpc"));
    /// ```
    pub fn is_built(self) -> bool {
        Transport::of(self).is_some()
    }
}

/// Every protocol, in the order a default falls back through when its own
/// transport is not built: http/protobuf, then gRPC, then http/json.
const FALLBACK_ORDER: [OtlpProtocol; 3] = [
    OtlpProtocol::HttpProtobuf,
    OtlpProtocol::Grpc,
    OtlpProtocol::HttpJson,
];

/// The protocol used when none is set: the crate's default, http/protobuf,
/// if it is built, else the first built one of [`FALLBACK_ORDER`].
pub(crate) fn built_default() -> OtlpProtocol {
    FALLBACK_ORDER
        .into_iter()
        .find(|p| p.is_built())
        .unwrap_or_default()
}

/// What the error of a transport that is not built suggests instead.
pub(crate) fn built_alternatives() -> String {
    let built: Vec<&str> = FALLBACK_ORDER
        .into_iter()
        .filter(|p| p.is_built())
        .map(OtlpProtocol::name)
        .collect();
    if built.is_empty() {
        "or set OTEL_METRICS_EXPORTER to console or none (this build has no OTLP transport)".into()
    } else {
        format!(
            "or select one this build has: {} (OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL or the builder's protocol)",
            built.join(", ")
        )
    }
}

/// An OTLP transport this build contains: one variant per transport
/// feature that is on (none at all in a build without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// OTLP/HTTP with protobuf bodies.
    #[cfg(feature = "http-proto")]
    HttpProtobuf,
    /// OTLP/HTTP with JSON bodies.
    #[cfg(feature = "http-json")]
    HttpJson,
    /// OTLP/gRPC.
    #[cfg(feature = "grpc")]
    Grpc,
}

impl Transport {
    /// `protocol`'s transport, if this build contains it.
    pub(crate) fn of(protocol: OtlpProtocol) -> Option<Self> {
        match protocol {
            #[cfg(feature = "http-proto")]
            OtlpProtocol::HttpProtobuf => Some(Transport::HttpProtobuf),
            #[cfg(not(feature = "http-proto"))]
            OtlpProtocol::HttpProtobuf => None,
            #[cfg(feature = "http-json")]
            OtlpProtocol::HttpJson => Some(Transport::HttpJson),
            #[cfg(not(feature = "http-json"))]
            OtlpProtocol::HttpJson => None,
            #[cfg(feature = "grpc")]
            OtlpProtocol::Grpc => Some(Transport::Grpc),
            #[cfg(not(feature = "grpc"))]
            OtlpProtocol::Grpc => None,
        }
    }

    /// The protocol this transport speaks.
    pub(crate) fn protocol(self) -> OtlpProtocol {
        match self {
            #[cfg(feature = "http-proto")]
            Transport::HttpProtobuf => OtlpProtocol::HttpProtobuf,
            #[cfg(feature = "http-json")]
            Transport::HttpJson => OtlpProtocol::HttpJson,
            #[cfg(feature = "grpc")]
            Transport::Grpc => OtlpProtocol::Grpc,
        }
    }
}

/// The builder's protocol, and who chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProtocolSetting {
    pub(crate) protocol: OtlpProtocol,
    /// The variable or builder setting that chose it, with its value as
    /// given; `None` for a default (the crate's, or NeMo Gym's gRPC).
    pub(crate) chosen_by: Option<(&'static str, String)>,
}

impl ProtocolSetting {
    /// A default: another built transport stands in if this one is not built.
    pub(crate) fn default_of(protocol: OtlpProtocol) -> Self {
        Self {
            protocol,
            chosen_by: None,
        }
    }

    /// Chosen by `variable` (or a builder setting) with the text `value`.
    pub(crate) fn chosen(protocol: OtlpProtocol, variable: &'static str, value: &str) -> Self {
        Self {
            protocol,
            chosen_by: Some((variable, value.to_string())),
        }
    }

    /// The transport to export with. A protocol someone chose must be built.
    /// A default that is not built gives way to the first built one of
    /// http/protobuf, gRPC, http/json (logged at `info`).
    ///
    /// # Errors
    /// [`BuildError::TransportNotBuilt`]: the chosen protocol's feature is
    /// off (naming the variable, its value and the feature), or the build
    /// has no transport at all (naming `OTEL_METRICS_EXPORTER`).
    pub(crate) fn transport(&self) -> Result<Transport, BuildError> {
        if let Some(&(variable, ref value)) = self.chosen_by.as_ref() {
            return Transport::of(self.protocol).ok_or_else(|| BuildError::TransportNotBuilt {
                variable,
                value: value.clone(),
                feature: self.protocol.cargo_feature(),
            });
        }
        let preferred = self.protocol;
        std::iter::once(preferred)
            .chain(FALLBACK_ORDER)
            .find_map(Transport::of)
            .inspect(|transport| {
                if transport.protocol() != preferred {
                    log::info!(
                        target: crate::export::export_log::LOG_TARGET,
                        "OTLP over {} (the default) is not in this build (Cargo feature `{}` off): exporting over {}, which is",
                        preferred.name(),
                        preferred.cargo_feature(),
                        transport.protocol().name(),
                    );
                }
            })
            .ok_or_else(|| BuildError::TransportNotBuilt {
                variable: "exporter (OTEL_METRICS_EXPORTER)",
                value: "otlp".into(),
                feature: preferred.cargo_feature(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [OtlpProtocol; 3] = [
        OtlpProtocol::HttpProtobuf,
        OtlpProtocol::HttpJson,
        OtlpProtocol::Grpc,
    ];

    #[test]
    fn each_protocol_is_built_exactly_when_its_feature_is_on() {
        assert_eq!(
            OtlpProtocol::HttpProtobuf.is_built(),
            cfg!(feature = "http-proto")
        );
        assert_eq!(
            OtlpProtocol::HttpJson.is_built(),
            cfg!(feature = "http-json")
        );
        assert_eq!(OtlpProtocol::Grpc.is_built(), cfg!(feature = "grpc"));
        for protocol in ALL.into_iter().filter(|p| p.is_built()) {
            let transport = Transport::of(protocol).map(Transport::protocol);
            assert_eq!(transport, Some(protocol));
        }
    }

    #[test]
    fn a_chosen_protocol_is_used_or_refused_naming_the_variable_and_the_feature() {
        for protocol in ALL {
            let setting = ProtocolSetting::chosen(protocol, "OTEL_EXPORTER_OTLP_PROTOCOL", "GRPC ");
            match setting.transport() {
                Ok(transport) => assert_eq!(transport.protocol(), protocol),
                Err(BuildError::TransportNotBuilt {
                    variable,
                    value,
                    feature,
                }) => {
                    assert!(!protocol.is_built());
                    assert_eq!(variable, "OTEL_EXPORTER_OTLP_PROTOCOL");
                    assert_eq!(value, "GRPC ");
                    assert_eq!(feature, protocol.cargo_feature());
                }
                Err(other) => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_default_gives_way_to_a_built_transport() {
        for preferred in ALL {
            let chosen = ProtocolSetting::default_of(preferred).transport();
            let any_built = ALL.into_iter().any(OtlpProtocol::is_built);
            match chosen {
                Ok(transport) if preferred.is_built() => {
                    assert_eq!(transport.protocol(), preferred)
                }
                Ok(transport) => {
                    let first = FALLBACK_ORDER.into_iter().find(|p| p.is_built());
                    assert_eq!(Some(transport.protocol()), first);
                }
                Err(e) => {
                    assert!(!any_built, "{e}");
                    assert!(e.to_string().contains("console or none"), "{e}");
                }
            }
        }
        assert!(built_default().is_built() || !ALL.into_iter().any(OtlpProtocol::is_built));
    }
}
