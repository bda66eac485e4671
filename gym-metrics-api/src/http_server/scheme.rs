//! `url.scheme`: `http` or `https`.

/// The scheme a server accepted the request on (`url.scheme`).
///
/// A server usually sees origin-form request targets without a scheme, so
/// the scheme is what the listener speaks, set once where the server is built.
///
/// ```
/// use gym_metrics_api::UrlScheme;
/// assert_eq!(UrlScheme::default().as_str(), "http");
/// assert_eq!(UrlScheme::Https.as_str(), "https");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum UrlScheme {
    /// Plain HTTP (the default).
    #[default]
    Http,
    /// HTTP over TLS.
    Https,
}

impl UrlScheme {
    /// The label value.
    ///
    /// ```
    /// assert_eq!(gym_metrics_api::UrlScheme::Http.as_str(), "http");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            UrlScheme::Http => "http",
            UrlScheme::Https => "https",
        }
    }
}
