//! The resource a process describes itself with, exported as `target_info`.

use std::collections::BTreeMap;

use gym_metrics_api::Role;
use gym_metrics_kit::env::GymEnv;

use gym_metrics_kit::naming::sanitize_label_name;
use gym_metrics_kit::resource::new_instance_id;

/// `telemetry.sdk.version`: the `opentelemetry_sdk` version whose resource the
/// OpenTelemetry path reports (the exposition-equality test pins it).
pub(crate) const TELEMETRY_SDK_VERSION: &str = "0.33.1";

/// Resource attributes by their OpenTelemetry key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resource {
    attributes: BTreeMap<String, String>,
}

impl Resource {
    /// The resource for `role`: SDK attributes, then `extra` (e.g. from
    /// `OTEL_RESOURCE_ATTRIBUTES`), then NeMo Gym's attributes
    /// ([`GymEnv::resource_attributes`]: `service.name`, `nemo.gym.*`,
    /// `nemo.run.id`, `gym.role`), which win. `service.instance.id` is
    /// generated, unique per process, unless `extra` carries one.
    pub(crate) fn new(
        role: &Role,
        service_base: Option<&str>,
        extra: &[(String, String)],
        gym: &GymEnv,
    ) -> Self {
        let mut attributes = BTreeMap::new();
        let mut put = |k: &str, v: String| {
            attributes.insert(k.to_string(), v);
        };
        put("telemetry.sdk.language", "rust".into());
        put("telemetry.sdk.name", "opentelemetry".into());
        put("telemetry.sdk.version", TELEMETRY_SDK_VERSION.into());
        for (k, v) in extra {
            put(k, v.clone());
        }
        for (k, v) in gym.resource_attributes(role, service_base) {
            put(k, v);
        }
        attributes
            .entry("service.instance.id".to_string())
            .or_insert_with(new_instance_id);
        Self { attributes }
    }

    /// The attribute `key`, if present.
    #[cfg(test)]
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }

    /// `target_info` labels: keys sanitized, sorted; keys that collide after
    /// sanitizing carry their values joined by `;` in original-key order (as
    /// OpenTelemetry's exporter does).
    pub(crate) fn label_pairs(&self) -> Vec<(String, String)> {
        let mut merged: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        // `attributes` iterates in original-key order already.
        for (key, value) in &self.attributes {
            merged
                .entry(sanitize_label_name(key))
                .or_default()
                .push(value);
        }
        merged
            .into_iter()
            .map(|(name, values)| (name, values.join(";")))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_and_service_name_win_over_extra_but_instance_id_is_kept() {
        let extra = vec![
            ("gym.role".to_string(), "spoofed".to_string()),
            ("service.instance.id".to_string(), "pod-7".to_string()),
            ("deployment.environment".to_string(), "lab".to_string()),
        ];
        let r = Resource::new(
            &Role::orchestrator(),
            Some("fleet"),
            &extra,
            &GymEnv::default(),
        );
        assert_eq!(r.get("gym.role"), Some("orchestrator"));
        assert_eq!(r.get("service.name"), Some("fleet/orchestrator"));
        assert_eq!(r.get("service.instance.id"), Some("pod-7"));
        assert_eq!(r.get("deployment.environment"), Some("lab"));
    }

    #[test]
    fn labels_are_sanitized_sorted_and_merged() {
        let extra = vec![
            ("a.b".to_string(), "1".to_string()),
            ("a_b".to_string(), "2".to_string()),
        ];
        let r = Resource::new(
            &Role::server("s-0", "resources"),
            None,
            &extra,
            &GymEnv::default(),
        );
        let labels = r.label_pairs();
        let names: Vec<&str> = labels.iter().map(|(n, _)| n.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        assert!(labels.contains(&("a_b".into(), "1;2".into())), "{labels:?}");
        assert!(labels.contains(&("service_name".into(), "nemo-gym/s-0".into())));
        assert!(labels.contains(&("nemo_gym_server_type".into(), "resources".into())));
        assert!(labels.contains(&("nemo_gym_service_group".into(), "nemo-gym".into())));
        assert!(labels
            .iter()
            .any(|(k, v)| k == "nemo_run_id" && v.len() == 12));
    }
}
