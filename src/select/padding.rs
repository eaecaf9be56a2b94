//! Lane counts the rules do not reach, padded. The rules lower a power of two of lanes within a
//! register (its low lanes), and halves split values down to registers; a value of 3, 12 or 24
//! bytes is neither, and every operator on it would be computed lane by lane, and three
//! registers halve into one and a half, which many operators then compute lane by lane too.
//! As a compiler widens such a vector, the input is selected at the nearest lane count the
//! rules reach (its lanes past the input's own read as zeros, as a padded input's are) and the
//! result is that selection's low lanes; the proof is of those lanes against the input as
//! given.

use super::catalog::Catalog;
use super::node::Node;
use super::term::Term;
use crate::ir::{Elem, Expr};

/// The lane counts and element widths of `input`'s values (masks follow what they compare).
fn values(input: &Expr) -> Vec<(u32, u32)> {
    let mut values = Vec::new();
    input.walk(&mut |n| {
        if n.ty.elem != Elem::Bool {
            values.push((n.ty.lanes, n.ty.elem.bits()));
        }
    });
    values
}

/// Whether every value of `input` is whole registers (three registers of bytes, say): its
/// own lane count may select as well as the padded one, and both are tried.
pub fn whole_registers(input: &Expr, register_bits: u32) -> bool {
    values(input)
        .iter()
        .all(|&(lanes, bits)| lanes.is_multiple_of((register_bits / bits).max(1)))
}

/// The lane count to select `input` at instead of its own, where some value of it has a lane
/// count that is not a power of two (the rules lower a power of two of lanes within one
/// register, halves split down to registers, and three registers halve into one and a half)
/// and a larger count, at most four times the next power of two, makes every one a power of
/// two (each value's lanes scaled alike); `None` where its own count does.
pub fn padded_lanes(input: &Expr) -> Option<u32> {
    let lanes = input.ty.lanes;
    let values = values(input);
    let all_reached = |at: u32| {
        values.iter().all(|&(own, _)| {
            let scaled = u64::from(own) * u64::from(at);
            scaled.is_multiple_of(u64::from(lanes)) && (scaled / u64::from(lanes)).is_power_of_two()
        })
    };
    if lanes == 0 || all_reached(lanes) {
        return None;
    }
    let most = lanes.checked_next_power_of_two()?.saturating_mul(4);
    (lanes + 1..=most).find(|&at| all_reached(at))
}

/// The first `lanes` lanes of an extracted result (`term`, read back as `root`): a result in
/// parts keeps the parts holding them, the last cut to its low lanes. `None` for a term of
/// another shape.
pub fn low_lanes(term: &Term, root: &Node, lanes: u32, catalog: &Catalog) -> Option<Term> {
    match (term, root) {
        (Term::OutPair(lo, hi), Node::Parts(parts)) if parts.len() == 2 => {
            let low = parts[0].ty(catalog).lanes;
            match lanes <= low {
                true => low_lanes(lo, &parts[0], lanes, catalog),
                false => Some(Term::OutPair(
                    lo.clone(),
                    Box::new(low_lanes(hi, &parts[1], lanes - low, catalog)?),
                )),
            }
        }
        (Term::Out(value), _) => {
            let ty = root.ty(catalog);
            if ty.lanes == lanes {
                return Some(term.clone());
            }
            let whole = match &**value {
                Term::Lanes { offset: 0, arg, .. } => arg.clone(),
                _ => value.clone(),
            };
            Some(Term::Out(Box::new(Term::Lanes {
                ty: ty.with_lanes(lanes),
                offset: 0,
                arg: whole,
            })))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::VecType;
    use std::rc::Rc;

    fn add(lanes: u32, elem: Elem) -> Expr {
        let ty = VecType::new(lanes, elem);
        Expr {
            op: crate::ir::Op::Add,
            ty,
            args: vec![Rc::new(Expr::var("a", ty)), Rc::new(Expr::var("b", ty))],
        }
    }

    #[test]
    fn lane_counts_that_are_powers_of_two_are_kept_and_others_padded() {
        for lanes in [1, 2, 4, 8, 16, 32, 64] {
            assert_eq!(padded_lanes(&add(lanes, Elem::U8)), None, "{lanes}");
        }
        assert_eq!(padded_lanes(&add(3, Elem::U8)), Some(4));
        assert_eq!(padded_lanes(&add(5, Elem::U8)), Some(8));
        assert_eq!(padded_lanes(&add(12, Elem::U8)), Some(16));
        assert_eq!(padded_lanes(&add(24, Elem::U8)), Some(32));
        assert_eq!(padded_lanes(&add(48, Elem::U8)), Some(64));
        // NEON's 128-bit registers: 48 bytes and 12 words are three whole registers, 24 bytes
        // are not.
        assert!(whole_registers(&add(48, Elem::U8), 128));
        assert!(whole_registers(&add(12, Elem::U32), 128));
        assert!(!whole_registers(&add(24, Elem::U8), 128));
    }
}
