//! Instructions whose semantics are simpler on operands in a range. NEON's `sshl` reads each
//! lane's shift count from the lane's low byte, signed, and HVX's `vasl` from its low bits: on
//! counts that byte (those bits) holds, the reading is the count itself, and on counts of at
//! least zero the right shift for negative counts never happens. A lowering's pattern is
//! specialized to each such range of an operand by folding what the range decides: conversions
//! that keep the value, comparisons the range decides, selects of a decided condition, shifts
//! left and back that keep the value. Where that changes the pattern, the specialized one is
//! another lowering, taken only where the e-graph's bounds analysis (`bounds.egg`) puts the
//! operand in the range. Every selection is proven by z3 as always.

use super::lowering::{Bound, Lowering};
use super::simplify::simplify;
use crate::ir::{Elem, Expr, Op};
use crate::semantics::read_ranges::{candidate_ranges, constant_value, low_ones, Range};
use crate::semantics::sample::agree_on_random_inputs;
use std::collections::HashMap;
use std::rc::Rc;

/// The lowering specialized to each range of an operand its pattern reads in part, where that
/// changes the pattern.
pub fn ranged_variants(l: &Lowering) -> Vec<Lowering> {
    let mut out: Vec<Lowering> = Vec::new();
    for (wildcard, elem, range) in candidate_ranges(&l.pattern) {
        let Some(range) = intersect(range, (elem.min_value(), elem.max_value())) else {
            continue;
        };
        let (specialized, _) = specialize(&l.pattern, &wildcard, range);
        let specialized = retype_single_use(&simplify(&specialized), &wildcard, range);
        if specialized.size() >= l.pattern.size() || out.iter().any(|o| o.pattern == specialized) {
            continue;
        }
        let range = one_past(&l.pattern, &specialized, &wildcard, range);
        out.push(Lowering {
            pattern: specialized,
            source: format!("{} on {wildcard} in [{}, {}]", l.source, range.0, range.1),
            bounds: vec![Bound {
                wildcard: wildcard.clone(),
                lo: range.0,
                hi: range.1,
            }],
            ..l.clone()
        });
    }
    out
}

/// Samples of the other operands on which the pattern and its specialization must agree at
/// the count one past a range.
const ONE_PAST_SAMPLES: usize = 64;
const ONE_PAST_SEED: u64 = 0x0e_9a57;

/// `range` (from zero up) widened by one past its top where the instruction computes there
/// what its specialization does, checked by evaluation on random and edge values of the other
/// operands: HVX's `vlsr` reads a count's low five bits signed, so 16 reads as -16, a left
/// shift by 16, zero as the right shift of a 16-bit lane by 16 is; a count clamped to the width
/// (`min(b, 16)`, the clamp Halide's shifts get) then takes it. Every selection is proven by z3.
fn one_past(pattern: &Rc<Expr>, specialized: &Rc<Expr>, wildcard: &str, range: Range) -> Range {
    let next = range.1 + 1;
    let at_next = |e: &Rc<Expr>| {
        let mut ty = None;
        e.walk(&mut |n| {
            if matches!(&n.op, Op::Var(v) if v == wildcard) {
                ty = Some(n.ty);
            }
        });
        let ty = ty.filter(|t| t.elem.is_int() && next <= t.elem.max_value())?;
        let lanes = vec![(next as u128) & ty.elem.mask(); ty.lanes as usize];
        let map = HashMap::from([(wildcard.to_string(), Rc::new(Expr::constant(ty, lanes)))]);
        Some(e.substitute(&map))
    };
    match (range.0 >= 0, at_next(pattern), at_next(specialized)) {
        (true, Some(a), Some(b))
            if agree_on_random_inputs(&a, &b, ONE_PAST_SAMPLES, ONE_PAST_SEED) =>
        {
            (range.0, next)
        }
        _ => range,
    }
}

fn intersect(a: Range, b: Range) -> Option<Range> {
    let r = (a.0.max(b.0), a.1.min(b.1));
    (r.0 <= r.1).then_some(r)
}

fn holds(elem: Elem, r: Range) -> bool {
    elem.is_int() && r.0 >= elem.min_value() && r.1 <= elem.max_value()
}

