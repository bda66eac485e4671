//! HTTP basic auth against the web configuration's bcrypt hashes, at a cost
//! a hostile client cannot raise.
//!
//! - Constant work with respect to the user: an unknown user is checked
//!   against a dummy hash of the configured users' highest cost, and a user
//!   whose hash has a lower cost `c` pays that difference in dummy hashes of
//!   costs `c`, `c + 1`, …, `max - 1` (bcrypt's work is `2^cost`, so
//!   `2^c + 2^c + … + 2^(max-1) = 2^max`): every check does the work of one
//!   bcrypt at the highest cost, whoever is named (bcrypt itself compares
//!   its output in constant time).
//! - A password over 72 bytes is refused (401) without a check: bcrypt reads
//!   only 72, so any tail would otherwise be accepted.
//! - bcrypt is slow on purpose (tens of milliseconds at cost 10), so, as in
//!   exporter-toolkit, every verdict is cached, keyed by an HMAC-SHA256 of
//!   the credentials under a key drawn at start-up (the cache holds no
//!   password, and a client cannot aim at its keys): Prometheus sending the
//!   same credentials every scrape pays bcrypt once. At most
//!   [`MOST_CACHED_DENIALS`] denials are kept (then forgotten together) and
//!   [`MOST_CACHED_GRANTS`] grants.
//!
//! # Admission: a flood of fresh wrong passwords cannot starve the right one
//!
//! A correct password never seen before (a new Prometheus, a rotated
//! password, a restart) and a fresh wrong one look the same until bcrypt has
//! run, so no test on the request can let the one in before the other; what
//! can be guaranteed is the place in line. So:
//!
//! - One bcrypt runs at a time, off the endpoint's thread (tokio's blocking
//!   pool): at most one core goes to checking passwords.
//! - The line is first in, first out (tokio's semaphore is fair), and no
//!   request is turned away for its length: every waiting check belongs to
//!   one open connection (HTTP/1.1 asks one request at a time), so the line
//!   is never longer than the endpoint's connection cap; and a connection
//!   in it is never evicted to make room for a new one
//!   (`connections/live_connections.rs`: at the cap, newcomers wait in the
//!   kernel's queue, in order, rather than closing a check before its turn,
//!   issue 43). (The old bound, 8
//!   waiting then 429 at once, let 32 flooding threads keep the line full
//!   so that a new right password was refused every time.)
//! - So a check waits for at most the checks already in line when it came,
//!   one bcrypt each: at most the connection cap's worth (12 connections
//!   under a 64-descriptor limit: about 0.7 s at cost 10), whatever the
//!   names and however many the flooding threads. (Lanes per user served in
//!   turn were tried: they shorten the wait of a user nobody floods, but a
//!   check behind `k` others of its own user then waits `k` rounds of every
//!   lane, worse than the line; the line's bound holds for all.)
//! - A check that waited [`MOST_WAIT`] is answered 429 (`Retry-After: 1`),
//!   so no request waits for ever.
//!
//! Verdicts already cached (Prometheus' own credentials once checked) never
//! wait at all.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderMap, Response, StatusCode};
use http_body_util::Full;
use ring::hmac;
use tokio::sync::Semaphore;

use gym_metrics_kit::log_limiter::LogLimiter;

use super::web_config::WebConfigError;
use crate::endpoint::connections::stats::{Counters, Event};

/// The realm the 401 names.
const CHALLENGE: &str = "Basic realm=\"gym-metrics\", charset=\"UTF-8\"";

/// The longest a request waits for its password check before a 429: under
/// Prometheus' default scrape timeout (10 s).
pub(crate) const MOST_WAIT: Duration = Duration::from_secs(5);

/// The longest password bcrypt reads whole; longer ones are refused.
pub(crate) const LONGEST_PASSWORD: usize = 72;

/// Denied credentials remembered (then all forgotten at once).
pub(crate) const MOST_CACHED_DENIALS: usize = 1024;

/// Granted credentials remembered: one per user in practice.
pub(crate) const MOST_CACHED_GRANTS: usize = 64;

/// What a request's credentials earn it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Granted,
    /// No `Authorization: Basic` header, or one that does not decode.
    Missing,
    /// Unknown user or wrong password.
    Wrong,
    /// A password over [`LONGEST_PASSWORD`] bytes, refused without a check:
    /// bcrypt reads only 72, so it would match any hash of its first 72.
    TooLong,
    /// The check waited [`MOST_WAIT`] for its turn.
    Busy,
}

