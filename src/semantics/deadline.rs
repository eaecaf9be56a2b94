//! A whole proof's time: a proof by parts ([`super::prove::prove_equivalent_by_parts`]) asks
//! z3 many queries (operands, numerals generalized, cut points, each again by parts), each with
//! the per-query budget; without a bound on the whole, a selection z3 cannot decide took ten
//! minutes at a minute a query. The outermost proof sets a deadline, and every query within it
//! gets what is left, at most its own budget.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// How many per-query budgets a whole proof may take.
const QUERIES_PER_PROOF: u32 = 4;

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// `prove` under a deadline of [`QUERIES_PER_PROOF`] times `timeout_ms` from now, unless a
/// proof it is part of set one already.
pub fn within_deadline<R>(timeout_ms: u32, prove: impl FnOnce() -> R) -> R {
    if DEADLINE.get().is_some() {
        return prove();
    }
    let budget = Duration::from_millis(u64::from(timeout_ms) * u64::from(QUERIES_PER_PROOF));
    DEADLINE.set(Some(Instant::now() + budget));
    /// Clears the deadline however `prove` ends (an unwinding panic included).
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            DEADLINE.set(None);
        }
    }
    let _clear = Clear;
    prove()
}

/// A query's budget: `timeout_ms`, or the milliseconds left before the deadline if fewer;
/// `None` once it has passed.
pub fn budget(timeout_ms: u32) -> Option<u32> {
    let Some(deadline) = DEADLINE.get() else {
        return Some(timeout_ms);
    };
    let left = deadline
        .saturating_duration_since(Instant::now())
        .as_millis();
    match u32::try_from(left).unwrap_or(u32::MAX).min(timeout_ms) {
        0 => None,
        ms => Some(ms),
    }
}

#[cfg(test)]
mod tests {
    use super::{budget, within_deadline};
    use std::time::Duration;

    #[test]
    fn a_query_gets_what_is_left_of_the_whole_proof_and_none_once_it_has_passed() {
        assert_eq!(budget(1_000), Some(1_000));
        let (early, late) = within_deadline(500, || {
            let early = budget(5_000);
            // A nested proof keeps the outer deadline (2 s from the start).
            let nested = within_deadline(60_000, || budget(60_000));
            std::thread::sleep(Duration::from_millis(2_100));
            (early.zip(nested), budget(1_000))
        });
        let (early, nested) = early.expect("time left at the start");
        assert!(early <= 2_000, "{early}");
        assert!(nested <= 2_000, "{nested}");
        assert_eq!(late, None);
        assert_eq!(
            budget(1_000),
            Some(1_000),
            "the deadline is cleared afterwards"
        );
    }
}
