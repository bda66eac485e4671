//! A parser for the Prometheus text format 0.0.4, enough to compare two
//! expositions family by family.

use std::collections::BTreeMap;

/// One family: its TYPE, its HELP and its samples by (sample name, labels).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Family {
    pub kind: String,
    pub help: String,
    pub samples: BTreeMap<(String, BTreeMap<String, String>), f64>,
}

/// Families by name. Panics (failing the test) on a line it cannot read.
pub fn parse(text: &str) -> BTreeMap<String, Family> {
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    let mut current = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            families.entry(name.to_string()).or_default().help = help.to_string();
            current = name.to_string();
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE line without a type");
            families.entry(name.to_string()).or_default().kind = kind.to_string();
            current = name.to_string();
        } else if line.starts_with('#') {
            continue;
        } else {
            let (name, labels, value) = sample(line);
            assert!(
                name.starts_with(&current),
                "sample {name} outside its family {current}"
            );
            let family = families.entry(current.clone()).or_default();
            let previous = family.samples.insert((name, labels), value);
            assert!(previous.is_none(), "duplicate series: {line}");
        }
    }
    families
}

fn sample(line: &str) -> (String, BTreeMap<String, String>, f64) {
    let (series, value) = line.rsplit_once(' ').expect("sample without a value");
    let value: f64 = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().unwrap_or_else(|_| panic!("bad value in {line}")),
    };
    let Some((name, rest)) = series.split_once('{') else {
        return (series.to_string(), BTreeMap::new(), value);
    };
    let body = rest.strip_suffix('}').expect("unterminated label set");
    (name.to_string(), labels(body), value)
}

fn labels(mut body: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    while !body.is_empty() {
        let (name, rest) = body.split_once("=\"").expect("label without a value");
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            let (i, c) = chars.next().expect("unterminated label value");
            match c {
                '\\' => match chars.next().map(|(_, c)| c) {
                    Some('n') => value.push('\n'),
                    Some(c) => value.push(c),
                    None => panic!("dangling escape"),
                },
                '"' => break i,
                c => value.push(c),
            }
        };
        assert!(
            out.insert(name.to_string(), value).is_none(),
            "duplicate label {name}"
        );
        body = rest[end + 1..].trim_start_matches(',');
    }
    out
}
