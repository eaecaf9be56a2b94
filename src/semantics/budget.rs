//! z3's budgets, in its resource units rather than in time: a query is stopped after a count
//! of solver steps (z3's `rlimit`), so the same query gets the same verdict on an idle, a
//! loaded or a slower machine. Wall-clock budgets did not: under a CI's load, HVX's
//! `x_i32 % 7` lost two cut-point pairs that prove in 0.9 s alone and was scalarized.
//!
//! Budgets are written in milliseconds, meaning the steps z3 takes in that time on the machine
//! the rates were measured on ([`Theory::units_per_ms`]); a wall-clock timeout of
//! [`WALL_SLACK`] times as long stays as a net for steps z3 does not count.
//!
//! A whole proof's budget: a proof by parts ([`super::prove::prove_equivalent_by_parts`])
//! asks z3 many queries (operands, numerals generalized, cut points, each again by parts),
//! each with the per-query budget; without a bound on the whole, a selection z3 cannot decide
//! took ten minutes at a minute a query. The outermost proof sets a deadline in the same
//! units, and every query within it gets what is left, at most its own budget.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use z3::{SatResult, Solver};

/// How many per-query budgets a whole proof may take.
const QUERIES_PER_PROOF: u32 = 4;

/// How many times its budget a query, or a whole proof, may take in wall-clock time before it
/// is stopped whatever its steps.
const WALL_SLACK: u32 = 4;

/// What a query is over: z3 takes steps at different rates on each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theory {
    /// Bit-vectors alone, on the incremental core or bit-blasted.
    BitVectors,
    /// Reals (f32 lanes), nonlinear where lanes are multiplied.
    Reals,
}

impl Theory {
    /// z3's resource units per millisecond of budget: the median rate of the queries that
    /// ran out of time over the selection corpus and the SSE->NEON ports (bit-vectors: 3,600
    /// units/ms bit-blasted, 4,900 on the core; reals: 650-750 on the core) on the machine of
    /// the wall-clock budgets (2 cores, z3 4.8.12).
    fn units_per_ms(self) -> u64 {
        match self {
            Theory::BitVectors => 4_000,
            Theory::Reals => 700,
        }
    }
}

thread_local! {
    /// Milliseconds of budget this thread's queries have spent, by their units.
    static SPENT: Cell<f64> = const { Cell::new(0.0) };
    /// The outermost proof's deadline: milliseconds of budget spent, and a wall-clock net.
    static DEADLINE: Cell<Option<(f64, Instant)>> = const { Cell::new(None) };
}

/// Milliseconds of budget this thread's queries have spent: a clock for a search made of
/// queries (the cut points' pairs) that a loaded machine does not speed up.
pub fn spent_ms() -> f64 {
    SPENT.get()
}

/// `prove` under a deadline of [`QUERIES_PER_PROOF`] times `timeout_ms`, unless a proof it is
/// part of set one already.
pub fn within_deadline<R>(timeout_ms: u32, prove: impl FnOnce() -> R) -> R {
    if DEADLINE.get().is_some() {
        return prove();
    }
    let whole = u64::from(timeout_ms) * u64::from(QUERIES_PER_PROOF);
    let net = Instant::now() + Duration::from_millis(whole * u64::from(WALL_SLACK));
    DEADLINE.set(Some((spent_ms() + whole as f64, net)));
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
    let Some((deadline, net)) = DEADLINE.get() else {
        return Some(timeout_ms);
    };
    let left = (deadline - spent_ms()).max(0.0).min(f64::from(timeout_ms)) as u32;
    match left == 0 || Instant::now() >= net {
        true => None,
        false => Some(left),
    }
}

/// `ask` of `solver`, a query over `theory`, within `ms` of budget, charged to this thread's
/// spending by the units z3 counted.
pub fn check(
    solver: &Solver,
    theory: Theory,
    ms: u32,
    ask: impl FnOnce(&Solver) -> SatResult,
) -> SatResult {
    let mut params = z3::Params::new();
    let units = u64::from(ms) * theory.units_per_ms();
    params.set_u32("rlimit", u32::try_from(units).unwrap_or(u32::MAX).max(1));
    params.set_u32("timeout", ms.saturating_mul(WALL_SLACK).max(1));
    solver.set_params(&params);
    let result = ask(solver);
    let spent = units_since_last_check(solver) as f64;
    SPENT.set(spent_ms() + spent / theory.units_per_ms() as f64);
    result
}

thread_local! {
    /// By context: the units z3 had counted at its last check.
    static COUNTED: RefCell<HashMap<usize, u64>> = RefCell::new(HashMap::new());
}

