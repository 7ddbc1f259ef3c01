//! A monotonic clock where one exists: `std::time::Instant` natively,
//! `performance.now()` in Wasm (feature `wasm`), none in bare `no_std`.
//! Workflows use it for `segment_time` and `total_time`.

/// Nanoseconds since an arbitrary fixed origin, or `None` without a clock.
pub fn now_nanos() -> Option<u64> {
    imp::now_nanos()
}

#[cfg(all(feature = "wasm", target_arch = "wasm32"))]
mod imp {
    pub fn now_nanos() -> Option<u64> {
        Some((crate::wasm::now_ms() * 1e6) as u64)
    }
}

#[cfg(all(feature = "std", not(target_arch = "wasm32")))]
mod imp {
    use std::sync::OnceLock;
    use std::time::Instant;

    static ORIGIN: OnceLock<Instant> = OnceLock::new();

    pub fn now_nanos() -> Option<u64> {
        let origin = *ORIGIN.get_or_init(Instant::now);
        Some(u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }
}

#[cfg(not(any(all(feature = "wasm", target_arch = "wasm32"), all(feature = "std", not(target_arch = "wasm32")))))]
mod imp {
    pub fn now_nanos() -> Option<u64> {
        None
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    #[test]
    fn is_monotonic() {
        let a = super::now_nanos().unwrap();
        let b = super::now_nanos().unwrap();
        assert!(b >= a);
    }
}
