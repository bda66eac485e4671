//! The recording side: what one process records, written on the hot path
//! by the recorder and read by the exposition at each scrape.

mod bucket_search;
pub(crate) mod exemplars;
pub(crate) mod fleet_gauge;
pub(crate) mod fleet_sd;
pub(crate) mod http_histogram;
mod instruments;
mod nanos;
pub(crate) mod native;
pub(crate) mod sharded_histogram;
mod slot_buckets;

pub(crate) use instruments::GymMetrics;