/// The address that names the thread's current z3 context.
fn context_key(context: &z3::Context) -> usize {
    context.get_z3_context().as_ptr() as usize
}

/// The resource units z3 counted in `solver`'s context since the last check in it: the check
/// just made, and whatever z3 did in the context between (simplifying, substituting). Read
/// from the checked solver's statistics, which give the context's count: the statistics of a
/// solver not yet checked cost z3 3 ms to make. The count is a 32-bit statistic: one smaller
/// than the last has wrapped around.
fn units_since_last_check(solver: &Solver) -> u64 {
    let counted = match solver.get_statistics().value("rlimit count") {
        Some(z3::StatisticsValue::UInt(n)) => u64::from(n),
        Some(z3::StatisticsValue::Double(n)) => n as u64,
        None => 0,
    };
    let context = context_key(solver.get_context());
    let before = COUNTED.with_borrow_mut(|c| c.insert(context, counted));
    match before {
        Some(before) if counted < before => counted + (1 << 32) - before,
        before => counted - before.unwrap_or(0),
    }
}

/// Forgets the thread's current context's count, as that context ends: a context made later
/// at the same address starts counting from nothing.
pub fn forget_this_context() {
    let context = context_key(&z3::Context::thread_local());
    COUNTED.with_borrow_mut(|c| c.remove(&context));
}

#[cfg(test)]
mod tests {
    use super::{budget, check, spent_ms, within_deadline, Theory};
    use z3::ast::BV;
    use z3::{SatResult, Solver};

    /// A query z3 takes long over: factoring the product of the primes 2^32 - 5 and 2^32 - 17
    /// into two numbers below 2^32.
    fn hard(solver: &Solver) {
        let (x, y) = (BV::new_const("x", 64), BV::new_const("y", 64));
        let one = BV::from_u64(1, 64);
        solver.assert(x.bvmul(&y).eq(BV::from_u64(0xffffffea_00000055, 64)));
        solver.assert(x.bvugt(&one));
        solver.assert(y.bvugt(&one));
        solver.assert(x.bvult(BV::from_u64(1 << 32, 64)));
        solver.assert(y.bvult(BV::from_u64(1 << 32, 64)));
    }

    #[test]
    fn a_query_stops_after_its_units_and_they_are_charged() {
        let solvers = [
            Solver::new(),
            Solver::new_for_logic("QF_BV").expect("a bit-vector solver"),
        ];
        for solver in solvers {
            hard(&solver);
            let before = spent_ms();
            let result = check(&solver, Theory::BitVectors, 20, |s| s.check());
            let spent = spent_ms() - before;
            assert_eq!(result, SatResult::Unknown);
            let reason = solver.get_reason_unknown().unwrap_or_default();
            assert!(reason.contains("resource"), "{reason}");
            assert!((19.0..30.0).contains(&spent), "{spent}");
        }
    }

    #[test]
    fn a_context_of_its_own_is_charged_its_units_and_forgotten_as_it_ends() {
        let contexts = || super::COUNTED.with_borrow(|c| c.len());
        let before = contexts();
        for _ in 0..3 {
            let spent = super::super::context::in_a_fresh_context(|| {
                let solver = Solver::new_for_logic("QF_BV").expect("a bit-vector solver");
                hard(&solver);
                let before = spent_ms();
                check(&solver, Theory::BitVectors, 20, |s| s.check());
                spent_ms() - before
            });
            assert!((19.0..30.0).contains(&spent), "{spent}");
        }
        // The first proof on a thread takes the thread's own context, which stays.
        assert!(contexts() <= before + 1, "{} -> {}", before, contexts());
    }

    #[test]
    fn a_query_gets_what_is_left_of_the_whole_proof_and_none_once_it_has_passed() {
        assert_eq!(budget(1_000), Some(1_000));
        let (early, nested, late) = within_deadline(10, || {
            let early = budget(5_000);
            // A nested proof keeps the outer deadline (40 ms of units from the start).
            let nested = within_deadline(60_000, || budget(60_000));
            let solver = Solver::new_for_logic("QF_BV").expect("a bit-vector solver");
            hard(&solver);
            while budget(1_000).is_some() {
                check(&solver, Theory::BitVectors, 10, |s| s.check());
            }
            (early, nested, budget(1_000))
        });
        assert_eq!(early, Some(40));
        assert_eq!(nested, Some(40));
        assert_eq!(late, None);
        assert_eq!(
            budget(1_000),
            Some(1_000),
            "the deadline is cleared afterwards"
        );
    }
}