/// A configured user: its hash, and the dummy hashes that pad its check to
/// the highest cost.
struct User {
    hash: String,
    padding: Vec<String>,
}

/// The configured users and the verdict cache.
pub(crate) struct BasicAuth {
    users: HashMap<String, User>,
    dummy_hash: String,
    cache_key: hmac::Key,
    cache: Mutex<Cache>,
    bcrypt_slot: Arc<Semaphore>,
}

impl std::fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the hashes.
        f.debug_struct("BasicAuth")
            .field("users", &self.users.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct Cache {
    granted: HashSet<[u8; 32]>,
    denied: HashSet<[u8; 32]>,
}

fn cost_of(hash: &str) -> u32 {
    hash.parse::<bcrypt::HashParts>()
        .map_or(bcrypt::DEFAULT_COST, |p| p.get_cost())
}

impl BasicAuth {
    /// Checks against `users` (name to bcrypt hash, already validated).
    /// Makes the dummy hashes now: one at the users' highest cost, and one
    /// of each lower cost down to the lowest configured.
    pub(crate) fn new(
        users: BTreeMap<String, String>,
        config_file: &std::path::Path,
    ) -> Result<Self, WebConfigError> {
        let most = users.values().map(|h| cost_of(h)).max();
        let least = users.values().map(|h| cost_of(h)).min();
        let (most, least) = (
            most.unwrap_or(bcrypt::DEFAULT_COST),
            least.unwrap_or(bcrypt::DEFAULT_COST),
        );
        let rng = ring::rand::SystemRandom::new();
        let invalid = |problem: String| WebConfigError::Invalid {
            file: config_file.to_path_buf(),
            key: "basic_auth_users".into(),
            problem,
        };
        let cache_key = hmac::Key::generate(hmac::HMAC_SHA256, &rng)
            .map_err(|_| invalid("the system's random source failed; retry".into()))?;
        let dummy = |cost: u32| {
            bcrypt::hash("gym-metrics: no such user", cost)
                .map_err(|e| invalid(format!("cannot make a bcrypt hash of cost {cost}: {e}")))
        };
        let dummy_hash = dummy(most)?;
        let pads = (least..most)
            .map(|cost| Ok((cost, dummy(cost)?)))
            .collect::<Result<BTreeMap<u32, String>, WebConfigError>>()?;
        let users = users
            .into_iter()
            .map(|(name, hash)| {
                let padding = pads
                    .range(cost_of(&hash)..)
                    .map(|(_, h)| h.clone())
                    .collect();
                (name, User { hash, padding })
            })
            .collect();
        Ok(Self {
            users,
            dummy_hash,
            cache_key,
            cache: Mutex::new(Cache::default()),
            bcrypt_slot: Arc::new(Semaphore::new(1)),
        })
    }

    /// The verdict on `headers`' `Authorization`.
    pub(crate) async fn check(&self, headers: &HeaderMap) -> Verdict {
        let Some((user, password)) = credentials(headers) else {
            return Verdict::Missing;
        };
        if password.len() > LONGEST_PASSWORD {
            return Verdict::TooLong;
        }
        let tag = self.tag(&user, &password);
        if let Some(verdict) = self.cached(&tag) {
            return verdict;
        }
        let known = std::str::from_utf8(&user)
            .ok()
            .and_then(|u| self.users.get(u));
        let turn = Arc::clone(&self.bcrypt_slot).acquire_owned();
        let Ok(Ok(permit)) = tokio::time::timeout(MOST_WAIT, turn).await else {
            return Verdict::Busy;
        };
        // The same credentials may have been checked while this one waited.
        if let Some(verdict) = self.cached(&tag) {
            return verdict;
        }
        let (hash, padding) = match known {
            Some(u) => (u.hash.clone(), u.padding.clone()),
            None => (self.dummy_hash.clone(), Vec::new()),
        };
        // The permit goes with the work: a client that hangs up does not
        // free the slot while its bcrypt still runs.
        let verified = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let verified = bcrypt::verify(&password, &hash).unwrap_or(false);
            for pad in &padding {
                // Work only: its verdict is always false.
                let _ = std::hint::black_box(bcrypt::verify(&password, pad));
            }
            verified
        })
        .await
        .unwrap_or(false);
        let granted = known.is_some() && verified;
        self.remember(tag, granted);
        if granted {
            Verdict::Granted
        } else {
            Verdict::Wrong
        }
    }

    fn tag(&self, user: &[u8], password: &[u8]) -> [u8; 32] {
        let mut context = hmac::Context::with_key(&self.cache_key);
        context.update(&(user.len() as u64).to_be_bytes());
        context.update(user);
        context.update(password);
        let mut tag = [0; 32];
        tag.copy_from_slice(context.sign().as_ref());
        tag
    }

    fn cached(&self, tag: &[u8; 32]) -> Option<Verdict> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.granted.contains(tag) {
            Some(Verdict::Granted)
        } else if cache.denied.contains(tag) {
            Some(Verdict::Wrong)
        } else {
            None
        }
    }

    fn remember(&self, tag: [u8; 32], granted: bool) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let (set, most) = if granted {
            (&mut cache.granted, MOST_CACHED_GRANTS)
        } else {
            (&mut cache.denied, MOST_CACHED_DENIALS)
        };
        if set.len() >= most {
            set.clear();
        }
        set.insert(tag);
    }
}

