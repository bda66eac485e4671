//! What NeMo Gym's settings ([`GymEnv`]) mean for this backend's exporter
//! and protocol, beside the `OTEL_*` variables.
//!
//! Gym's exporter (`NEMO_GYM_OTEL_EXPORTER`, else `NEMO_LENS_EXPORTER`) wins
//! over `OTEL_METRICS_EXPORTER`, except that `OTEL_SDK_DISABLED=true` (or
//! `OTEL_METRICS_EXPORTER=none`) still exports nothing. When Gym's
//! variables select OTLP and `OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL` is not
//! set, the protocol is Gym's default, gRPC (nemo-lens 0.1.0 resolves an
//! unset protocol to `grpc`, `nemo/lens/providers.py` `_resolve_otlp_protocol`),
//! so the collector Gym's orchestrator points its fleet at gets what it
//! gets from Gym's own servers (on `localhost:4317` unless an endpoint is set).

use gym_metrics_kit::env::GymEnv;
use gym_metrics_kit::env::GymExporter;

use crate::{MetricsExporter, OtlpProtocol};

/// The exporter and protocol after Gym's settings: `exporter` and
/// `protocol` are what the `OTEL_*` variables said (`None`: unset).
pub(crate) fn exporter_and_protocol(
    gym: &GymEnv,
    exporter: Option<MetricsExporter>,
    protocol: Option<OtlpProtocol>,
) -> (Option<MetricsExporter>, Option<OtlpProtocol>) {
    let exporter = match (exporter, gym.exporter()) {
        (Some(MetricsExporter::None), _) => Some(MetricsExporter::None),
        (_, Some(GymExporter::Otlp)) => Some(MetricsExporter::Otlp),
        (_, Some(GymExporter::Console)) => Some(MetricsExporter::Console),
        (otel, None) => otel,
    };
    let gym_selects_otlp = gym.selects_otlp() && exporter != Some(MetricsExporter::None);
    let protocol = match protocol {
        None if gym_selects_otlp => Some(OtlpProtocol::Grpc),
        protocol => protocol,
    };
    (exporter, protocol)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gym(vars: &[(&str, &str)]) -> GymEnv {
        GymEnv::read(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
        .unwrap()
    }

    #[test]
    fn gym_selecting_otlp_without_a_protocol_means_grpc() {
        for vars in [
            &[("NEMO_GYM_OTEL_ENABLED", "1")][..],
            &[("NEMO_GYM_OTEL_EXPORTER", "otlp")][..],
            &[
                ("NEMO_LENS_ENABLED", "true"),
                ("NEMO_LENS_EXPORTER", "OTLP"),
            ][..],
        ] {
            let (exporter, protocol) = exporter_and_protocol(&gym(vars), None, None);
            // Unset stays unset: the builder's default exporter is OTLP too.
            assert!(
                matches!(exporter, None | Some(MetricsExporter::Otlp)),
                "{vars:?}"
            );
            assert_eq!(protocol, Some(OtlpProtocol::Grpc), "{vars:?}");
        }
    }

    #[test]
    fn an_otel_protocol_wins_over_gyms_default() {
        let g = gym(&[("NEMO_GYM_OTEL_ENABLED", "1")]);
        let (_, protocol) = exporter_and_protocol(&g, None, Some(OtlpProtocol::HttpProtobuf));
        assert_eq!(protocol, Some(OtlpProtocol::HttpProtobuf));
    }

    #[test]
    fn without_gym_nothing_changes() {
        let (exporter, protocol) = exporter_and_protocol(&GymEnv::default(), None, None);
        assert_eq!((exporter, protocol), (None, None));
        let (exporter, _) =
            exporter_and_protocol(&GymEnv::default(), Some(MetricsExporter::Console), None);
        assert_eq!(exporter, Some(MetricsExporter::Console));
    }

    #[test]
    fn gyms_exporter_wins_over_otel_metrics_exporter_but_not_over_disabled() {
        let console = gym(&[("NEMO_GYM_OTEL_EXPORTER", "console")]);
        let (exporter, protocol) =
            exporter_and_protocol(&console, Some(MetricsExporter::Otlp), None);
        assert_eq!(exporter, Some(MetricsExporter::Console));
        assert_eq!(protocol, None, "console: no protocol chosen");
        let otlp = gym(&[("NEMO_GYM_OTEL_EXPORTER", "otlp")]);
        let (exporter, protocol) = exporter_and_protocol(&otlp, Some(MetricsExporter::None), None);
        assert_eq!(exporter, Some(MetricsExporter::None));
        assert_eq!(protocol, None);
    }
}
