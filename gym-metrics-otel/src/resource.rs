//! The resource every export carries: who this process is.

use gym_metrics_api::Role;
use opentelemetry::KeyValue;
use opentelemetry_sdk::resource::TelemetryResourceDetector;
use opentelemetry_sdk::Resource;

/// `telemetry.sdk.*`, then the user's attributes, then ours, which win:
/// `service.name` = `<base or "gym">/<role name>`, `service.instance.id`,
/// and the role's `gym.*` attributes.
///
/// No process environment is read here: the user's attributes come from the
/// builder (which [`crate::OtelBuilder::from_env`] fills).
pub(crate) fn build_resource(
    role: &Role,
    service_name_base: Option<&str>,
    user_attributes: &[(String, String)],
    instance_id: String,
) -> Resource {
    let ours = [
        KeyValue::new("service.name", role.service_name(service_name_base)),
        KeyValue::new("service.instance.id", instance_id),
    ]
    .into_iter()
    .chain(
        role.resource_attributes()
            .into_iter()
            .map(|(k, v)| KeyValue::new(k, v)),
    );
    Resource::builder_empty()
        .with_detector(Box::new(TelemetryResourceDetector))
        .with_attributes(
            user_attributes
                .iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
        )
        .with_attributes(ours)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::Key;

    fn get(r: &Resource, key: &'static str) -> Option<String> {
        r.get(&Key::from_static_str(key)).map(|v| v.to_string())
    }

    #[test]
    fn ours_win_and_user_attributes_stay() {
        let user = [
            ("service.name".to_string(), "theirs".to_string()),
            ("team".to_string(), "rl".to_string()),
        ];
        let r = build_resource(
            &Role::server("math-0", "resources"),
            Some("lab"),
            &user,
            "id-1".into(),
        );
        assert_eq!(get(&r, "service.name").as_deref(), Some("lab/math-0"));
        assert_eq!(get(&r, "service.instance.id").as_deref(), Some("id-1"));
        assert_eq!(get(&r, "team").as_deref(), Some("rl"));
        assert_eq!(get(&r, "gym.role").as_deref(), Some("server"));
        assert_eq!(get(&r, "gym.server.type").as_deref(), Some("resources"));
        assert_eq!(get(&r, "telemetry.sdk.language").as_deref(), Some("rust"));
    }

    #[test]
    fn default_base_is_gym() {
        let r = build_resource(&Role::orchestrator(), None, &[], "x".into());
        assert_eq!(get(&r, "service.name").as_deref(), Some("gym/orchestrator"));
    }
}
