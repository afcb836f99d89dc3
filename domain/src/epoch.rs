//! Calendar-aligned UTC epochs, the same arithmetic as the `AllowanceStateMachine`:
//! days from 00:00Z, ISO weeks from Monday 00:00Z, calendar months and calendar years.

use serde::{Deserialize, Serialize};

const DAY: i64 = 86_400;

/// How often a mandate's ceiling resets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interval {
    /// Every day at 00:00Z.
    Daily,
    /// Every Monday at 00:00Z.
    Weekly,
    /// On the first of every month at 00:00Z.
    Monthly,
    /// On the first of January at 00:00Z.
    Yearly,
}

impl Interval {
    /// All intervals, in on-chain order.
    pub const ALL: [Interval; 4] = [
        Interval::Daily,
        Interval::Weekly,
        Interval::Monthly,
        Interval::Yearly,
    ];

    /// The value of the contract's `Interval` enum.
    pub fn onchain(self) -> u8 {
        self as u8
    }

    /// The API name (`daily`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Interval::Daily => "daily",
            Interval::Weekly => "weekly",
            Interval::Monthly => "monthly",
            Interval::Yearly => "yearly",
        }
    }

    /// Parses an API name, case-insensitively.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|i| i.as_str().eq_ignore_ascii_case(s))
    }

    /// The epoch containing the unix time `ts` (seconds, UTC).
    pub fn epoch_at(self, ts: i64) -> Epoch {
        let day = ts.div_euclid(DAY);
        let (start_day, end_day) = match self {
            Interval::Daily => (day, day + 1),
            Interval::Weekly => {
                // 1970-01-01 was a Thursday: three days after a Monday. As on chain, the
                // first, partial week of 1970 starts at 0 and ends on Monday 1970-01-05.
                if (0..4).contains(&day) {
                    (0, 4)
                } else {
                    let start = day - (day + 3).rem_euclid(7);
                    (start, start + 7)
                }
            }
            Interval::Monthly => {
                let (y, m, _) = civil_from_days(day);
                let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
                (days_from_civil(y, m, 1), days_from_civil(ny, nm, 1))
            }
            Interval::Yearly => {
                let (y, _, _) = civil_from_days(day);
                (days_from_civil(y, 1, 1), days_from_civil(y + 1, 1, 1))
            }
        };
        Epoch {
            starts_at: start_day * DAY,
            ends_at: end_day * DAY,
        }
    }
}

/// One epoch: `[starts_at, ends_at)` in unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Epoch {
    /// First second of the epoch.
    pub starts_at: i64,
    /// First second of the next epoch.
    pub ends_at: i64,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day number (inverse of [`days_from_civil`]).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ts(y: i64, m: u32, d: u32, secs: i64) -> i64 {
        days_from_civil(y, m, d) * DAY + secs
    }

    #[test]
    fn known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(days_from_civil(2024, 2, 29)), (2024, 2, 29));
        // 2025-12-31T23:59:59Z
        let t = ts(2025, 12, 31, DAY - 1);
        assert_eq!(
            Interval::Monthly.epoch_at(t),
            Epoch {
                starts_at: ts(2025, 12, 1, 0),
                ends_at: ts(2026, 1, 1, 0)
            }
        );
        assert_eq!(
            Interval::Yearly.epoch_at(t),
            Epoch {
                starts_at: ts(2025, 1, 1, 0),
                ends_at: ts(2026, 1, 1, 0)
            }
        );
        // Leap February.
        let feb = Interval::Monthly.epoch_at(ts(2024, 2, 29, 10));
        assert_eq!(feb.ends_at - feb.starts_at, 29 * DAY);
        // 2026-11-22 is a Sunday: its week started Monday 2026-11-16.
        let w = Interval::Weekly.epoch_at(ts(2026, 11, 22, 3600));
        assert_eq!(
            w,
            Epoch {
                starts_at: ts(2026, 11, 16, 0),
                ends_at: ts(2026, 11, 23, 0)
            }
        );
        // A Monday at 00:00Z starts its own week.
        assert_eq!(
            Interval::Weekly.epoch_at(ts(2026, 11, 23, 0)).starts_at,
            ts(2026, 11, 23, 0)
        );
    }

    #[test]
    fn names_round_trip() {
        for i in Interval::ALL {
            assert_eq!(Interval::parse(i.as_str()), Some(i));
            assert_eq!(Interval::parse(&i.as_str().to_uppercase()), Some(i));
        }
        assert_eq!(Interval::parse("hourly"), None);
    }

    proptest! {
        #[test]
        fn epoch_contains_and_tiles(t in 0i64..8_000_000_000, which in 0usize..4) {
            let interval = Interval::ALL[which];
            let e = interval.epoch_at(t);
            prop_assert!(e.starts_at <= t && t < e.ends_at);
            prop_assert_eq!(e.starts_at % DAY, 0);
            // Epochs tile time: the next epoch starts where this one ends.
            prop_assert_eq!(interval.epoch_at(e.ends_at).starts_at, e.ends_at);
            prop_assert_eq!(interval.epoch_at(e.ends_at - 1), e);
            let (_, m, d) = civil_from_days(e.starts_at / DAY);
            match interval {
                Interval::Daily => prop_assert_eq!(e.ends_at - e.starts_at, DAY),
                Interval::Weekly if e.starts_at != 0 => prop_assert_eq!((e.starts_at / DAY + 3).rem_euclid(7), 0),
                Interval::Weekly => prop_assert_eq!(e.ends_at, 4 * DAY),
                Interval::Monthly => prop_assert_eq!(d, 1),
                Interval::Yearly => prop_assert_eq!((m, d), (1, 1)),
            }
        }

        #[test]
        fn civil_round_trip(z in -1_000_000i64..1_000_000) {
            let (y, m, d) = civil_from_days(z);
            prop_assert_eq!(days_from_civil(y, m, d), z);
        }
    }
}