/// `e` with what `wildcard` in `range` decides folded, and the range of `e`'s lanes where
/// known.
fn specialize(e: &Rc<Expr>, wildcard: &str, range: Range) -> (Rc<Expr>, Option<Range>) {
    if let Op::Var(name) = &e.op {
        return (e.clone(), (name == wildcard).then_some(range));
    }
    if let Some(v) = constant_value(e) {
        return (e.clone(), Some((v, v)));
    }
    let (args, ranges): (Vec<Rc<Expr>>, Vec<Option<Range>>) = e
        .args
        .iter()
        .map(|a| specialize(a, wildcard, range))
        .unzip();
    let rebuilt = || {
        Rc::new(Expr {
            op: e.op.clone(),
            ty: e.ty,
            args: args.clone(),
        })
    };
    let elem = e.ty.elem;
    match (&e.op, ranges.as_slice()) {
        // A conversion that keeps the value; one back to the type its operand was converted
        // from, keeping the value too, is that operand.
        (Op::Cast(_) | Op::Bitcast(_), [Some(r)]) if holds(elem, *r) => {
            let inner = &args[0];
            let unwrapped = match (&inner.op, inner.args.as_slice()) {
                (Op::Cast(_) | Op::Bitcast(_), [y]) if y.ty == e.ty => Some(y.clone()),
                _ => None,
            };
            (unwrapped.unwrap_or_else(rebuilt), Some(*r))
        }
        (Op::Shl, [Some(r), Some((k, k2))]) if k == k2 && (0..elem.bits() as i128).contains(k) => {
            let shifted = (r.0 << k, r.1 << k);
            (rebuilt(), holds(elem, shifted).then_some(shifted))
        }
        // A shift right undoing a shift left that kept the value.
        (Op::Shr, [Some(r), Some((k, k2))]) if k == k2 && (0..elem.bits() as i128).contains(k) => {
            let inner = &args[0];
            let undone = match (&inner.op, inner.args.as_slice()) {
                (Op::Shl, [y, k_left]) if constant_value(k_left) == Some(*k) => Some(y.clone()),
                _ => None,
            };
            (undone.unwrap_or_else(rebuilt), Some((r.0 >> k, r.1 >> k)))
        }
        (Op::Neg, [Some(r)]) if holds(elem, (-r.1, -r.0)) => (rebuilt(), Some((-r.1, -r.0))),
        // A mask keeping every bit the range's values hold: the value itself.
        (Op::And, [Some(a), Some(b)]) => {
            let kept = |r: &Range, mask: &Range| {
                mask.0 == mask.1 && r.0 >= 0 && r.1 < 1i128 << low_ones(elem, mask.0).min(126)
            };
            match (kept(a, b), kept(b, a)) {
                (true, _) => (args[0].clone(), Some(*a)),
                (_, true) => (args[1].clone(), Some(*b)),
                _ => (rebuilt(), None),
            }
        }
        // A comparison the ranges decide, as a constant mask.
        (Op::Lt | Op::Le | Op::Gt | Op::Ge, [Some(a), Some(b)]) => {
            let decided = match e.op {
                Op::Lt => decide(a.1 < b.0, a.0 >= b.1),
                Op::Le => decide(a.1 <= b.0, a.0 > b.1),
                Op::Gt => decide(a.0 > b.1, a.1 <= b.0),
                _ => decide(a.0 >= b.1, a.1 < b.0),
            };
            match decided {
                Some(v) => (
                    Rc::new(Expr::constant(e.ty, vec![v as u128])),
                    Some((v as i128, v as i128)),
                ),
                None => (rebuilt(), None),
            }
        }
        (Op::Select, [Some((c, c2)), ..]) if c == c2 => {
            let arm = if *c != 0 { 1 } else { 2 };
            (args[arm].clone(), ranges[arm])
        }
        _ => (rebuilt(), None),
    }
}

/// `Some(true)` when `yes`, `Some(false)` when `no`, else undecided.
fn decide(yes: bool, no: bool) -> Option<bool> {
    match (yes, no) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    }
}

