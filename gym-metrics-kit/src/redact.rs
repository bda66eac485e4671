//! Keeping credentials out of everything a backend prints: configuration
//! errors, `Debug` output and log lines. Three kinds of secret reach a
//! backend's configuration: header values (`authorization=Bearer …` in
//! `OTEL_EXPORTER_OTLP_HEADERS`), the user-info of a URL
//! (`http://user:password@host`), its query values (`?api_key=…`) and its
//! fragment (`#access_token=…`). Header and parameter names, hosts, ports
//! and paths stay readable, so a message still says what is wrong; a value
//! longer than [`SHOWN_MAX`] bytes is cut, so one setting cannot fill a log.

use std::borrow::Cow;
use std::fmt;

/// What a secret is printed as.
///
/// ```
/// use gym_metrics_kit::redact::redact_value;
/// use gym_metrics_kit::redact::REDACTED;
/// let printed = redact_value("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer t0k");
/// assert_eq!(printed, format!("authorization={REDACTED}"));
/// ```
pub const REDACTED: &str = "[redacted]";

/// The most bytes of a configuration value [`redact_value`] prints; the
/// rest is left out and its length said.
///
/// ```
/// use gym_metrics_kit::redact::{redact_value, SHOWN_MAX};
/// let endpoint = format!("http://c:4318/{}", "x".repeat(120_000));
/// let printed = redact_value("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint);
/// assert!(printed.len() < SHOWN_MAX + 40);
/// assert!(printed.ends_with("…(120014 bytes in all)"));
/// ```
pub const SHOWN_MAX: usize = 256;

/// `value` of the configuration `variable` (an environment variable or a
/// builder setting), fit to print: when the variable holds headers (its name
/// says `HEADERS`, whatever the case), every header value is replaced by
/// [`REDACTED`]; in any value, the user-info, the query values and the
/// fragment of every URL are (see [`redact_urls`]); and what is left is cut
/// after [`SHOWN_MAX`] bytes (secrets are redacted before the cut, so a cut
/// cannot leave half a password unrecognised).
///
/// ```
/// use gym_metrics_kit::redact::redact_value;
/// assert_eq!(
///     redact_value("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=lab,authorization=Bearer t0k"),
///     "x-tenant=[redacted],authorization=[redacted]",
/// );
/// assert_eq!(
///     redact_value("OTEL_EXPORTER_OTLP_ENDPOINT", "http://me:pw@c:4318"),
///     "http://[redacted]@c:4318",
/// );
/// assert_eq!(
///     redact_value("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318?api_key=s3cret"),
///     "http://c:4318?api_key=[redacted]",
/// );
/// assert_eq!(
///     redact_value("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:99999/#t0k"),
///     "http://c:99999/#[redacted]",
/// );
/// assert_eq!(redact_value("OTEL_METRIC_EXPORT_INTERVAL", "10s"), "10s");
/// ```
pub fn redact_value(variable: &str, value: &str) -> String {
    let value = if holds_headers(variable) {
        Cow::Owned(redact_header_list(value))
    } else {
        Cow::Borrowed(value)
    };
    shorten(&redact_urls(&value))
}

/// `text` cut after [`SHOWN_MAX`] bytes (at a character boundary), the
/// length of the whole said after it.
fn shorten(text: &str) -> String {
    if text.len() <= SHOWN_MAX {
        return text.to_string();
    }
    let mut end = SHOWN_MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…({} bytes in all)", &text[..end], text.len())
}

/// True for a variable or setting whose value is a list of request headers.
fn holds_headers(variable: &str) -> bool {
    variable.to_ascii_uppercase().contains("HEADERS")
}

