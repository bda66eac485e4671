//! Instant-query results from the Prometheus HTTP API (Prometheus and VictoriaMetrics).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::http::{encode_query_value, http_get};

/// One series of an instant query: its labels (with `__name__` if any) and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The series' labels, `__name__` included when the result has one.
    pub labels: BTreeMap<String, String>,
    /// The sample value (`NaN` and infinities included).
    pub value: f64,
}

/// One series of a range-vector query (`metric[5m]`): its labels and every
/// raw sample in the range, oldest first, as `(unix seconds, value)`.
#[derive(Debug, Clone, PartialEq)]
pub struct RawSeries {
    /// The series' labels, `__name__` included.
    pub labels: BTreeMap<String, String>,
    /// The raw samples, oldest first.
    pub points: Vec<(f64, f64)>,
}

/// `GET <base>/api/v1/query?query=<promql>` for a range vector (a matrix
/// result): every raw sample of every series.
pub(crate) fn raw_query(base_url: &str, promql: &str) -> Result<Vec<RawSeries>, String> {
    let text = query_text(base_url, promql, &[])?;
    parse_matrix(&text).map_err(|e| format!("query `{promql}` at {base_url}: {e}: {text}"))
}

/// The body of `GET <base>/api/v1/query?query=<promql>&<params>`, when 200.
fn query_text(base_url: &str, promql: &str, params: &[(&str, &str)]) -> Result<String, String> {
    let mut url = format!(
        "{base_url}/api/v1/query?query={}",
        encode_query_value(promql)
    );
    for (name, value) in params {
        url.push_str(&format!("&{name}={}", encode_query_value(value)));
    }
    let (status, _, body) = http_get(&url, &[])?;
    let text = String::from_utf8_lossy(&body).into_owned();
    if status != 200 {
        return Err(format!(
            "query `{promql}` at {base_url}: HTTP {status}: {text}"
        ));
    }
    Ok(text)
}

fn parse_matrix(text: &str) -> Result<Vec<RawSeries>, String> {
    let json: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    if json["status"] != "success" {
        return Err("status is not success".into());
    }
    let data = &json["data"];
    if data["resultType"] != "matrix" {
        return Err(format!(
            "result type {} (want matrix: a range vector)",
            data["resultType"]
        ));
    }
    data["result"]
        .as_array()
        .ok_or("matrix result is not an array")?
        .iter()
        .map(|series| {
            let points = series["values"]
                .as_array()
                .ok_or("series has no values")?
                .iter()
                .map(|pair| {
                    let at = pair[0].as_f64().ok_or("sample time is not a number")?;
                    Ok((at, parse_value(pair)?))
                })
                .collect::<Result<_, String>>()?;
            Ok(RawSeries {
                labels: parse_labels(&series["metric"])?,
                points,
            })
        })
        .collect()
}

/// `GET <base>/api/v1/query?query=<promql>`: a vector or scalar result as samples.
pub(crate) fn instant_query(base_url: &str, promql: &str) -> Result<Vec<Sample>, String> {
    instant_query_with(base_url, promql, &[])
}

/// As [`instant_query`], with more query-string parameters (`name`, `value`).
pub(crate) fn instant_query_with(
    base_url: &str,
    promql: &str,
    params: &[(&str, &str)],
) -> Result<Vec<Sample>, String> {
    let text = query_text(base_url, promql, params)?;
    parse_query_response(&text).map_err(|e| format!("query `{promql}` at {base_url}: {e}: {text}"))
}

/// `GET <base>/api/v1/query?query=<promql>&time=<at>` (unix seconds), strict: a
/// vector result only, and response `warnings` are an error too.
pub(crate) fn instant_query_at(
    base_url: &str,
    promql: &str,
    at: f64,
) -> Result<Vec<Sample>, String> {
    let text = query_text(base_url, promql, &[("time", &format!("{at:.3}"))])?;
    parse_strict_vector(&text).map_err(|e| format!("query `{promql}` at {base_url}: {e}"))
}

/// `GET <url>` of a Prometheus API endpoint: its JSON, when HTTP 200 and `status` is `success`.
pub(crate) fn api_json(url: &str) -> Result<Value, String> {
    let (status, _, body) = http_get(url, &[])?;
    let text = String::from_utf8_lossy(&body);
    let json: Value =
        serde_json::from_str(&text).map_err(|e| format!("{url}: not JSON ({e}): {text}"))?;
    if status != 200 || json["status"] != "success" {
        return Err(format!("{url}: HTTP {status}: {text}"));
    }
    Ok(json)
}

/// A vector result without warnings (error messages name what is wrong, not the body).
fn parse_strict_vector(text: &str) -> Result<Vec<Sample>, String> {
    let json: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e}): {text}"))?;
    if json["status"] != "success" {
        return Err(format!("status {}: {}", json["status"], json["error"]));
    }
    if let Some(warnings) = json["warnings"].as_array().filter(|w| !w.is_empty()) {
        return Err(format!("warnings {warnings:?}"));
    }
    if json["data"]["resultType"] != "vector" {
        return Err(format!(
            "result type {} (want vector)",
            json["data"]["resultType"]
        ));
    }
    parse_query_json(&json).map_err(|e| format!("{e}: {text}"))
}