/// A wildcard read only once, reinterpreted (or converted keeping its value) to a type of the
/// same width, becomes a wildcard of that type: the pattern then matches the value as the
/// input holds it, and the instruction's operand reinterprets it back.
fn retype_single_use(e: &Rc<Expr>, wildcard: &str, range: Range) -> Rc<Expr> {
    let mut uses = 0;
    e.walk(&mut |n| uses += usize::from(matches!(&n.op, Op::Var(v) if v == wildcard)));
    if uses != 1 {
        return e.clone();
    }
    fn go(e: &Rc<Expr>, wildcard: &str, range: Range) -> Rc<Expr> {
        match (&e.op, e.args.as_slice()) {
            (Op::Cast(_) | Op::Bitcast(_), [x])
                if matches!(&x.op, Op::Var(v) if v == wildcard)
                    && x.ty.bits() == e.ty.bits()
                    && holds(e.ty.elem, range) =>
            {
                Rc::new(Expr::var(wildcard, e.ty))
            }
            _ if e.args.is_empty() => e.clone(),
            _ => Rc::new(Expr {
                op: e.op.clone(),
                ty: e.ty,
                args: e.args.iter().map(|a| go(a, wildcard, range)).collect(),
            }),
        }
    }
    go(e, wildcard, range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::forms::elaborate_expression;
    use crate::ir::Macros;
    use crate::select::lowering::Arg;
    use std::collections::HashMap;

    fn lowering(semantics: &str) -> Lowering {
        let pattern =
            elaborate_expression(semantics, "test", &Macros::default(), 8, &HashMap::new())
                .unwrap();
        Lowering {
            instruction: 0,
            pattern: simplify(&pattern),
            args: vec![Arg::Wildcard("a".into()), Arg::Wildcard("b".into())],
            source: "sshl".into(),
            bounds: vec![],
            one_lane: false,
            result_from: None,
        }
    }

    /// NEON's `sshl` on counts its low byte holds is Halide's shift by a signed count, and on
    /// counts from zero up a left shift; a select by a count compared with a constant is, from
    /// the constant up, its other arm.
    #[test]
    fn a_shift_reading_the_low_byte_of_its_count_is_a_plain_shift_on_counts_that_byte_holds() {
        let sshl = lowering(
            "(select (lt (cast i16 (cast i8 (var b <8 x i16>))) (const <8 x i16> 0)) \
             (shr (var a <8 x i16>) (bitcast i16 (bitcast u16 (neg (cast i16 (cast i8 (var b <8 x i16>))))))) \
             (shl (var a <8 x i16>) (bitcast i16 (cast i16 (cast i8 (var b <8 x i16>))))))",
        );
        let variants: Vec<(String, i128, i128)> = ranged_variants(&sshl)
            .iter()
            .map(|l| (l.pattern.to_string(), l.bounds[0].lo, l.bounds[0].hi))
            .collect();
        assert_eq!(
            variants,
            vec![
                (
                    "(select (lt (var b <8 x i16>) (const <8 x i16> 0)) \
                     (shr (var a <8 x i16>) (neg (var b <8 x i16>))) \
                     (shl (var a <8 x i16>) (var b <8 x i16>)))"
                        .to_string(),
                    -128,
                    127
                ),
                (
                    "(shl (var a <8 x i16>) (var b <8 x i16>))".to_string(),
                    0,
                    127
                ),
            ]
        );
        // A count compared with a constant: from the constant up, the select is its other arm.
        let whole = lowering(
            "(select (lt (var b <8 x i16>) (const <8 x i16> 1)) (var a <8 x i16>) (neg (var a <8 x i16>)))",
        );
        let folded: Vec<String> = ranged_variants(&whole)
            .iter()
            .map(|l| l.pattern.to_string())
            .collect();
        assert_eq!(folded, vec!["(neg (var a <8 x i16>))".to_string()]);
    }

    /// `pshufb` masks its index to the table's 16 bytes and the zeroing bit: on indices of
    /// 0 to 15 the mask keeps them, and it is a plain lookup.
    #[test]
    fn a_lookup_masking_its_index_is_a_plain_lookup_on_indices_the_mask_keeps() {
        let pshufb =
            lowering("(lookup (var a <8 x i8>) (and (var b <8 x i8>) (const <8 x i8> -113)))");
        let variants: Vec<(String, i128, i128)> = ranged_variants(&pshufb)
            .iter()
            .map(|l| (l.pattern.to_string(), l.bounds[0].lo, l.bounds[0].hi))
            .collect();
        assert_eq!(
            variants,
            vec![(
                "(lookup (var a <8 x i8>) (var b <8 x i8>))".to_string(),
                0,
                15
            )]
        );
    }

    /// HVX's `vlsr` reads its count's low five bits signed: a logical right shift on counts of
    /// 0 to 15, and on 16 too (read as -16, a left shift by 16: zero, as the right shift by
    /// 16 is), so a count clamped to the width takes it; `vasl` shifts right arithmetically
    /// where the count reads negative, which is no left shift by 16 of a negative lane.
    #[test]
    fn a_count_one_past_the_read_range_is_taken_where_the_instruction_agrees_there() {
        let count =
            "(shr (shl (bitcast i16 (var b <8 x i16>)) (const <8 x i16> 11)) (const <8 x i16> 11))";
        let vlsr = lowering(&format!(
            "(bitcast i16 (select (lt {count} (const <8 x i16> 0)) \
             (shl (bitcast u16 (var a <8 x i16>)) (bitcast u16 (neg {count}))) \
             (shr (bitcast u16 (var a <8 x i16>)) (bitcast u16 {count}))))"
        ));
        let vasl = lowering(&format!(
            "(select (lt {count} (const <8 x i16> 0)) \
             (shr (var a <8 x i16>) (bitcast i16 (neg {count}))) \
             (shl (var a <8 x i16>) (bitcast i16 {count})))"
        ));
        let from_zero = |l: &Lowering| {
            ranged_variants(l)
                .iter()
                .find(|v| v.bounds[0].lo == 0)
                .map(|v| v.bounds[0].hi)
        };
        assert_eq!(from_zero(&vlsr), Some(16));
        assert_eq!(from_zero(&vasl), Some(15));
    }
}
