//! Independent decoders for every exposition the endpoint answers with, none
//! of them ours: `promtool check metrics` for the 0.0.4 text, Prometheus's
//! own OpenMetrics parser (`promtool tsdb create-blocks-from openmetrics`)
//! for OpenMetrics, and the Python `protobuf` runtime of the NeMo Gym venv
//! for the delimited protobuf, against the `io.prometheus.client` schema
//! (client_model's `metrics.proto`, written out below as a descriptor).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use gym_testkit::{contract_findings, promtool_check_metrics, require, TempDir, Tool};

/// `promtool check metrics` on a 0.0.4 text: the findings beyond the
/// contract's own unit names (empty when the text is clean).
pub fn text_findings(text: &str) -> Vec<String> {
    require(Tool::Promtool);
    let known = contract_findings();
    promtool_check_metrics(text)
        .unwrap_or_else(|e| panic!("promtool check metrics did not run: {e}"))
        .into_iter()
        .filter(|f| !known.contains(f))
        .collect()
}

/// An OpenMetrics text with a timestamp given to every sample (the
/// backfiller wants one; the value and any exemplar are kept as sent).
pub fn with_timestamps(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len() * 2);
    for line in openmetrics.lines() {
        if line.starts_with('#') || line.is_empty() {
            out.push_str(line);
        } else {
            match line.split_once(" # {") {
                Some((sample, exemplar)) => {
                    out.push_str(sample);
                    out.push_str(" 1700000000 # {");
                    out.push_str(exemplar);
                }
                None => {
                    out.push_str(line);
                    out.push_str(" 1700000000");
                }
            }
        }
        out.push('\n');
    }
    out
}

