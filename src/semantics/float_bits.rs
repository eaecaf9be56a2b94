//! The bits of f32 lanes in z3, where f32 lanes are reals (`super::reals`): a bitcast from f32
//! is the uninterpreted `f32_bits`, one to f32 the uninterpreted `f32_of_bits`, and each term
//! encoded adds the fact that the other undoes it ([`FloatBits::axioms`]): a round trip keeps
//! the bits, as the interpreter's raw lanes do. Constants convert exactly (finite ones), an
//! if-then-else converts arm by arm, and bits chosen by a condition (a bitwise select by a
//! mask) are expanded on it, so `vbsl` of an `fcmgt` mask is the select of the two values.
//! The sign bit cleared, set or flipped is `abs`, `-abs` and negation ([`sign_bit_idiom`]);
//! anything else about the bits (the exponent, the mantissa) is unknown to z3: not proven.

use super::attempt::nodes;
use super::reals::real_of_f32;
use std::cell::RefCell;
use z3::ast::{Ast, Bool, Dynamic, Real, BV};
use z3::{DeclKind, FuncDecl, Sort, SortKind};

/// Conditions a lane's bits are expanded on at most (a select by a mask of `&&` of two
/// comparisons takes two); beyond, the bits stay uninterpreted.
const MAX_EXPANSIONS: u32 = 4;

/// The two uninterpreted functions and the facts the terms made with them need.
pub struct FloatBits {
    f32_bits: FuncDecl,
    f32_of_bits: FuncDecl,
    axioms: RefCell<Vec<Bool>>,
}

impl Default for FloatBits {
    fn default() -> Self {
        Self::new()
    }
}

impl FloatBits {
    pub fn new() -> FloatBits {
        FloatBits {
            f32_bits: FuncDecl::new("f32_bits", &[&Sort::real()], &Sort::bitvector(32)),
            f32_of_bits: FuncDecl::new("f32_of_bits", &[&Sort::bitvector(32)], &Sort::real()),
            axioms: RefCell::new(Vec::new()),
        }
    }

    /// What every query over the lanes encoded so far must assume (assert them in its solver):
    /// a bitcast from f32 and one back to f32 undo each other.
    pub fn axioms(&self) -> Vec<Bool> {
        self.axioms.borrow().clone()
    }

    /// The 32 bits of an f32 lane: a constant's own, else `f32_bits(r)`.
    pub fn bits_of_real(&self, r: &Real) -> BV {
        let r = &r.simplify();
        if let Some(parts) = app_parts(r) {
            match parts {
                App::Ite(c, t, e) => {
                    let (t, e) = (t.as_real().expect("real"), e.as_real().expect("real"));
                    return c.ite(&self.bits_of_real(&t), &self.bits_of_real(&e));
                }
                App::Named(name, arg) if name == "f32_of_bits" => {
                    return arg.as_bv().expect("a bit-vector")
                }
                App::Named(..) => {}
            }
        }
        if let Some((num, den)) = r.as_rational() {
            let f = (num as f64 / den as f64) as f32;
            if real_of_f32(f).simplify().as_rational() == Some((num, den)) {
                return BV::from_u64(u64::from(f.to_bits()), 32);
            }
        }
        let bits = self.f32_bits.apply(&[r]).as_bv().expect("a bit-vector");
        let back = self.f32_of_bits.apply(&[&bits]).as_real().expect("a real");
        self.axioms.borrow_mut().push(back.eq(r));
        bits
    }

    /// The f32 lane of 32 bits: a finite constant's value, else `f32_of_bits(b)`.
    pub fn real_of_bits(&self, b: &BV) -> Real {
        self.real_of_bits_expanding(b, MAX_EXPANSIONS)
    }

    /// [`Self::real_of_bits`], expanding on at most `expansions` more conditions.
    fn real_of_bits_expanding(&self, b: &BV, expansions: u32) -> Real {
        let b = &b.simplify();
        if let Some(parts) = app_parts(b) {
            match parts {
                App::Ite(c, t, e) => {
                    let (t, e) = (t.as_bv().expect("bv"), e.as_bv().expect("bv"));
                    return c.ite(
                        &self.real_of_bits_expanding(&t, expansions),
                        &self.real_of_bits_expanding(&e, expansions),
                    );
                }
                App::Named(name, arg) if name == "f32_bits" => {
                    return arg.as_real().expect("a real")
                }
                App::Named(..) => {}
            }
        }
        if let Some(f) = b.as_u64().map(|c| f32::from_bits(c as u32)) {
            if f.is_finite() {
                return real_of_f32(f);
            }
        }
        if let Some(r) = sign_bit_idiom(b) {
            return r;
        }
        // Bits chosen by a condition (a bitwise select by a mask of it) are, case by case, the
        // bits of either side: expanded on the condition, each case simplifies.
        if let Some(c) = first_condition(b, 64).filter(|_| expansions > 0) {
            let case = |v: bool| b.substitute(&[(&c, &Bool::from_bool(v))]).simplify();
            let (t, e) = (case(true), case(false));
            if t != *b && e != *b {
                return c.ite(
                    &self.real_of_bits_expanding(&t, expansions - 1),
                    &self.real_of_bits_expanding(&e, expansions - 1),
                );
            }
        }
        let r = self.f32_of_bits.apply(&[b]).as_real().expect("a real");
        let back = self.f32_bits.apply(&[&r]).as_bv().expect("a bit-vector");
        self.axioms.borrow_mut().push(back.eq(b));
        r
    }
}

