//! `http.request.method`: the nine methods HTTP defines, anything else `_OTHER`.

/// An HTTP request method as the semantic conventions record it: the nine
/// methods of RFC 9110 and RFC 5789 as they are, anything else (an extension
/// method, a lower-case spelling) as `_OTHER`. The original spelling is never
/// kept, so a client cannot mint label values.
///
/// ```
/// use gym_metrics_api::HttpMethod;
/// assert_eq!(HttpMethod::parse("POST").as_str(), "POST");
/// assert_eq!(HttpMethod::parse("PURGE").as_str(), "_OTHER");
/// assert_eq!(HttpMethod::parse("get"), HttpMethod::Other); // methods are case-sensitive
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HttpMethod {
    /// `CONNECT`
    Connect,
    /// `DELETE`
    Delete,
    /// `GET`
    Get,
    /// `HEAD`
    Head,
    /// `OPTIONS`
    Options,
    /// `PATCH`
    Patch,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `TRACE`
    Trace,
    /// Any other method: recorded as `_OTHER`.
    Other,
}

impl HttpMethod {
    /// Every value, `_OTHER` last: the whole range of `http.request.method`.
    ///
    /// ```
    /// use gym_metrics_api::HttpMethod;
    /// // Each value parses back from its own spelling; `_OTHER` is last.
    /// assert!(HttpMethod::ALL.iter().all(|m| HttpMethod::parse(m.as_str()) == *m));
    /// assert_eq!(HttpMethod::ALL.last(), Some(&HttpMethod::Other));
    /// ```
    pub const ALL: [HttpMethod; 10] = [
        HttpMethod::Connect,
        HttpMethod::Delete,
        HttpMethod::Get,
        HttpMethod::Head,
        HttpMethod::Options,
        HttpMethod::Patch,
        HttpMethod::Post,
        HttpMethod::Put,
        HttpMethod::Trace,
        HttpMethod::Other,
    ];

    /// The method named `method`, compared exactly (HTTP methods are case-sensitive).
    ///
    /// ```
    /// use gym_metrics_api::HttpMethod;
    /// assert_eq!(HttpMethod::parse("DELETE"), HttpMethod::Delete);
    /// assert_eq!(HttpMethod::parse("BREW"), HttpMethod::Other);
    /// ```
    pub fn parse(method: &str) -> Self {
        match method {
            "CONNECT" => HttpMethod::Connect,
            "DELETE" => HttpMethod::Delete,
            "GET" => HttpMethod::Get,
            "HEAD" => HttpMethod::Head,
            "OPTIONS" => HttpMethod::Options,
            "PATCH" => HttpMethod::Patch,
            "POST" => HttpMethod::Post,
            "PUT" => HttpMethod::Put,
            "TRACE" => HttpMethod::Trace,
            _ => HttpMethod::Other,
        }
    }

    /// The label value: the method's name, or `_OTHER`.
    ///
    /// ```
    /// assert_eq!(gym_metrics_api::HttpMethod::Other.as_str(), "_OTHER");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Connect => "CONNECT",
            HttpMethod::Delete => "DELETE",
            HttpMethod::Get => "GET",
            HttpMethod::Head => "HEAD",
            HttpMethod::Options => "OPTIONS",
            HttpMethod::Patch => "PATCH",
            HttpMethod::Post => "POST",
            HttpMethod::Put => "PUT",
            HttpMethod::Trace => "TRACE",
            HttpMethod::Other => "_OTHER",
        }
    }
}

#[cfg(feature = "tower")]
impl From<&http::Method> for HttpMethod {
    /// ```
    /// use gym_metrics_api::HttpMethod;
    /// assert_eq!(HttpMethod::from(&http::Method::PATCH), HttpMethod::Patch);
    /// ```
    fn from(method: &http::Method) -> Self {
        HttpMethod::parse(method.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_as_str_round_trip_for_every_known_method() {
        for m in HttpMethod::ALL {
            assert_eq!(HttpMethod::parse(m.as_str()), m);
        }
        for odd in ["", "get", "Post", "PURGE", "GET ", "M-SEARCH"] {
            assert_eq!(HttpMethod::parse(odd), HttpMethod::Other, "{odd:?}");
        }
    }
}