/// Prometheus's OpenMetrics parser over `openmetrics` (timestamps added):
/// `Err` with its message when it refuses the text.
pub fn openmetrics_parse(openmetrics: &str) -> Result<(), String> {
    let promtool = require(Tool::Promtool);
    let dir = TempDir::new("om-parse").map_err(|e| format!("temp dir: {e}"))?;
    let input = dir.path().join("exposition.om");
    std::fs::write(&input, with_timestamps(openmetrics)).map_err(|e| format!("write: {e}"))?;
    let output = Command::new(promtool)
        .args(["tsdb", "create-blocks-from", "openmetrics", "-q"])
        .arg(&input)
        .arg(dir.path().join("blocks"))
        .output()
        .map_err(|e| format!("cannot run promtool: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "promtool's OpenMetrics parser refused it ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// The label sets of every OpenMetrics exemplar (`# {…}`), with the
/// OpenMetrics length of each: the code points of its label names and values.
pub fn openmetrics_exemplar_lengths(openmetrics: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for line in openmetrics.lines().filter(|l| !l.starts_with('#')) {
        let Some((_, exemplar)) = line.split_once(" # {") else {
            continue;
        };
        let labels = exemplar.split_once('}').map_or(exemplar, |(l, _)| l);
        let mut chars = 0;
        for pair in labels.split(',').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            chars += name.chars().count() + value.trim_matches('"').chars().count();
        }
        out.push((labels.to_string(), chars));
    }
    out
}

/// The Python decoder: the `io.prometheus.client` schema as a descriptor,
/// each file read as a stream of varint-length-prefixed `MetricFamily`
/// messages, every histogram checked. Prints one JSON object per file.
const PROTOBUF_CHECKER: &str = r#"
import json, math, sys
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, timestamp_pb2, unknown_fields

F = descriptor_pb2.FieldDescriptorProto
fd = descriptor_pb2.FileDescriptorProto(name="io/prometheus/client/metrics.proto",
    package="io.prometheus.client", syntax="proto2",
    dependency=["google/protobuf/timestamp.proto"])
def msg(name, *fields):
    m = fd.message_type.add(name=name)
    for (fname, num, typ, label, tname) in fields:
        f = m.field.add(name=fname, number=num, type=typ, label=label)
        if tname:
            f.type_name = tname
O, R = F.LABEL_OPTIONAL, F.LABEL_REPEATED
TS = ".google.protobuf.Timestamp"
P = ".io.prometheus.client."
e = fd.enum_type.add(name="MetricType")
for i, n in enumerate(["COUNTER", "GAUGE", "SUMMARY", "UNTYPED", "HISTOGRAM", "GAUGE_HISTOGRAM"]):
    e.value.add(name=n, number=i)
msg("LabelPair", ("name", 1, F.TYPE_STRING, O, None), ("value", 2, F.TYPE_STRING, O, None))
msg("Gauge", ("value", 1, F.TYPE_DOUBLE, O, None))
msg("Counter", ("value", 1, F.TYPE_DOUBLE, O, None), ("exemplar", 2, F.TYPE_MESSAGE, O, P + "Exemplar"),
    ("created_timestamp", 3, F.TYPE_MESSAGE, O, TS))
msg("Quantile", ("quantile", 1, F.TYPE_DOUBLE, O, None), ("value", 2, F.TYPE_DOUBLE, O, None))
msg("Summary", ("sample_count", 1, F.TYPE_UINT64, O, None), ("sample_sum", 2, F.TYPE_DOUBLE, O, None),
    ("quantile", 3, F.TYPE_MESSAGE, R, P + "Quantile"), ("created_timestamp", 4, F.TYPE_MESSAGE, O, TS))
msg("Untyped", ("value", 1, F.TYPE_DOUBLE, O, None))
msg("Histogram", ("sample_count", 1, F.TYPE_UINT64, O, None), ("sample_count_float", 4, F.TYPE_DOUBLE, O, None),
    ("sample_sum", 2, F.TYPE_DOUBLE, O, None), ("bucket", 3, F.TYPE_MESSAGE, R, P + "Bucket"),
    ("created_timestamp", 15, F.TYPE_MESSAGE, O, TS), ("schema", 5, F.TYPE_SINT32, O, None),
    ("zero_threshold", 6, F.TYPE_DOUBLE, O, None), ("zero_count", 7, F.TYPE_UINT64, O, None),
    ("zero_count_float", 8, F.TYPE_DOUBLE, O, None), ("negative_span", 9, F.TYPE_MESSAGE, R, P + "BucketSpan"),
    ("negative_delta", 10, F.TYPE_SINT64, R, None), ("negative_count", 11, F.TYPE_DOUBLE, R, None),
    ("positive_span", 12, F.TYPE_MESSAGE, R, P + "BucketSpan"), ("positive_delta", 13, F.TYPE_SINT64, R, None),
    ("positive_count", 14, F.TYPE_DOUBLE, R, None), ("exemplars", 16, F.TYPE_MESSAGE, R, P + "Exemplar"))
msg("Bucket", ("cumulative_count", 1, F.TYPE_UINT64, O, None), ("cumulative_count_float", 4, F.TYPE_DOUBLE, O, None),
    ("upper_bound", 2, F.TYPE_DOUBLE, O, None), ("exemplar", 3, F.TYPE_MESSAGE, O, P + "Exemplar"))
msg("BucketSpan", ("offset", 1, F.TYPE_SINT32, O, None), ("length", 2, F.TYPE_UINT32, O, None))
msg("Exemplar", ("label", 1, F.TYPE_MESSAGE, R, P + "LabelPair"), ("value", 2, F.TYPE_DOUBLE, O, None),
    ("timestamp", 3, F.TYPE_MESSAGE, O, TS))
msg("Metric", ("label", 1, F.TYPE_MESSAGE, R, P + "LabelPair"), ("gauge", 2, F.TYPE_MESSAGE, O, P + "Gauge"),
    ("counter", 3, F.TYPE_MESSAGE, O, P + "Counter"), ("summary", 4, F.TYPE_MESSAGE, O, P + "Summary"),
    ("untyped", 5, F.TYPE_MESSAGE, O, P + "Untyped"), ("histogram", 7, F.TYPE_MESSAGE, O, P + "Histogram"),
    ("timestamp_ms", 6, F.TYPE_INT64, O, None))
msg("MetricFamily", ("name", 1, F.TYPE_STRING, O, None), ("help", 2, F.TYPE_STRING, O, None),
    ("type", 3, F.TYPE_ENUM, O, P + "MetricType"), ("metric", 4, F.TYPE_MESSAGE, R, P + "Metric"),
    ("unit", 5, F.TYPE_STRING, O, None))
pool = descriptor_pool.DescriptorPool()
pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
pool.Add(fd)
MetricFamily = message_factory.GetMessageClass(pool.FindMessageTypeByName("io.prometheus.client.MetricFamily"))

def unknown(m, path, errors):
    if len(unknown_fields.UnknownFieldSet(m)):
        errors.append("unknown fields in " + path)
    for field, value in m.ListFields():
        if field.type == F.TYPE_MESSAGE:
            repeated = field.is_repeated if hasattr(field, "is_repeated") else field.label == R
            for i, v in enumerate(value if repeated else [value]):
                unknown(v, path + "." + field.name + "[" + str(i) + "]", errors)

def varint(data, at):
    shift = result = 0
    while True:
        if at >= len(data):
            raise ValueError("truncated length prefix")
        b = data[at]; at += 1
        result |= (b & 0x7f) << shift
        if not b & 0x80:
            return result, at
        shift += 7
        if shift > 63:
            raise ValueError("length prefix too long")

def exemplar_chars(ex):
    return sum(len(l.name) + len(l.value) for l in ex.label)

limit = int(sys.argv[1])
for path in sys.argv[2:]:
    data = open(path, "rb").read()
    errors, families, histograms, exemplar_lengths = [], [], [], []
    at = 0
    try:
        while at < len(data):
            n, at = varint(data, at)
            if at + n > len(data):
                raise ValueError("message of %d bytes past the end (%d left)" % (n, len(data) - at))
            mf = MetricFamily(); mf.ParseFromString(data[at:at + n]); at += n
            unknown(mf, mf.name, errors)
            families.append(mf.name)
            for m in mf.metric:
                labels = {l.name: l.value for l in m.label}
                if mf.type != 4:
                    continue
                if not m.HasField("histogram"):
                    errors.append(mf.name + ": a HISTOGRAM family's metric without a histogram")
                    continue
                h = m.histogram
                where = mf.name + str(sorted(labels.items()))
                count, total = h.sample_count, h.sample_sum
                if math.isnan(total) or math.isinf(total) or total < 0:
                    errors.append(where + ": sum %r" % total)
                previous, classic = 0, []
                for b in h.bucket:
                    if b.cumulative_count < previous:
                        errors.append(where + ": classic buckets go down at le=%r" % b.upper_bound)
                    previous = b.cumulative_count
                    classic.append([b.upper_bound if math.isfinite(b.upper_bound) else str(b.upper_bound), b.cumulative_count])
                    if b.HasField("exemplar"):
                        exemplar_lengths.append(exemplar_chars(b.exemplar))
                if previous > count:
                    errors.append(where + ": a classic bucket holds %d > count %d" % (previous, count))
                if h.bucket and math.isinf(h.bucket[-1].upper_bound) and h.bucket[-1].cumulative_count != count:
                    errors.append(where + ": +Inf bucket %d != count %d" % (h.bucket[-1].cumulative_count, count))
                for ex in h.exemplars:
                    exemplar_lengths.append(exemplar_chars(ex))
                native = None
                if h.HasField("schema") or len(h.positive_span) or h.HasField("zero_threshold"):
                    if not -4 <= h.schema <= 8:
                        errors.append(where + ": schema %d outside -4..8" % h.schema)
                    if not (h.zero_threshold >= 0 and math.isfinite(h.zero_threshold)):
                        errors.append(where + ": zero threshold %r" % h.zero_threshold)
                    if len(h.negative_span) or len(h.negative_delta) or len(h.positive_count) or len(h.negative_count):
                        errors.append(where + ": negative or float buckets")
                    spans_len = sum(s.length for s in h.positive_span)
                    if spans_len != len(h.positive_delta):
                        errors.append(where + ": spans cover %d buckets, %d deltas" % (spans_len, len(h.positive_delta)))
                    absolute, running, buckets, index = [], 0, [], None
                    deltas = iter(h.positive_delta)
                    for s in h.positive_span:
                        index = (s.offset if index is None else index + s.offset)
                        for _ in range(s.length):
                            running += next(deltas, 0)
                            if running < 0:
                                errors.append(where + ": a bucket count decodes to %d" % running)
                            buckets.append([index, running]); index += 1
                    if any(s.offset < 0 for s in list(h.positive_span)[1:]) or any(s.length == 0 for s in h.positive_span):
                        errors.append(where + ": an overlapping or empty span")
                    populated = sum(1 for _, c in buckets if c)
                    if h.zero_count + sum(c for _, c in buckets) != count:
                        errors.append(where + ": count %d != zero %d + buckets %d" % (count, h.zero_count, sum(c for _, c in buckets)))
                    if len(buckets) > limit or populated > limit:
                        errors.append(where + ": %d buckets (%d populated) over the limit %d" % (len(buckets), populated, limit))
                    native = {"schema": h.schema, "zero_threshold": h.zero_threshold, "zero_count": h.zero_count,
                              "buckets": buckets}
                histograms.append({"family": mf.name, "labels": labels, "count": count, "sum": total,
                                   "classic": classic, "native": native})
    except Exception as ex:
        errors.append("decode: %s: %s" % (type(ex).__name__, ex))
    print(json.dumps({"path": path, "bytes": len(data), "families": families, "histograms": histograms,
                      "exemplar_lengths": exemplar_lengths, "errors": errors}))
"#;

/// One protobuf body as the Python decoder read it.
#[derive(Debug, Clone)]
pub struct DecodedProtobuf {
    pub bytes: usize,
    pub families: Vec<String>,
    pub histograms: Vec<DecodedHistogram>,
    pub exemplar_lengths: Vec<usize>,
    pub errors: Vec<String>,
}

/// A native histogram: (schema, zero threshold, zero count, (bucket index,
/// count) of each bucket in use).
pub type Native = (i64, f64, u64, Vec<(i64, u64)>);

/// One histogram series of a protobuf body.
#[derive(Debug, Clone)]
pub struct DecodedHistogram {
    pub family: String,
    pub labels: Vec<(String, String)>,
    pub count: u64,
    pub sum: f64,
    /// (upper bound, cumulative count); an infinite bound as its text.
    pub classic: Vec<(String, u64)>,
    /// (schema, zero threshold, zero count, (bucket index, count) in use).
    pub native: Option<Native>,
}

/// Decodes every body with the Python protobuf runtime, in one process,
/// each checked against `bucket_limit`. Panics when the decoder cannot run.
pub fn protobuf_decode(bodies: &[Vec<u8>], bucket_limit: usize) -> Vec<DecodedProtobuf> {
    let python = require(Tool::NemoGymPython);
    let dir = TempDir::new("pb-decode").expect("a temp dir");
    let paths: Vec<_> = bodies
        .iter()
        .enumerate()
        .map(|(i, body)| {
            let path = dir.path().join(format!("{i:05}.pb"));
            std::fs::write(&path, body).expect("write a body");
            path
        })
        .collect();
    let script = dir.path().join("check.py");
    std::fs::write(&script, PROTOBUF_CHECKER).expect("write the checker");
    let output = Command::new(python)
        .arg(&script)
        .arg(bucket_limit.to_string())
        .args(&paths)
        .output()
        .expect("run the Python protobuf decoder");
    assert!(
        output.status.success(),
        "the Python protobuf decoder failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let decoded: Vec<DecodedProtobuf> = stdout.lines().map(parse_decoded).collect();
    assert_eq!(decoded.len(), bodies.len(), "one answer per body: {stdout}");
    decoded
}

fn parse_decoded(line: &str) -> DecodedProtobuf {
    let v: serde_json::Value = serde_json::from_str(line).expect("the decoder's JSON");
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let histograms = v["histograms"]
        .as_array()
        .map(|a| a.iter().map(parse_histogram).collect())
        .unwrap_or_default();
    DecodedProtobuf {
        bytes: v["bytes"].as_u64().unwrap_or(0) as usize,
        families: strings(&v["families"]),
        histograms,
        exemplar_lengths: v["exemplar_lengths"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|n| n.as_u64())
                    .map(|n| n as usize)
                    .collect()
            })
            .unwrap_or_default(),
        errors: strings(&v["errors"]),
    }
}

fn parse_histogram(h: &serde_json::Value) -> DecodedHistogram {
    let labels = h["labels"]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let classic = h["classic"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|pair| {
                    let bound = match &pair[0] {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (bound, pair[1].as_u64().unwrap_or(0))
                })
                .collect()
        })
        .unwrap_or_default();
    let native = h["native"].as_object().map(|n| {
        let buckets = n["buckets"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| (p[0].as_i64().unwrap_or(0), p[1].as_u64().unwrap_or(0)))
                    .collect()
            })
            .unwrap_or_default();
        (
            n["schema"].as_i64().unwrap_or(99),
            n["zero_threshold"].as_f64().unwrap_or(f64::NAN),
            n["zero_count"].as_u64().unwrap_or(0),
            buckets,
        )
    });
    DecodedHistogram {
        family: h["family"].as_str().unwrap_or_default().to_string(),
        labels,
        count: h["count"].as_u64().unwrap_or(0),
        sum: h["sum"].as_f64().unwrap_or(f64::NAN),
        classic,
        native,
    }
}