/// The value of an f32 lane's bits with the sign bit cleared (`abs`), set (`-abs`) or flipped
/// (negation), as z3's simplifier spells an `and`, `or` or `xor` of the sign bit:
/// `(concat S ((_ extract 30 0) (f32_bits r)))` with `S` `#b0`, `#b1` or the sign negated.
/// None for other bits.
fn sign_bit_idiom(b: &BV) -> Option<Real> {
    if !b.is_app() || b.decl().name() != "concat" {
        return None;
    }
    let [sign, magnitude] = &b.children()[..] else {
        return None;
    };
    let (sign, magnitude) = (sign.as_bv()?, magnitude.as_bv()?);
    if sign.get_size() != 1 || magnitude.get_size() != 31 || !magnitude.is_app() {
        return None;
    }
    let [bits] = &magnitude.children()[..] else {
        return None;
    };
    let bits = bits.as_bv()?;
    if !bits.is_app() || bits.decl().name() != "f32_bits" || magnitude != bits.extract(30, 0) {
        return None;
    }
    let r = bits.children().first()?.as_real()?;
    let abs = r.lt(real_of_f32(0.0)).ite(&r.unary_minus(), &r);
    if sign == BV::from_u64(0, 1) {
        Some(abs)
    } else if sign == BV::from_u64(1, 1) {
        Some(abs.unary_minus())
    } else if sign == bits.extract(31, 31).bvnot().simplify() {
        Some(r.unary_minus())
    } else {
        None
    }
}

/// A term's head, where it is an if-then-else or an application of a function of one argument.
enum App {
    Ite(Bool, Dynamic, Dynamic),
    Named(String, Dynamic),
}

fn app_parts(t: &impl Ast) -> Option<App> {
    if !t.is_app() {
        return None;
    }
    let decl = t.decl();
    let children = t.children();
    match (decl.kind(), &children[..]) {
        (DeclKind::Ite, [c, a, b]) => Some(App::Ite(c.as_bool()?, a.clone(), b.clone())),
        (DeclKind::Uninterpreted, [a]) => Some(App::Named(decl.name(), a.clone())),
        _ => None,
    }
}

/// The condition of an if-then-else within the first `budget` nodes of `t`, depth first.
fn first_condition(t: &impl Ast, budget: usize) -> Option<Bool> {
    let mut stack: Vec<Dynamic> = vec![Dynamic::from_ast(t)];
    let mut seen = 0;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > budget {
            return None;
        }
        if let Some(App::Ite(c, ..)) = app_parts(&n) {
            return Some(c);
        }
        if n.is_app() {
            stack.extend(n.children());
        }
    }
    None
}

/// Whether a query mentions no real number.
pub fn over_bit_vectors_alone(query: &Bool) -> bool {
    nodes(query)
        .iter()
        .all(|n| n.get_sort().kind() != SortKind::Real)
}

/// `query` with every `f32_bits(f32_of_bits(b))` read as `b`, as an axiom of every query says
/// ([`FloatBits::axioms`]): integer lanes moved as f32 lanes (a shuffle through `shufps`) are then
/// bit-vectors alone again, which the bit-blaster decides.
pub fn float_round_trips_folded(query: &Bool) -> Bool {
    let named = |n: &Dynamic, name: &str| n.is_app() && n.decl().name() == name;
    let trips: Vec<(Dynamic, Dynamic)> = nodes(query)
        .into_iter()
        .filter(|n| named(n, "f32_bits"))
        .filter_map(|n| {
            let real = n.children().into_iter().next()?;
            let bits = named(&real, "f32_of_bits").then(|| real.children())?;
            Some((n, bits.into_iter().next()?))
        })
        .collect();
    if trips.is_empty() {
        return query.clone();
    }
    let pairs: Vec<(&Dynamic, &Dynamic)> = trips.iter().map(|(a, b)| (a, b)).collect();
    query.substitute(&pairs).simplify()
}