fn parse_query_response(text: &str) -> Result<Vec<Sample>, String> {
    let json: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    parse_query_json(&json)
}

fn parse_query_json(json: &Value) -> Result<Vec<Sample>, String> {
    if json["status"] != "success" {
        return Err("status is not success".into());
    }
    let data = &json["data"];
    match data["resultType"].as_str() {
        Some("vector") => data["result"]
            .as_array()
            .ok_or("vector result is not an array")?
            .iter()
            .map(|series| {
                Ok(Sample {
                    labels: parse_labels(&series["metric"])?,
                    value: parse_value(&series["value"])?,
                })
            })
            .collect(),
        Some("scalar") => Ok(vec![Sample {
            labels: BTreeMap::new(),
            value: parse_value(&data["result"])?,
        }]),
        other => Err(format!(
            "unsupported result type {other:?} (want vector or scalar)"
        )),
    }
}

fn parse_labels(metric: &Value) -> Result<BTreeMap<String, String>, String> {
    metric
        .as_object()
        .ok_or("series has no metric object")?
        .iter()
        .map(|(k, v)| {
            Ok((
                k.clone(),
                v.as_str().ok_or("label value is not a string")?.to_string(),
            ))
        })
        .collect()
}

/// `[<unix seconds>, "<value>"]`.
fn parse_value(pair: &Value) -> Result<f64, String> {
    let text = pair[1]
        .as_str()
        .ok_or("value is not a [time, \"value\"] pair")?;
    text.parse::<f64>()
        .map_err(|_| format!("bad sample value {text:?}"))
}

/// Polls `query` until `pred` holds or `timeout` passes.
pub(crate) fn wait_for(
    promql: &str,
    timeout: Duration,
    pred: impl Fn(&[Sample]) -> bool,
    mut query: impl FnMut() -> Result<Vec<Sample>, String>,
) -> Result<Vec<Sample>, String> {
    let start = Instant::now();
    loop {
        let last = query();
        if let Ok(samples) = &last {
            if pred(samples) {
                return Ok(samples.clone());
            }
        }
        if start.elapsed() >= timeout {
            let shown = match last {
                Ok(samples) => format!("last samples: {samples:?}"),
                Err(e) => format!("last error: {e}"),
            };
            return Err(format!(
                "`{promql}` did not satisfy the condition within {timeout:?}; {shown}"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_is_every_raw_sample_oldest_first() {
        let text = r#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"__name__":"up","instance":"a"},"values":[[10.5,"1"],[15.5,"0"]]}]}}"#;
        let series = parse_matrix(text).unwrap();
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].labels["instance"], "a");
        assert_eq!(series[0].points, vec![(10.5, 1.0), (15.5, 0.0)]);
        let vector = r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        assert!(parse_matrix(vector).unwrap_err().contains("want matrix"));
    }

    #[test]
    fn parses_a_vector() {
        let text = r#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"__name__":"up","job":"gym"},"value":[1.5,"1"]},
            {"metric":{},"value":[1.5,"+Inf"]}]}}"#;
        let samples = parse_query_response(text).unwrap();
        assert_eq!(samples.len(), 2);
        assert_eq!(samples[0].labels["job"], "gym");
        assert_eq!(samples[0].value, 1.0);
        assert_eq!(samples[1].value, f64::INFINITY);
    }

    #[test]
    fn parses_a_scalar_and_nan() {
        let text = r#"{"status":"success","data":{"resultType":"scalar","result":[1.5,"NaN"]}}"#;
        let samples = parse_query_response(text).unwrap();
        assert!(samples[0].labels.is_empty() && samples[0].value.is_nan());
    }

    #[test]
    fn refuses_a_matrix_and_errors() {
        assert!(parse_query_response(
            r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#
        )
        .is_err());
        assert!(parse_query_response(r#"{"status":"error","error":"bad"}"#).is_err());
    }

    #[test]
    fn a_strict_query_refuses_warnings_scalars_and_errors() {
        let vector = r#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"job":"gym"},"value":[1.5,"2"]}]}}"#;
        assert_eq!(parse_strict_vector(vector).unwrap()[0].value, 2.0);
        let warned = r#"{"status":"success","warnings":["PromQL info: bad"],
            "data":{"resultType":"vector","result":[]}}"#;
        assert!(parse_strict_vector(warned)
            .unwrap_err()
            .contains("PromQL info: bad"));
        let scalar = r#"{"status":"success","data":{"resultType":"scalar","result":[1.5,"1"]}}"#;
        assert!(parse_strict_vector(scalar)
            .unwrap_err()
            .contains("want vector"));
        let error = r#"{"status":"error","error":"parse error"}"#;
        assert!(parse_strict_vector(error)
            .unwrap_err()
            .contains("parse error"));
    }

    #[test]
    fn wait_for_shows_the_last_samples() {
        let err = wait_for(
            "x",
            Duration::from_millis(10),
            |s| s.is_empty(),
            || {
                Ok(vec![Sample {
                    labels: BTreeMap::new(),
                    value: 7.0,
                }])
            },
        )
        .unwrap_err();
        assert!(err.contains("value: 7.0"), "{err}");
    }
}
