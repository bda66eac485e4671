//! The fleet's targets as Prometheus service-discovery JSON: the document
//! `http_sd_configs` fetches and `file_sd_configs` reads, one shape for both.
//!
//! Written by hand (a list of groups, strings escaped per RFC 8259) so the
//! API crate needs no serialisation dependency; the tests parse it back with
//! `serde_json`.

use crate::FleetTarget;

impl FleetTarget {
    /// `targets` as the service-discovery document: one group
    /// `{"targets":["host:port"],"labels":{...}}` per target, in the order given,
    /// labels in name order; `[]` for none.
    ///
    /// ```
    /// use gym_metrics_api::{FleetTarget, Role};
    /// assert_eq!(FleetTarget::sd_json(&[]), "[]");
    /// let t = FleetTarget::of_process("127.0.0.1:9101", &Role::server("math-0", "resources"), Some("r\"1"))?;
    /// assert_eq!(
    ///     FleetTarget::sd_json(&[t]),
    ///     r#"[{"targets":["127.0.0.1:9101"],"labels":{"gym_role":"server","nemo_gym_server_name":"math-0","nemo_gym_server_type":"resources","nemo_run_id":"r\"1"}}]"#
    /// );
    /// # Ok::<(), gym_metrics_api::FleetTargetError>(())
    /// ```
    pub fn sd_json(targets: &[FleetTarget]) -> String {
        let mut out = String::with_capacity(2 + targets.len() * 160);
        out.push('[');
        for (i, target) in targets.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"targets\":[");
            push_string(&mut out, target.address());
            out.push_str("],\"labels\":{");
            for (j, (name, value)) in target.labels().iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                push_string(&mut out, name);
                out.push(':');
                push_string(&mut out, value);
            }
            out.push_str("}}");
        }
        out.push(']');
        out
    }
}

/// Appends `s` as a JSON string: `"` and `\` escaped, control characters as
/// their short escape or `\u00XX`; everything else (all of Unicode) as is.
fn push_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let n = u32::from(c) as usize;
                out.push_str("\\u00");
                out.push(char::from(HEX[n >> 4]));
                out.push(char::from(HEX[n & 0xf]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Role;
    use proptest::prelude::*;

    fn parse(json: &str) -> serde_json::Value {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}): {json}"))
    }

    #[test]
    fn empty_is_an_empty_list() {
        assert_eq!(parse(&FleetTarget::sd_json(&[])), serde_json::json!([]));
    }

    #[test]
    fn the_shape_prometheus_reads() {
        let a = FleetTarget::of_process("127.0.0.1:1", &Role::orchestrator(), Some("r")).unwrap();
        let b = FleetTarget::of_process("127.0.0.1:2", &Role::server("s-0", "resources"), None)
            .unwrap();
        let doc = parse(&FleetTarget::sd_json(&[a, b]));
        assert_eq!(
            doc,
            serde_json::json!([
                {"targets": ["127.0.0.1:1"], "labels": {
                    "gym_role": "orchestrator", "nemo_gym_server_name": "orchestrator",
                    "nemo_gym_server_type": "orchestrator", "nemo_run_id": "r"}},
                {"targets": ["127.0.0.1:2"], "labels": {
                    "gym_role": "server", "nemo_gym_server_name": "s-0",
                    "nemo_gym_server_type": "resources"}},
            ])
        );
    }

    #[test]
    fn control_characters_and_quotes_are_escaped() {
        let t = FleetTarget::new("h:1")
            .unwrap()
            .with_label("v", "a\"b\\c\nd\u{1}e\u{7f}ü\u{2028}")
            .unwrap();
        let json = FleetTarget::sd_json(&[t]);
        assert!(json.contains(r#""a\"b\\c\nd\u0001e"#), "{json}");
        assert_eq!(
            parse(&json)[0]["labels"]["v"],
            "a\"b\\c\nd\u{1}e\u{7f}ü\u{2028}"
        );
    }

    proptest! {
        #[test]
        fn any_value_round_trips(value in any::<String>(), name in "[a-z_][a-z0-9_]{0,8}") {
            prop_assume!(!name.starts_with("__"));
            let t = FleetTarget::new("h:1").unwrap().with_label(name.clone(), value.clone()).unwrap();
            let doc = parse(&FleetTarget::sd_json(&[t]));
            prop_assert_eq!(doc[0]["labels"][&name].as_str(), Some(value.as_str()));
            prop_assert_eq!(doc[0]["targets"][0].as_str(), Some("h:1"));
        }
    }
}