/// The user and password of an `Authorization: Basic` header, as bytes.
fn credentials(headers: &HeaderMap) -> Option<(Vec<u8>, Vec<u8>)> {
    let value = headers.get(AUTHORIZATION)?.as_bytes();
    let (scheme, encoded) = value.split_at(value.iter().position(|&b| b == b' ')?);
    if !scheme.eq_ignore_ascii_case(b"basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim_ascii())
        .ok()?;
    let colon = decoded.iter().position(|&b| b == b':')?;
    Some((decoded[..colon].to_vec(), decoded[colon + 1..].to_vec()))
}

/// The answer to a request `verdict` refuses (`None` when granted): no
/// exposition byte in it. Counted, and logged at most once a minute.
pub(crate) fn refusal(
    verdict: Verdict,
    counters: &Counters,
    log: &LogLimiter,
) -> Option<Response<Full<Bytes>>> {
    let (status, text) = match verdict {
        Verdict::Granted => return None,
        Verdict::Missing => (
            StatusCode::UNAUTHORIZED,
            "unauthorized: this endpoint needs HTTP basic auth\n",
        ),
        Verdict::Wrong | Verdict::TooLong => (
            StatusCode::UNAUTHORIZED,
            "unauthorized: wrong user or password\n",
        ),
        Verdict::Busy => (
            StatusCode::TOO_MANY_REQUESTS,
            "too many requests are waiting for a password check: retry in a second\n",
        ),
    };
    counters.count(Event::AuthRefused);
    if verdict == Verdict::TooLong {
        // A hash cannot tell its password's length, so start-up could not say.
        if let Some(held_back) = log.admit("basic auth password over 72 bytes") {
            log::warn!(target: "gym_metrics", "refused a metrics request whose password is over {LONGEST_PASSWORD} bytes: bcrypt reads only {LONGEST_PASSWORD}, so such a password never logs in; give the scraper a password of at most {LONGEST_PASSWORD} bytes, hashed in basic_auth_users ({held_back})");
        }
    } else if let Some(held_back) = log.admit("basic auth refused") {
        log::warn!(target: "gym_metrics", "refused a metrics request: {} ({held_back})", text.trim_end());
    }
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if status == StatusCode::UNAUTHORIZED {
        headers.insert(WWW_AUTHENTICATE, HeaderValue::from_static(CHALLENGE));
    } else {
        headers.insert(RETRY_AFTER, HeaderValue::from_static("1"));
    }
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth(users: &[(&str, &str)]) -> BasicAuth {
        let users = users
            .iter()
            .map(|(u, p)| (u.to_string(), bcrypt::hash(p, 4).unwrap()))
            .collect();
        BasicAuth::new(users, std::path::Path::new("web.yml")).unwrap()
    }

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        h
    }

    fn basic(user: &str, password: &str) -> HeaderMap {
        let encoded =
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        headers(&format!("Basic {encoded}"))
    }

    fn check(auth: &BasicAuth, headers: &HeaderMap) -> Verdict {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(auth.check(headers))
    }

    #[test]
    fn the_right_password_is_granted_anything_else_refused() {
        let a = auth(&[("prom", "s3cret:with colon"), ("bob", "x")]);
        assert_eq!(
            check(&a, &basic("prom", "s3cret:with colon")),
            Verdict::Granted
        );
        assert_eq!(check(&a, &basic("bob", "x")), Verdict::Granted);
        assert_eq!(check(&a, &basic("prom", "x")), Verdict::Wrong);
        assert_eq!(check(&a, &basic("nobody", "x")), Verdict::Wrong);
        assert_eq!(check(&a, &basic("", "")), Verdict::Wrong);
        assert_eq!(check(&a, &HeaderMap::new()), Verdict::Missing);
        assert_eq!(check(&a, &headers("Bearer abc")), Verdict::Missing);
        assert_eq!(check(&a, &headers("Basic !!!")), Verdict::Missing);
        let no_colon = base64::engine::general_purpose::STANDARD.encode("prom");
        assert_eq!(
            check(&a, &headers(&format!("Basic {no_colon}"))),
            Verdict::Missing
        );
        // The scheme is case-insensitive (RFC 7235).
        let ok = base64::engine::general_purpose::STANDARD.encode("bob:x");
        assert_eq!(
            check(&a, &headers(&format!("bAsIc {ok}"))),
            Verdict::Granted
        );
    }

    #[test]
    fn verdicts_are_cached_under_a_keyed_hash_and_the_cache_is_bounded() {
        let a = auth(&[("prom", "pw")]);
        assert_eq!(check(&a, &basic("prom", "pw")), Verdict::Granted);
        assert_eq!(check(&a, &basic("prom", "bad")), Verdict::Wrong);
        let tag = a.tag(b"prom", b"pw");
        assert_eq!(a.cached(&tag), Some(Verdict::Granted));
        assert_eq!(a.cached(&a.tag(b"prom", b"bad")), Some(Verdict::Wrong));
        // User and password cannot be shifted into one another.
        assert_ne!(a.tag(b"pro", b"mpw"), tag);
        for i in 0..(MOST_CACHED_DENIALS as u32 + 10) {
            a.remember(a.tag(b"prom", &i.to_be_bytes()), false);
        }
        let cache = a.cache.lock().unwrap();
        assert!(cache.denied.len() <= MOST_CACHED_DENIALS);
        assert!(
            cache.granted.contains(&tag),
            "denials never push a grant out"
        );
    }

    #[test]
    fn the_dummy_hash_has_the_highest_configured_cost() {
        let users = BTreeMap::from([
            ("a".to_string(), bcrypt::hash("x", 4).unwrap()),
            ("b".to_string(), bcrypt::hash("x", 5).unwrap()),
        ]);
        let a = BasicAuth::new(users, std::path::Path::new("web.yml")).unwrap();
        let parts: bcrypt::HashParts = a.dummy_hash.parse().unwrap();
        assert_eq!(parts.get_cost(), 5);
    }

    #[test]
    fn a_lower_cost_user_is_padded_to_the_highest_cost() {
        let users = BTreeMap::from([
            ("low".to_string(), bcrypt::hash("x", 4).unwrap()),
            ("high".to_string(), bcrypt::hash("x", 7).unwrap()),
        ]);
        let a = BasicAuth::new(users, std::path::Path::new("web.yml")).unwrap();
        let costs =
            |u: &str| -> Vec<u32> { a.users[u].padding.iter().map(|h| cost_of(h)).collect() };
        // 2^4 + 2^4 + 2^5 + 2^6 = 2^7: the same work as the highest cost.
        assert_eq!(costs("low"), [4, 5, 6]);
        assert!(costs("high").is_empty());
        let work = |u: &str| {
            std::iter::once(cost_of(&a.users[u].hash))
                .chain(costs(u))
                .map(|c| 1u64 << c)
                .sum::<u64>()
        };
        assert_eq!(work("low"), 1 << 7);
        assert_eq!(work("high"), 1 << cost_of(&a.dummy_hash));
        assert_eq!(check(&a, &basic("low", "x")), Verdict::Granted);
        assert_eq!(check(&a, &basic("low", "y")), Verdict::Wrong);
    }

    #[test]
    fn a_password_over_72_bytes_is_refused_whatever_its_first_72() {
        let long = "p".repeat(LONGEST_PASSWORD);
        let a = auth(&[("prom", &long)]);
        assert_eq!(check(&a, &basic("prom", &long)), Verdict::Granted);
        // bcrypt would read only the first 72 bytes and accept this.
        let tailed = format!("{long}anything");
        assert!(bcrypt::verify(&tailed, &a.users["prom"].hash).unwrap());
        assert_eq!(check(&a, &basic("prom", &tailed)), Verdict::TooLong);
    }
}
