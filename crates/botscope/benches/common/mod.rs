//! What the benches that time whole processes share.

use std::time::Duration;

use nix::sys::resource::{UsageWho, getrusage};

/// Processor time (user and system) of the children waited for so far.
pub fn children_cpu() -> Duration {
    let u = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    let t = |tv: nix::sys::time::TimeVal| {
        Duration::from_secs(tv.tv_sec().unsigned_abs())
            + Duration::from_micros(tv.tv_usec().unsigned_abs())
    };
    t(u.user_time()) + t(u.system_time())
}
