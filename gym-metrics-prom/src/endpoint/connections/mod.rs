//! The endpoint's connections: accepting them within the cap, serving each
//! one request at a time under its watchdog, and making room at the cap
//! (why each piece exists: the endpoint's module doc).
//!
//! | file | what it holds |
//! |---|---|
//! | `accept_loop.rs` | accepting connections within the cap until shutdown, then draining the open ones |
//! | `connection.rs` | serving one connection: hyper's HTTP/1, one answer at a time, under its watchdog |
//! | `activity_io.rs` | the connection's socket, telling its state of reads, full writes and flushes |
//! | `connection_state.rs` | what one connection is doing (idle or busy, since when, pipelined, in a password check), and the endpoint's clock |
//! | `live_connections.rs` | the live connections, oldest first, and who makes room at the cap for a new one |
//! | `limits.rs` | the cap from the process's descriptor limit, the idle and write timeouts |
//! | `stats.rs` | the counts behind [`EndpointStats`](crate::EndpointStats) |
//! | `final_scrape.rs` | the wait for one last scrape at shutdown |

pub(super) mod accept_loop;
mod activity_io;
mod connection;
pub(super) mod connection_state;
pub(super) mod final_scrape;
pub(super) mod limits;
pub(super) mod live_connections;
pub(super) mod stats;
