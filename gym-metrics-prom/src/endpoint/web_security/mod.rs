//! The endpoint's web security: the web configuration file (TLS and
//! basic-auth users, in exporter-toolkit's format), what it asks of the
//! endpoint made ready at start-up, and the warning for an endpoint others
//! can reach unprotected. TLS, basic auth and the file exist only with the
//! `web-config` feature.
//!
//! | file | what it holds |
//! |---|---|
//! | `web_config.rs` | the web configuration file, read and checked whole at start-up (feature `web-config`) |
//! | `protection.rs` | what the web configuration asks of the endpoint: TLS on every connection, basic auth on every request |
//! | `tls.rs` | rustls's server configuration from the file's certificates, reloaded when they change (feature `web-config`) |
//! | `basic_auth.rs` | basic auth against bcrypt hashes at a cost a client cannot raise, and its line of checks (feature `web-config`) |
//! | `exposure.rs` | the start-up warning for an endpoint other hosts reach without authentication |

#[cfg(feature = "web-config")]
pub(super) mod basic_auth;
pub(super) mod exposure;
pub(super) mod protection;
#[cfg(feature = "web-config")]
mod tls;
#[cfg(feature = "web-config")]
pub(crate) mod web_config;
