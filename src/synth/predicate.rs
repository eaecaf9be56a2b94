//! Predicated rules (Pitchfork's `upper_bounded`): terms that differ on some inputs but agree
//! whenever the variables lie in a narrower range. Terms are fingerprinted again on inputs
//! drawn from that range; a pair equal there but not everywhere is a candidate, proven by z3
//! under the predicate.

use super::fingerprint::Range;
use super::term::typed_name;
use crate::ir::Elem;

/// The ranges tried for variables of type `base`: the narrower type's range (values that fit
/// in half the bits) and, for an unsigned type, the range of the signed type of its width.
pub fn ranges(base: Elem) -> Vec<Range> {
    let mut out = Vec::new();
    if let Some(n) = base.narrow().filter(|n| n.bits() >= 8) {
        out.push(Range::of(n));
    }
    if !base.is_signed() {
        if let Some(s) = base.signed() {
            out.push(Range {
                lo: 0,
                hi: s.max_value(),
            });
        }
    }
    out
}

/// `lower_bounded(x, lo) && upper_bounded(x, hi)` for each variable, leaving out a bound the
/// type already implies.
pub fn predicate_text(vars: &[(String, Elem)], r: Range) -> String {
    let mut parts = Vec::new();
    for (name, elem) in vars {
        let v = typed_name(name, *elem);
        if r.lo > elem.min_value() {
            parts.push(format!("lower_bounded({v}, {})", r.lo));
        }
        if r.hi < elem.max_value() {
            parts.push(format!("upper_bounded({v}, {})", r.hi));
        }
    }
    parts.join(" && ")
}