/// A `key=value,key=value` header list with every value replaced by
/// [`REDACTED`]; an entry without `=` (a malformed one) is replaced whole,
/// since it may be a value that lost its key.
///
/// ```
/// use gym_metrics_kit::redact::redact_header_list;
/// assert_eq!(redact_header_list(" a=1 , b"), "a=[redacted],[redacted]");
/// assert_eq!(redact_header_list("=x"), "=[redacted]");
/// ```
pub fn redact_header_list(list: &str) -> String {
    list.split(',')
        .map(|entry| match entry.split_once('=') {
            Some((key, _)) => format!("{}={REDACTED}", key.trim()),
            None if entry.trim().is_empty() => String::new(),
            None => REDACTED.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `text` with the secrets of every URL in it replaced by [`REDACTED`],
/// wherever the URL stands in the text (an error message from an HTTP
/// client names the URL it failed on): its user-info
/// (`scheme://user:password@`), the value of every query parameter
/// (`?api_key=…&tenant=…`: which names hold secrets is anyone's guess, so
/// none is kept) and its fragment (`#access_token=…`, as OAuth's implicit
/// flow writes tokens; a fragment is never sent, so nothing is lost). The
/// scheme, host, port, path and the parameters' names stay readable. Text
/// without any of them is returned as is.
///
/// A URL's user-info is everything before the last `@` of its authority,
/// and the authority is read up to the first `/`, whitespace, quote or
/// angle bracket, so a password with an unescaped `?`, `#` or `@` is
/// redacted whole (at worst a host is redacted with it). A query runs from
/// the first `?` of the rest of the URL to the next whitespace, quote or
/// angle bracket; closing parentheses at its end stay outside it (`(url)`).
/// A fragment is the rest of the URL after the first `#` past the
/// user-info, when no `?` comes before it (after a `?`, it is part of the
/// query's last value as this rule reads it, and redacted with it).
///
/// ```
/// use gym_metrics_kit::redact::redact_urls;
/// assert_eq!(
///     redact_urls("error sending request for url (http://u:s3cret@c:4318/v1/metrics)"),
///     "error sending request for url (http://[redacted]@c:4318/v1/metrics)",
/// );
/// assert_eq!(
///     redact_urls("to http://c:4318/v1/metrics?api_key=s3cret&tenant=lab failed"),
///     "to http://c:4318/v1/metrics?api_key=[redacted]&tenant=[redacted] failed",
/// );
/// assert_eq!(redact_urls("http://u:p?w@c:4318"), "http://[redacted]@c:4318");
/// assert_eq!(redact_urls("http://c:4318/a@b"), "http://c:4318/a@b"); // `@` in the path
/// assert_eq!(redact_urls("http://c:4318/#t0k"), "http://c:4318/#[redacted]");
/// ```
pub fn redact_urls(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = text[search..].find("://") {
        let authority_start = search + found + "://".len();
        let rest = &text[authority_start..];
        let url_len = rest.find(ends_url).unwrap_or(rest.len());
        let authority_len = rest[..url_len].find('/').unwrap_or(url_len);
        if let Some(at) = rest[..authority_len].rfind('@') {
            out.push_str(&text[copied..authority_start]);
            out.push_str(REDACTED);
            copied = authority_start + at;
        }
        let after_userinfo = rest[..authority_len].rfind('@').map_or(0, |at| at + 1);
        let url = &rest[..url_len];
        if let Some(q) = url[after_userinfo..].find(['?', '#']) {
            let secret_start = authority_start + after_userinfo + q + 1;
            let secret = text[secret_start..authority_start + url_len].trim_end_matches(')');
            out.push_str(&text[copied..secret_start]);
            if url.as_bytes()[after_userinfo + q] == b'?' {
                out.push_str(&redact_query(secret));
            } else if !secret.is_empty() {
                out.push_str(REDACTED);
            }
            copied = secret_start + secret.len();
        }
        search = authority_start + url_len;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// A query (`a=1&b`) with every value replaced by [`REDACTED`], and every
/// parameter without `=` too (it may be a bare token).
fn redact_query(query: &str) -> String {
    query
        .split('&')
        .map(|parameter| match parameter.split_once('=') {
            Some((name, _)) => format!("{name}={REDACTED}"),
            None if parameter.is_empty() => String::new(),
            None => REDACTED.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// A character that cannot be inside a URL as printed in text.
fn ends_url(c: char) -> bool {
    matches!(c, '"' | '<' | '>' | '`') || c.is_whitespace()
}

/// Headers as `Debug` prints them with their values replaced by
/// [`REDACTED`]: for a builder's `Debug` that holds headers.
///
/// ```
/// let headers = vec![("authorization".to_string(), "Bearer t0k".to_string())];
/// let printed = format!("{:?}", gym_metrics_kit::redact::RedactedHeaders(&headers));
/// assert_eq!(printed, r#"[("authorization", "[redacted]")]"#);
/// ```
pub struct RedactedHeaders<'a>(pub &'a [(String, String)]);

impl fmt::Debug for RedactedHeaders<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(name, _)| (name, REDACTED)))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_url_loses_its_secrets_and_keeps_the_rest() {
        let cases = [
            ("http://u:p@h:1/x", "http://[redacted]@h:1/x"),
            ("http://u@h", "http://[redacted]@h"),
            ("http://a:b@c@h/p", "http://[redacted]@h/p"),
            ("http://[::1]:4318/v1", "http://[::1]:4318/v1"),
            ("http://u:p@[::1]:4318", "http://[redacted]@[::1]:4318"),
            (
                "to http://u:p@a/x and grpc://v:q@b?x",
                "to http://[redacted]@a/x and grpc://[redacted]@b?[redacted]",
            ),
            // Issue 26: passwords with unescaped `?`, `#`, `@`, and queries.
            ("http://u:p?w@h:1/x", "http://[redacted]@h:1/x"),
            ("http://u:p#w@h:1", "http://[redacted]@h:1"),
            ("http://u:p@w@h", "http://[redacted]@h"),
            ("http://u:p?w@h?k=v", "http://[redacted]@h?k=[redacted]"),
            (
                "url (http://h:1/v1/metrics?api_key=s3cret&sig=a%3Db&flag)",
                "url (http://h:1/v1/metrics?api_key=[redacted]&sig=[redacted]&[redacted])",
            ),
            ("http://h?token=s3cr)et", "http://h?token=[redacted]"),
            ("\"http://h/?k=s3cret\" x", "\"http://h/?k=[redacted]\" x"),
            // Issue 43: a fragment may hold a token too.
            ("http://h/p#frag", "http://h/p#[redacted]"),
            ("http://h#t0k", "http://h#[redacted]"),
            ("(http://h:1/#a=b?c) x", "(http://h:1/#[redacted]) x"),
            ("http://h/#", "http://h/#"),
            ("http://h/?k=v#frag", "http://h/?k=[redacted]"),
            ("http://h/?", "http://h/?"),
            ("\"http://u:p@h\"", "\"http://[redacted]@h\""),
            ("no url here @ all", "no url here @ all"),
            ("http://", "http://"),
            ("http://u:p@", "http://[redacted]@"),
            ("é://ü:ö@h", "é://[redacted]@h"),
        ];
        for (text, want) in cases {
            assert_eq!(redact_urls(text), want, "{text}");
        }
    }

    proptest::proptest! {
        /// Whatever a password or a query value holds (URL punctuation
        /// included, unescaped), and wherever the URL stands in a message,
        /// neither is printed; and the host is kept unless a query without
        /// a path holds an `@` (then it cannot be told from a user-info).
        /// The password starts with a `~`, which nothing else here holds: a
        /// value such as `Q&S=` makes `S` a query key, which is printed.
        #[test]
        fn no_password_or_query_value_survives(
            password in "~[a-zA-Z0-9:?#@&=;()%!$*+,']{0,12}",
            value in "Q[a-zA-Z0-9:?#@&=/;()%!$*+,']{0,12}",
            before in "[a-z ()]{0,6}",
            after in "[a-z ()]{0,6}",
        ) {
            let text = format!("{before}(http://u:{password}@h:1/v1?api_key={value}){after}");
            let printed = redact_urls(&text);
            proptest::prop_assert!(!printed.contains(&password), "{}", printed);
            proptest::prop_assert!(!printed.contains(&value), "{}", printed);
            let text = format!("{before}http://h:1?k={value} {after}");
            let printed = redact_urls(&text);
            proptest::prop_assert!(!printed.contains(&value), "{}", printed);
            if !value.contains('@') {
                proptest::prop_assert!(printed.contains("http://h:1?k="), "{}", printed);
            }
        }
    }

    #[test]
    fn a_long_value_is_cut_after_its_secrets_are_redacted() {
        // The password stands across the cut (and its `@` after it): cut
        // first, its start would be printed.
        let password = format!("s3cret{}", "x".repeat(20));
        let url = format!("http://{}u:{password}@h:1/", "a".repeat(SHOWN_MAX - 20));
        let printed = redact_value("OTEL_EXPORTER_OTLP_ENDPOINT", &url);
        assert!(!printed.contains("s3cret"), "{printed}");
        // Cut at a character boundary.
        let text = format!("a{}", "é".repeat(200));
        assert_eq!(
            redact_value("V", &text).len(),
            255 + "…(401 bytes in all)".len()
        );
        let short = "x".repeat(SHOWN_MAX);
        assert_eq!(redact_value("V", &short), short);
    }

    #[test]
    fn header_lists_keep_their_names_only() {
        assert_eq!(
            redact_header_list("authorization=Bearer%20t0k, x-tenant = lab"),
            "authorization=[redacted],x-tenant=[redacted]"
        );
        assert_eq!(redact_header_list("Bearer t0k"), "[redacted]");
        assert_eq!(redact_header_list("a=1,,b=2"), "a=[redacted],,b=[redacted]");
    }

    #[test]
    fn header_variables_are_known_by_name() {
        for variable in [
            "OTEL_EXPORTER_OTLP_HEADERS",
            "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
            "headers (OTEL_EXPORTER_OTLP_[METRICS_]HEADERS)",
        ] {
            let printed = redact_value(variable, "authorization=Bearer s3cret");
            assert!(!printed.contains("s3cret"), "{variable}: {printed}");
            assert!(printed.contains("authorization"), "{variable}: {printed}");
        }
        assert_eq!(
            redact_value("OTEL_RESOURCE_ATTRIBUTES", "team=rl"),
            "team=rl"
        );
    }
}
