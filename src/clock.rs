//! UTC dates and times for the records isadb keeps (`verified_at`, `validated_at`), from the
//! system clock without a time-zone database.

/// Now, as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn now() -> String {
    let secs = unix_seconds();
    let rem = secs.rem_euclid(86_400);
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        date_of_day(secs.div_euclid(86_400)),
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Today, as `YYYY-MM-DD`.
pub fn today() -> String {
    date_of_day(unix_seconds().div_euclid(86_400))
}

fn unix_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The civil date of a day number counted from 1970-01-01 (Howard Hinnant's algorithm).
pub fn date_of_day(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(date_of_day(0), "1970-01-01");
        assert_eq!(date_of_day(19_723), "2024-01-01");
        assert_eq!(date_of_day(20_148), "2025-03-01");
        assert_eq!(today().len(), 10);
        let now = now();
        assert_eq!(now.len(), 20, "{now}");
        assert!(
            now.starts_with(&today()[..4]) && now.ends_with('Z'),
            "{now}"
        );
    }
}