/// One histogram series of a text body (0.0.4 or OpenMetrics): its
/// family, labels without `le`, `_count`, `_sum` and cumulative buckets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TextHistogram {
    pub count: Option<f64>,
    pub sum: Option<f64>,
    pub buckets: Vec<(String, f64)>,
}

/// The histogram series of a text body by (family, labels without `le`),
/// for the histogram families its `# TYPE` lines name.
pub fn text_histograms(text: &str) -> std::collections::BTreeMap<(String, String), TextHistogram> {
    let mut families = BTreeSet::new();
    let mut out: std::collections::BTreeMap<(String, String), TextHistogram> = Default::default();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            if let Some(name) = rest.strip_suffix(" histogram") {
                families.insert(name.to_string());
            }
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let sample = line.split_once(" # {").map_or(line, |(s, _)| s);
        let Some((series, value)) = sample.rsplit_once(' ') else {
            continue;
        };
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or(f64::NAN),
        };
        let (name, labels) = series.split_once('{').unwrap_or((series, "}"));
        let labels = labels.trim_end_matches('}');
        let (suffix, family) = ["_bucket", "_count", "_sum"]
            .iter()
            .find_map(|s| name.strip_suffix(s).map(|f| (*s, f)))
            .unwrap_or(("", name));
        if !families.contains(family) {
            continue;
        }
        let mut le = None;
        let mut rest = Vec::new();
        for pair in labels.split("\",").filter(|p| !p.is_empty()) {
            let value = pair.trim_end_matches('"');
            match value.strip_prefix("le=\"") {
                Some(v) => le = Some(v.to_string()),
                None => rest.push(format!("{value}\"")),
            }
        }
        let entry = out.entry((family.to_string(), rest.join(","))).or_default();
        match suffix {
            "_count" => entry.count = Some(value),
            "_sum" => entry.sum = Some(value),
            _ => entry.buckets.push((le.unwrap_or_default(), value)),
        }
    }
    out
}

/// What is wrong with the histogram series of a text body: `_count`
/// against the `+Inf` bucket, buckets that go down, a sum not finite and
/// non-negative.
pub fn text_histogram_problems(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for ((family, labels), h) in text_histograms(text) {
        let at = format!("{family}{{{labels}}}");
        let inf = h.buckets.iter().find(|(le, _)| le == "+Inf").map(|b| b.1);
        if inf.is_none() || inf != h.count {
            problems.push(format!("{at}: +Inf bucket {inf:?} != _count {:?}", h.count));
        }
        if h.buckets.windows(2).any(|w| w[1].1 < w[0].1) {
            problems.push(format!("{at}: buckets go down"));
        }
        if !h.sum.is_some_and(|s| s.is_finite() && s >= 0.0) {
            problems.push(format!("{at}: _sum {:?}", h.sum));
        }
    }
    problems
}

/// Writes `body` where a failed test leaves it for a look.
pub fn keep(name: &str, body: &[u8]) -> String {
    let path = Path::new(&std::env::temp_dir()).join(name);
    let _ = std::fs::write(&path, body);
    path.display().to_string()
}
