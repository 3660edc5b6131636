//! How long to wait before asking again.

use std::time::Duration;

/// The wait before retry number `retry` (0 for the first): exponential from `base`, with
/// "full jitter" (a random fraction `jitter` in 0..1 of it, at least half) so that clients that
/// failed together do not retry together; a server's `Retry-After` is honoured when longer.
/// Never more than `max`.
pub(crate) fn backoff(
    retry: u32,
    base: Duration,
    max: Duration,
    retry_after: Option<Duration>,
    jitter: f64,
) -> Duration {
    let exponential = base.saturating_mul(1u32 << retry.min(16));
    let jittered = exponential.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0));
    jittered.max(retry_after.unwrap_or_default()).min(max)
}

/// A `Retry-After` header: seconds (an HTTP date is read as no hint).
pub(crate) fn retry_after(header: Option<&str>) -> Option<Duration> {
    let seconds: f64 = header?.trim().parse().ok()?;
    Duration::try_from_secs_f64(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn waits_double_and_jitter_stays_within_half_of_them() {
        let (base, max) = (100 * MS, Duration::from_secs(60));
        assert_eq!(backoff(0, base, max, None, 1.0), 100 * MS);
        assert_eq!(backoff(3, base, max, None, 1.0), 800 * MS);
        assert_eq!(backoff(3, base, max, None, 0.0), 400 * MS);
        assert_eq!(backoff(40, base, max, None, 1.0), max, "capped, no overflow");
    }

    #[test]
    fn a_longer_retry_after_wins_but_not_past_the_cap() {
        let (base, max) = (100 * MS, Duration::from_secs(5));
        assert_eq!(backoff(0, base, max, retry_after(Some("2")), 1.0), Duration::from_secs(2));
        assert_eq!(backoff(0, base, max, retry_after(Some(" 0.05 ")), 1.0), 100 * MS);
        assert_eq!(backoff(0, base, max, retry_after(Some("3600")), 1.0), max);
        assert_eq!(retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT")), None);
        assert_eq!(retry_after(Some("-1")), None);
    }
}
