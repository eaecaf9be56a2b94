//! Selection by halves: an expression whose e-graph passes isadb's budget, and whose every lane
//! group reads only its own lanes of the inputs (lane-wise operators, conversions, sums of
//! groups of lanes, splat constants), is the same expression at half the lanes computed twice,
//! on the low and on the high lanes of its inputs. The half is selected once (by halves again
//! if it too passes the budget); its extracted term, read at the inputs' high lanes, is the
//! other half's. The two are proven equal to the whole expression like any selection.

use super::term::Term;
use crate::ir::{Expr, Op};
use std::collections::HashMap;
use std::rc::Rc;

/// The expression over the low half of its inputs' lanes, computing the low half of its
/// lanes; `None` when some operator moves lanes across the halves (slices, concatenations,
/// shuffles, broadcasts, table lookups), a constant differs between lanes or a lane count is
/// odd.
pub fn low_half(e: &Rc<Expr>) -> Option<Rc<Expr>> {
    halve(e, &mut HashMap::new())
}

fn halve(e: &Rc<Expr>, done: &mut HashMap<*const Expr, Rc<Expr>>) -> Option<Rc<Expr>> {
    if let Some(h) = done.get(&Rc::as_ptr(e)) {
        return Some(h.clone());
    }
    if e.ty.lanes < 2 || !e.ty.lanes.is_multiple_of(2) {
        return None;
    }
    let ty = e.ty.with_lanes(e.ty.lanes / 2);
    let half = match &e.op {
        Op::Var(name) => Expr::var(name, ty),
        Op::Const(values) if values.len() == 1 => Expr::constant(ty, values.clone()),
        Op::Const(_)
        | Op::Broadcast(_)
        | Op::Concat
        | Op::Slice { .. }
        | Op::Interleave
        | Op::Shuffle(_)
        | Op::Lookup
        | Op::Compress
        | Op::Expand => return None,
        op => {
            let args = e
                .args
                .iter()
                .map(|a| halve(a, done))
                .collect::<Option<Vec<_>>>()?;
            Expr::build(op.clone(), args).ok().filter(|h| h.ty == ty)?
        }
    };
    let half = Rc::new(half);
    done.insert(Rc::as_ptr(e), half.clone());
    Some(half)
}

/// The extracted term of the whole expression from `low`, the extracted term of its
/// [`low_half`] `half`: the low half's term beside itself read at the inputs' high lanes.
/// `None` when the low half's term reads past its inputs' lanes (a narrow input padded with
/// zeros to a register), which the whole's inputs do not have there.
pub fn both_halves(low: &Term, half: &Expr) -> Option<Term> {
    let lanes: HashMap<String, u32> = half
        .vars()
        .into_iter()
        .map(|(name, ty)| (name, ty.lanes))
        .collect();
    let part = |t: &Term, high: bool| -> Option<Term> {
        let t = match t {
            Term::Out(x) => (**x).clone(),
            Term::OutPair(lo, hi) => Term::Pair {
                ty: half.ty,
                lo: lo.clone(),
                hi: hi.clone(),
            },
            _ => return None,
        };
        read_at(&t, &lanes, high)
    };
    Some(Term::OutPair(
        Box::new(part(low, false)?),
        Box::new(part(low, true)?),
    ))
}

/// `t` with its reads of inputs moved to their high halves (`high`) or kept; `None` if one
/// reads past its input's half.
fn read_at(t: &Term, lanes: &HashMap<String, u32>, high: bool) -> Option<Term> {
    let moved = |ty: crate::ir::VecType, name: &String, offset: i64| {
        let half = i64::from(*lanes.get(name)?);
        (offset + i64::from(ty.lanes) <= half).then(|| Term::Part {
            ty,
            name: name.clone(),
            offset: offset + if high { half } else { 0 },
        })
    };
    match t {
        Term::Var { ty, name } => moved(*ty, name, 0),
        Term::Part { ty, name, offset } => moved(*ty, name, *offset),
        _ => t.try_map_children(&mut |c| read_at(c, lanes, high)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::forms::elaborate_expression;
    use crate::ir::Macros;

    fn expr(text: &str, lanes: u32) -> Rc<Expr> {
        elaborate_expression(text, "test", &Macros::default(), lanes, &HashMap::new()).unwrap()
    }

    #[test]
    fn sums_of_groups_halve_and_moved_lanes_do_not() {
        let dot = "reduce_add(4, i32(x_u8) * i32(y_u8))";
        let half = low_half(&expr(dot, 16)).unwrap();
        assert_eq!(half.to_string(), expr(dot, 8).to_string());
        assert_eq!(half.vars()[0].1.lanes, 32);
        for moved in ["concat(x_u8, y_u8)", "x_u8 + 1", "interleave(x_u8, y_u8)"] {
            let whole = expr(moved, 16);
            assert_eq!(
                low_half(&whole).is_some(),
                moved == "x_u8 + 1",
                "{moved} halves only if lane-wise"
            );
        }
        assert!(low_half(&expr("x_u8 + y_u8", 1)).is_none());
    }

    #[test]
    fn the_high_half_reads_the_inputs_high_lanes_and_never_padding() {
        let half = expr("x_u8 + y_u8", 16);
        let low = Term::parse(r#"(Out (I_add (Var "u8x16" "x_u8") (Part "u8x8" "y_u8" 8)))"#);
        let both = both_halves(&low.unwrap(), &half).unwrap().to_string();
        assert_eq!(
            both,
            r#"(OutPair (I_add (Part "u8x16" "x_u8" 0) (Part "u8x8" "y_u8" 8)) (I_add (Part "u8x16" "x_u8" 16) (Part "u8x8" "y_u8" 24)))"#
        );
        let padded = Term::parse(r#"(Out (I_add (Var "u8x32" "x_u8") (Var "u8x32" "y_u8")))"#);
        assert!(both_halves(&padded.unwrap(), &half).is_none());
    }
}
