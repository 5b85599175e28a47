//! The wall clock, as the server writes it into records and frames.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Unix ms as a UTC time to the minute, `2026-12-08 18:05 UTC`: how a
/// refusal tells a player until when.
pub fn utc_minute(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // The civil date of a day count since 1970-01-01 (Howard Hinnant's
    // algorithm); days fit an i64 for every u64 of ms.
    let z = i64::try_from(days).unwrap_or(i64::MAX / 2) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", rem / 3600, rem % 3600 / 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_in_utc_to_the_minute() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        // 2026-12-08 18:05:59 UTC.
        assert_eq!(utc_minute(1_796_753_159_000), "2026-12-08 18:05 UTC");
        // A leap day.
        assert_eq!(utc_minute(1_709_164_800_000), "2024-02-29 00:00 UTC");
    }
}
