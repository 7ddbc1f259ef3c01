//! Runs a second per tenant, where the operator sets a rate
//! (`--run-rate-per-key`): a token bucket per key, holding up to a
//! second's worth of runs (at least one), refilled continuously. A run
//! past it is refused at once (429, with the seconds until the next
//! token), before it waits for a slot or loads anything. Tenants are the
//! keys the service knows and public runs, so the buckets are bounded.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The buckets, one per tenant that ran.
pub struct RunRate {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RunRate {
    /// `per_second` runs a second per tenant (a positive rate), in bursts
    /// of as many (at least one).
    pub fn new(per_second: f64) -> Self {
        Self { per_second, burst: per_second.max(1.0), buckets: Mutex::default() }
    }

    /// The rate, for messages.
    pub fn per_second(&self) -> f64 {
        self.per_second
    }

    /// Takes a run's token for `tenant` at `now`; if none is left, how
    /// long until the next.
    pub fn take(&self, tenant: &str, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let bucket = buckets.entry(tenant.to_string()).or_insert(Bucket { tokens: self.burst, at: now });
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.per_second).min(self.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / self.per_second))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The clock is given, not read: no test here depends on timing.
    #[test]
    fn a_key_gets_its_burst_then_its_rate_and_others_their_own() {
        let rate = RunRate::new(2.0);
        let start = Instant::now();
        assert!(rate.take("a", start).is_ok());
        assert!(rate.take("a", start).is_ok());
        let wait = rate.take("a", start).expect_err("a's burst of 2 is spent");
        assert_eq!(wait, Duration::from_millis(500));
        assert!(rate.take("b", start).is_ok(), "b's bucket is its own");
        assert!(rate.take("a", start + Duration::from_millis(499)).is_err());
        assert!(rate.take("a", start + Duration::from_millis(500)).is_ok(), "a token half a second later");
        // Idle for a minute, a key has a burst again, not a minute's worth.
        let later = start + Duration::from_secs(60);
        assert!(rate.take("a", later).is_ok() && rate.take("a", later).is_ok());
        assert!(rate.take("a", later).is_err());
        // Under one a second, bursts of one.
        let slow = RunRate::new(0.5);
        assert!(slow.take("a", start).is_ok());
        assert_eq!(slow.take("a", start), Err(Duration::from_secs(2)));
    }
}
