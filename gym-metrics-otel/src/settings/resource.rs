//! The resource every export carries: who this process is.

use gym_metrics_api::Role;
use gym_metrics_kit::env::GymEnv;
use opentelemetry::KeyValue;
use opentelemetry_sdk::resource::TelemetryResourceDetector;
use opentelemetry_sdk::Resource;

/// `telemetry.sdk.*`, then the user's attributes, then ours, which win:
/// NeMo Gym's ([`GymEnv::resource_attributes`]: `service.name` =
/// `<base or "nemo-gym">/<role name>`, `nemo.gym.server.name`,
/// `nemo.gym.server.type`, `nemo.gym.service_group`, `nemo.run.id`, and
/// `gym.role`) and a `service.instance.id` unique to this process.
///
/// No process environment is read here: the user's attributes come from the
/// builder (which [`crate::OtelBuilder::from_env`] fills).
pub(crate) fn build_resource(
    role: &Role,
    service_name_base: Option<&str>,
    user_attributes: &[(String, String)],
    instance_id: String,
    gym: &GymEnv,
) -> Resource {
    let ours = gym
        .resource_attributes(role, service_name_base)
        .into_iter()
        .map(|(k, v)| KeyValue::new(k, v))
        .chain([KeyValue::new("service.instance.id", instance_id)]);
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
            &GymEnv::read(|n| (n == "NEMO_GYM_OTEL_RUN_ID").then(|| "run-3".to_string())).unwrap(),
        );
        assert_eq!(get(&r, "service.name").as_deref(), Some("lab/math-0"));
        assert_eq!(get(&r, "nemo.gym.service_group").as_deref(), Some("lab"));
        assert_eq!(get(&r, "nemo.run.id").as_deref(), Some("run-3"));
        assert_eq!(get(&r, "nemo.gym.server.name").as_deref(), Some("math-0"));
        assert_eq!(get(&r, "service.instance.id").as_deref(), Some("id-1"));
        assert_eq!(get(&r, "team").as_deref(), Some("rl"));
        assert_eq!(get(&r, "gym.role").as_deref(), Some("server"));
        assert_eq!(
            get(&r, "nemo.gym.server.type").as_deref(),
            Some("resources")
        );
        assert_eq!(get(&r, "telemetry.sdk.language").as_deref(), Some("rust"));
    }

    #[test]
    fn default_base_is_nemo_gym() {
        let r = build_resource(
            &Role::orchestrator(),
            None,
            &[],
            "x".into(),
            &GymEnv::default(),
        );
        assert_eq!(
            get(&r, "service.name").as_deref(),
            Some("nemo-gym/orchestrator")
        );
        assert_eq!(
            get(&r, "nemo.gym.server.type").as_deref(),
            Some("orchestrator")
        );
    }
}
