//! Which rewrites of a program can apply to its input: those whose left side needs only node
//! kinds the input holds or that rewrites reached before make. Lowerings (into instructions,
//! and the rewrites sound by construction that lead to them) are followed to a fixpoint; the
//! stored rules (lift, simplify and lower), whose identities chain without end, for
//! [`IR_ROUNDS`] rounds (simplify rules for one), each followed by lowerings to a fixpoint.
//! Node kinds are operator names for a first untyped cut over the rules, and typed heads for
//! the rewrites of the program.

use std::collections::BTreeSet;

/// Rounds of stored lift and lower rules followed from the input (simplify rules, the most
/// numerous, in the first round only). Lifting often takes two rules (`(x + 8) / 16` to a
/// rounding shift, then its saturating narrow); deeper chains make the e-graph larger without
/// changing what the compile tests select.
pub const IR_ROUNDS: usize = 2;

/// What one rewrite needs before it can match and what its right side makes.
pub struct Step<N> {
    /// A lowering (followed to a fixpoint) rather than a stored rule.
    pub lowering: bool,
    /// A simplify rule, followed in the first round only.
    pub simplify: bool,
    pub needs: BTreeSet<N>,
    pub makes: BTreeSet<N>,
}

/// Which steps can apply, starting from `nodes` (which ends holding every kind reached);
/// `close` adds the kinds the e-graph derives by itself from those it holds.
pub fn reach<N: Ord + Clone>(
    steps: &[Step<N>],
    nodes: &mut BTreeSet<N>,
    close: impl Fn(&mut BTreeSet<N>),
) -> Vec<bool> {
    let mut reached = vec![false; steps.len()];
    let lower = |nodes: &mut BTreeSet<N>, reached: &mut [bool]| loop {
        let before = nodes.len();
        for (s, r) in steps.iter().zip(reached.iter_mut()) {
            if s.lowering && s.needs.is_subset(nodes) {
                *r = true;
                nodes.extend(s.makes.iter().cloned());
            }
        }
        close(nodes);
        if nodes.len() == before {
            break;
        }
    };
    lower(nodes, &mut reached);
    for round in 0..IR_ROUNDS {
        let mut next = nodes.clone();
        for (s, r) in steps.iter().zip(reached.iter_mut()) {
            if !s.lowering && (round == 0 || !s.simplify) && s.needs.is_subset(nodes) {
                *r = true;
                next.extend(s.makes.iter().cloned());
            }
        }
        *nodes = next;
        lower(nodes, &mut reached);
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOWERING: u8 = 0;
    const RULE: u8 = 1;
    const SIMPLIFY: u8 = 2;

    fn step(kind: u8, needs: &[&'static str], makes: &[&'static str]) -> Step<&'static str> {
        Step {
            lowering: kind == LOWERING,
            simplify: kind == SIMPLIFY,
            needs: needs.iter().copied().collect(),
            makes: makes.iter().copied().collect(),
        }
    }

    #[test]
    fn lowerings_chain_to_a_fixpoint_rules_for_two_rounds_and_simplify_rules_for_one() {
        assert_eq!(IR_ROUNDS, 2);
        let steps = [
            step(LOWERING, &["Add"], &["Shl"]),
            step(LOWERING, &["Shl"], &["Sub"]),
            step(RULE, &["Sub"], &["Neg"]),
            step(RULE, &["Neg"], &["Not"]),
            step(RULE, &["Not"], &["Xor"]),
            step(SIMPLIFY, &["Neg"], &["Or"]),
            step(LOWERING, &["Mul"], &["And"]),
            step(SIMPLIFY, &["Add"], &["Min"]),
        ];
        let mut nodes: BTreeSet<&str> = ["Add"].into_iter().collect();
        let reached = reach(&steps, &mut nodes, |_| {});
        assert_eq!(reached, [true, true, true, true, false, false, false, true]);
        assert_eq!(
            nodes.into_iter().collect::<Vec<_>>(),
            ["Add", "Min", "Neg", "Not", "Shl", "Sub"]
        );
    }
}
