//! What the web configuration asks of the endpoint, made ready at start-up:
//! TLS on every connection, basic auth on every request. Without the
//! `web-config` feature, nothing.

#[cfg(feature = "web-config")]
use super::basic_auth::BasicAuth;
#[cfg(feature = "web-config")]
use super::tls::ReloadingAcceptor;

/// The accept loop's source of TLS acceptors (none without the feature).
#[cfg(feature = "web-config")]
pub(crate) use super::tls::ReloadingAcceptor as TlsSource;
/// The TLS handshake a new connection starts with.
#[cfg(feature = "web-config")]
pub(crate) use tokio_rustls::TlsAcceptor as ConnectionTls;

/// No TLS without the `web-config` feature: an `Option` of it is `None`.
#[cfg(not(feature = "web-config"))]
#[derive(Debug)]
pub(crate) enum TlsSource {}

/// No TLS without the `web-config` feature: an `Option` of it is `None`.
#[cfg(not(feature = "web-config"))]
#[derive(Debug)]
pub(crate) enum ConnectionTls {}

#[cfg(not(feature = "web-config"))]
impl TlsSource {
    pub(crate) fn acceptor(
        &mut self,
        _shared: &crate::endpoint::endpoint_state::Shared,
    ) -> ConnectionTls {
        match *self {}
    }
}

/// The endpoint's TLS and basic auth, each optional.
#[derive(Debug, Default)]
pub(crate) struct Protection {
    pub(crate) tls: Option<TlsSource>,
    #[cfg(feature = "web-config")]
    pub(crate) basic_auth: Option<BasicAuth>,
}

impl Protection {
    /// Loads what `file` configures: its certificates are read, its users'
    /// dummy hash made, so every problem is an error here, at start-up.
    #[cfg(feature = "web-config")]
    pub(crate) fn load(file: &std::path::Path) -> Result<Self, super::web_config::WebConfigError> {
        let config = super::web_config::WebConfig::load(file)?;
        let tls = config.tls.map(ReloadingAcceptor::load).transpose()?;
        let basic_auth = if config.basic_auth_users.is_empty() {
            None
        } else {
            Some(BasicAuth::new(config.basic_auth_users, file)?)
        };
        if basic_auth.is_some() && tls.is_none() {
            log::warn!(target: "gym_metrics", "the web configuration {} sets basic_auth_users without tls_server_config: passwords cross the network in the clear; add tls_server_config", file.display());
        }
        Ok(Self { tls, basic_auth })
    }

    /// The URL scheme the endpoint serves.
    pub(crate) fn scheme(&self) -> &'static str {
        if self.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }

    /// Whether a client must authenticate (by password or certificate).
    pub(crate) fn authenticates(&self) -> bool {
        #[cfg(feature = "web-config")]
        if self.basic_auth.is_some()
            || self
                .tls
                .as_ref()
                .is_some_and(ReloadingAcceptor::requires_client_certificates)
        {
            return true;
        }
        false
    }
}
