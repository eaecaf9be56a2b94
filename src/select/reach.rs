//! Which rewrites of a program can apply to its input: those whose left side needs only node
//! kinds the input holds or that rewrites reached before make. Lowerings (the lower ruleset)
//! are followed to a fixpoint; lift and simplify rules, whose identities chain without end,
//! for [`IR_ROUNDS`] rounds, each followed by lowerings to a fixpoint again. Node kinds are
//! operator names for a first untyped cut over the rules, and typed heads for the rewrites
//! of the program.

use std::collections::BTreeSet;

/// Rounds of lift and simplify rules followed from the input. Deeper chains of identities
/// make the e-graph larger without changing what is selected (same selections and costs at
/// 1, 2, 3 and unbounded rounds on the compile tests and the synthesis issue's examples).
pub const IR_ROUNDS: usize = 1;

/// What one rewrite needs before it can match and what its right side makes.
pub struct Step<N> {
    /// A lowering (followed to a fixpoint) rather than a lift or simplify rule.
    pub lowering: bool,
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
    for _ in 0..IR_ROUNDS {
        let mut next = nodes.clone();
        for (s, r) in steps.iter().zip(reached.iter_mut()) {
            if !s.lowering && s.needs.is_subset(nodes) {
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

    fn step(lowering: bool, needs: &[&'static str], makes: &[&'static str]) -> Step<&'static str> {
        Step {
            lowering,
            needs: needs.iter().copied().collect(),
            makes: makes.iter().copied().collect(),
        }
    }

    #[test]
    fn lowerings_chain_to_a_fixpoint_and_identities_for_one_round() {
        let steps = [
            step(true, &["Add"], &["Shl"]),
            step(true, &["Shl"], &["Sub"]),
            step(false, &["Sub"], &["Neg"]),
            step(false, &["Neg"], &["Not"]),
            step(true, &["Not"], &["Xor"]),
            step(true, &["Mul"], &["And"]),
        ];
        let mut nodes: BTreeSet<&str> = ["Add"].into_iter().collect();
        let reached = reach(&steps, &mut nodes, |_| {});
        assert_eq!(reached, [true, true, true, false, false, false]);
        assert_eq!(
            nodes.into_iter().collect::<Vec<_>>(),
            ["Add", "Neg", "Shl", "Sub"]
        );
    }
}
