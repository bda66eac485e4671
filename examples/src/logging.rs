//! The examples' logger: every `log` record — the libraries' warnings (a
//! failed accept on a scrape endpoint, a failed OTLP export, a refused
//! fleet-size write) and the fleet's own — as one plain line on standard
//! error, `[WARN  gym_metrics] …`.
//!
//! The level comes from `RUST_LOG`, in env_logger's syntax (`info`,
//! `gym_metrics=debug,warn`, …); unset or empty, warnings and errors are
//! shown. The fleet's children inherit the variable, and the orchestrator
//! prints their standard error under their name.

use thiserror::Error;

/// The variable the filter is read from.
pub const FILTER_VARIABLE: &str = "RUST_LOG";

/// The filter when `RUST_LOG` is unset or blank: warnings and errors.
pub const DEFAULT_FILTER: &str = "warn";

/// Why the logger was not installed.
#[derive(Debug, Error)]
pub enum LoggingError {
    /// `RUST_LOG` does not parse as a filter.
    #[error(
        "{FILTER_VARIABLE}={value:?} is not a log filter ({reason}): write a level \
         (error, warn, info, debug, trace, off), or targets with levels such as \
         RUST_LOG=gym_metrics=debug,warn"
    )]
    BadFilter {
        /// The value as given.
        value: String,
        /// What the parser objected to.
        reason: String,
    },
    /// `RUST_LOG` is not valid UTF-8.
    #[error("{FILTER_VARIABLE} is not valid UTF-8: write a level such as RUST_LOG=info")]
    NotUnicode,
    /// Another logger was installed first.
    #[error("a logger is already installed in this process: call logging::init once, at the start of main")]
    AlreadyInstalled,
}

/// Installs the logger with the filter from `RUST_LOG`.
///
/// ```
/// gym_metrics_examples::logging::init()?;
/// log::warn!("shown on standard error unless RUST_LOG hides it");
/// # Ok::<(), gym_metrics_examples::logging::LoggingError>(())
/// ```
///
/// # Errors
/// `RUST_LOG` is set to something that is not a filter (an error at start-up
/// rather than env_logger's own warning and a silently different level), or
/// a logger is already installed.
pub fn init() -> Result<(), LoggingError> {
    let spec = match std::env::var(FILTER_VARIABLE) {
        Ok(value) => value,
        Err(std::env::VarError::NotPresent) => String::new(),
        Err(std::env::VarError::NotUnicode(_)) => return Err(LoggingError::NotUnicode),
    };
    env_logger::Builder::new()
        .parse_filters(checked_filter(&spec)?)
        .try_init()
        .map_err(|_| LoggingError::AlreadyInstalled)
}

/// The filter to install for the `RUST_LOG` value `spec`: [`DEFAULT_FILTER`]
/// when blank, else `spec` once it parses.
///
/// ```
/// use gym_metrics_examples::logging::checked_filter;
/// assert_eq!(checked_filter("")?, "warn");
/// assert_eq!(checked_filter("gym_metrics=debug,info")?, "gym_metrics=debug,info");
/// assert!(checked_filter("gym_metrics=loud").is_err());
/// # Ok::<(), gym_metrics_examples::logging::LoggingError>(())
/// ```
///
/// # Errors
/// [`LoggingError::BadFilter`] naming the value and the parser's reason.
pub fn checked_filter(spec: &str) -> Result<&str, LoggingError> {
    if spec.trim().is_empty() {
        return Ok(DEFAULT_FILTER);
    }
    match env_filter::Builder::new().try_parse(spec) {
        Ok(_) => Ok(spec),
        Err(e) => Err(LoggingError::BadFilter {
            value: spec.to_string(),
            reason: e.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_means_warnings_and_a_bad_filter_names_the_variable_and_value() {
        assert_eq!(checked_filter("  ").unwrap(), DEFAULT_FILTER);
        assert_eq!(checked_filter("info").unwrap(), "info");
        for bad in ["gym_metrics=loud", "a=b=c", "info,gym_metrics=nope"] {
            let e = checked_filter(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("RUST_LOG={bad:?}")), "{e}");
        }
    }
}
