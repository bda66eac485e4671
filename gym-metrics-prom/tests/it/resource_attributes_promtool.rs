//! Hostile resource attribute keys (issue 15, item 4): whatever keys and
//! values `OTEL_RESOURCE_ATTRIBUTES` carries, `target_info` is an exposition
//! `promtool check metrics` parses. A label name Prometheus refuses
//! (`1team`, `k8s:pod`, the reserved `__name__`) would lose every series of
//! the scrape while the endpoint still answers 200.
//!
//! Each case is one list of arbitrary pairs, written as the variable's value
//! (values percent-encoded), parsed as the builder parses it, rendered, and
//! checked by one promtool run; the case count keeps the test to seconds.

use gym_metrics_kit::resource::parse_key_value_list;
use gym_metrics_prom::PrometheusBuilder;
use gym_testkit::{promtool_check_metrics, require, Tool};
use proptest::prelude::*;

/// Keys: anything the variable can carry (no `,` or `=`), with the
/// shapes that broke the scrape drawn often.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[^,=]{1,12}",
        "[0-9][a-z0-9.]{0,6}",
        "[a-z]{1,4}:[a-z0-9:]{1,6}",
        "__[a-z_]{1,8}(__)?",
        "[._:/ -]{1,3}[a-zA-Z]{0,4}",
        Just("__name__".to_string()),
        Just("le".to_string()),
    ]
    .prop_filter("the variable trims keys and refuses empty ones", |k| {
        !k.trim().is_empty()
    })
}

/// `value` percent-encoded for the variable: every byte but the unreserved ones.
fn percent_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The exposition of a server whose variable held `pairs`.
fn exposition(pairs: &[(String, String)]) -> String {
    let variable: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", percent_encode(v)))
        .collect();
    let parsed = parse_key_value_list(&variable.join(","))
        .unwrap_or_else(|| panic!("the variable did not parse: {variable:?}"));
    let builder = parsed
        .into_iter()
        .fold(PrometheusBuilder::new(), |b, (k, v)| {
            b.resource_attribute(k, v)
        });
    let (_recorder, handle) = builder.build().expect("build");
    handle.render()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_resource_attributes_give_an_exposition_promtool_parses(
        pairs in proptest::collection::vec((key(), "\\PC{0,10}|[\\x00-\\x1f\"\\\\]{0,4}"), 1..40)
    ) {
        require(Tool::Promtool);
        let text = exposition(&pairs);
        let target_info = text
            .lines()
            .find(|l| l.starts_with("target_info{"))
            .unwrap_or_default()
            .to_string();
        let findings = promtool_check_metrics(&text).expect("promtool runs");
        let refused: Vec<&String> = findings.iter().filter(|f| f.starts_with("error")).collect();
        prop_assert!(refused.is_empty(), "promtool refused {target_info}: {refused:?}");
    }
}

#[test]
fn the_keys_of_the_issue_become_valid_label_names() {
    let text = exposition(&[
        ("1team".into(), "rl".into()),
        ("k8s:pod".into(), "p-1".into()),
        ("__name__".into(), "evil".into()),
    ]);
    let target_info = text
        .lines()
        .find(|l| l.starts_with("target_info{"))
        .expect("a target_info sample");
    for label in ["key_1team=\"rl\"", "k8s_pod=\"p-1\"", "_name_=\"evil\""] {
        assert!(target_info.contains(label), "{label} in {target_info}");
    }
    require(Tool::Promtool);
    let findings = promtool_check_metrics(&text).expect("promtool runs");
    assert!(
        !findings.iter().any(|f| f.starts_with("error")),
        "{findings:?}"
    );
}
