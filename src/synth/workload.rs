//! Workloads: the grammar of one piece of the search (an element type, the types in play, the
//! operators, idioms and literals), and bottom-up enumeration of every well-typed term up to a
//! size bound (Ruler's enumeration, with enumo's explicit workloads).

use super::term::{Head, Term};
use crate::ir::Elem;
use std::collections::BTreeSet;
use std::rc::Rc;

/// An idiom the grammar calls: its arity and the element type of its result, from the type of
/// its first operand (`None`: not defined there).
#[derive(Clone, Copy)]
pub struct IdiomSig {
    pub name: &'static str,
    pub arity: usize,
    pub result: fn(Elem) -> Option<Elem>,
    /// Whether the last operand may be a literal (a shift amount).
    pub literal_last: bool,
}

fn same(e: Elem) -> Option<Elem> {
    Some(e)
}
fn unsigned(e: Elem) -> Option<Elem> {
    e.unsigned()
}
fn wide(e: Elem) -> Option<Elem> {
    e.wide()
}
fn signed_wide(e: Elem) -> Option<Elem> {
    e.wide().and_then(Elem::signed)
}
fn narrow(e: Elem) -> Option<Elem> {
    e.narrow().filter(|n| n.bits() >= 8)
}

/// The element types the lifting workloads and lowering goals are instantiated at.
pub const SEARCH_TYPES: [Elem; 6] = [
    Elem::U8,
    Elem::U16,
    Elem::U32,
    Elem::I8,
    Elem::I16,
    Elem::I32,
];

/// The FPIR idioms (specs/idioms/fpir.spec) the lifting workloads call, with their result types.
pub const FPIR_IDIOMS: [IdiomSig; 12] = [
    IdiomSig {
        name: "absd",
        arity: 2,
        result: unsigned,
        literal_last: false,
    },
    IdiomSig {
        name: "halving_add",
        arity: 2,
        result: same,
        literal_last: false,
    },
    IdiomSig {
        name: "halving_sub",
        arity: 2,
        result: same,
        literal_last: false,
    },
    IdiomSig {
        name: "rounding_halving_add",
        arity: 2,
        result: same,
        literal_last: false,
    },
    IdiomSig {
        name: "saturating_add",
        arity: 2,
        result: same,
        literal_last: false,
    },
    IdiomSig {
        name: "saturating_sub",
        arity: 2,
        result: same,
        literal_last: false,
    },
    IdiomSig {
        name: "widening_add",
        arity: 2,
        result: wide,
        literal_last: false,
    },
    IdiomSig {
        name: "widening_sub",
        arity: 2,
        result: signed_wide,
        literal_last: false,
    },
    IdiomSig {
        name: "widening_mul",
        arity: 2,
        result: wide,
        literal_last: true,
    },
    IdiomSig {
        name: "widening_shl",
        arity: 2,
        result: wide,
        literal_last: true,
    },
    IdiomSig {
        name: "rounding_shr",
        arity: 2,
        result: same,
        literal_last: true,
    },
    IdiomSig {
        name: "saturating_narrow",
        arity: 1,
        result: narrow,
        literal_last: false,
    },
];

/// Operators that commute: enumeration keeps one operand order for terms above size 3 (the
/// commutativity rules themselves come from the size-3 terms).
const COMMUTATIVE: [&str; 7] = ["+", "*", "&", "|", "^", "min", "max"];

/// The grammar of one piece of the search.
#[derive(Clone)]
pub struct Grammar {
    /// The workload's name (`lift`, `casts`): with the base type, the piece's name.
    pub workload: &'static str,
    /// The element type of the variables.
    pub base: Elem,
    /// Every element type a node may have (casts go between them).
    pub types: Vec<Elem>,
    pub vars: Vec<&'static str>,
    /// Literals, used as the right operand of binary operators (and last operand of idioms).
    pub literals: Vec<i64>,
    pub binary: Vec<&'static str>,
    pub unary: Vec<&'static str>,
    pub idioms: Vec<IdiomSig>,
    /// Whether casts and saturating casts from a hub type to the types in play, and back, are
    /// nodes.
    pub casts: bool,
    /// The types casts leave from and come back to: the base type (in the signedness workload
    /// its other signedness too, through which a sign extension reaches an unsigned lane).
    pub hubs: Vec<Elem>,
    pub max_size: usize,
    /// Which enumerated terms the workload keeps, beside what every workload keeps.
    pub keeps: fn(&Grammar, &Term) -> bool,
}

impl Grammar {
    /// A literal set for a node of type `e`: the workload's small literals that fit, and the
    /// bounds of the next narrower type (clamps and saturation).
    pub fn literals_at(&self, e: Elem) -> Vec<i64> {
        let mut out: BTreeSet<i64> = self
            .literals
            .iter()
            .copied()
            .filter(|v| (*v as i128) <= e.max_value() && (*v as i128) >= e.min_value())
            .collect();
        if let Some(n) = e.narrow().filter(|n| n.bits() >= 8) {
            out.insert(n.max_value() as i64);
            if n.is_signed() {
                out.insert(n.min_value() as i64);
            }
        }
        out.into_iter().collect()
    }

    /// The variables with their type (the base type).
    pub fn variables(&self) -> Vec<(String, Elem)> {
        self.vars
            .iter()
            .map(|v| (v.to_string(), self.base))
            .collect()
    }

    /// A text naming the grammar, part of the piece's key.
    pub fn describe(&self) -> String {
        let types: Vec<&str> = self.types.iter().map(|t| t.name()).collect();
        let idioms: Vec<&str> = self.idioms.iter().map(|i| i.name).collect();
        // The hubs are named where they are more than the base type (the keys of earlier
        // searches stay as they were).
        let hubs = match &self.hubs[..] {
            [h] if *h == self.base => String::new(),
            hubs => {
                let names: Vec<&str> = hubs.iter().map(|t| t.name()).collect();
                format!(" hubs [{}]", names.join(" "))
            }
        };
        format!(
            "base {} types [{}] vars [{}] literals {:?} binary [{}] unary [{}] idioms [{}] \
             casts {}{hubs} size {}",
            self.base,
            types.join(" "),
            self.vars.join(" "),
            self.literals,
            self.binary.join(" "),
            self.unary.join(" "),
            idioms.join(" "),
            self.casts,
            self.max_size
        )
    }
}

/// Every term of the grammar up to its size bound whose every node `keep` and the grammar's own
/// [`Grammar::keeps`] accept, smallest first; no node of only literals.
pub fn enumerate(g: &Grammar, keep: &dyn Fn(&Term) -> bool) -> Vec<Rc<Term>> {
    let mut by_size: Vec<Vec<Rc<Term>>> = vec![vec![], vec![]];
    for v in &g.vars {
        by_size[1].push(Term::var(v, g.base));
    }
    for s in 2..=g.max_size {
        let mut level: Vec<Rc<Term>> = Vec::new();
        for t in &by_size[s - 1] {
            if !t.elem.is_int() {
                continue;
            }
            for op in &g.unary {
                level.push(Term::node(
                    Head::Unary(op),
                    unary_result(op, t.elem),
                    vec![t.clone()],
                ));
            }
            if g.casts {
                // Casts leave a hub or come back to one (no chains between the other
                // types in play).
                let targets = if g.hubs.contains(&t.elem) {
                    &g.types
                } else {
                    &g.hubs
                };
                for &e in targets.iter().filter(|e| **e != t.elem) {
                    level.push(Term::node(Head::Cast(e), e, vec![t.clone()]));
                    if e.min_value() > t.elem.min_value() || e.max_value() < t.elem.max_value() {
                        level.push(Term::node(Head::SatCast(e), e, vec![t.clone()]));
                    }
                }
            }
            for sig in g.idioms.iter().filter(|i| i.arity == 1) {
                if let Some(r) = (sig.result)(t.elem).filter(|r| g.types.contains(r)) {
                    level.push(Term::node(Head::Idiom(sig.name), r, vec![t.clone()]));
                }
            }
        }
        for i in 1..s - 1 {
            let j = s - 1 - i;
            for a in &by_size[i] {
                let right = by_size[j].iter().filter(|b| b.elem == a.elem);
                for b in right.cloned().chain(literal_terms(g, a.elem, j)) {
                    for op in &g.binary {
                        if COMMUTATIVE.contains(op) && s > 3 && !b.is_const() && b < *a {
                            continue;
                        }
                        level.push(Term::node(
                            Head::Binary(op),
                            a.elem,
                            vec![a.clone(), b.clone()],
                        ));
                    }
                    for sig in g.idioms.iter().filter(|i| i.arity == 2) {
                        if b.is_const() && !sig.literal_last {
                            continue;
                        }
                        if let Some(r) = (sig.result)(a.elem).filter(|r| g.types.contains(r)) {
                            level.push(Term::node(
                                Head::Idiom(sig.name),
                                r,
                                vec![a.clone(), b.clone()],
                            ));
                        }
                    }
                }
            }
        }
        level.retain(|t| keep(t) && (g.keeps)(g, t));
        by_size.push(level);
    }
    by_size.into_iter().flatten().collect()
}

/// Literal operands of type `e` for an operand slot of size `size` (literals have size 1).
fn literal_terms(g: &Grammar, e: Elem, size: usize) -> Vec<Rc<Term>> {
    if size != 1 || !e.is_int() {
        return vec![];
    }
    g.literals_at(e)
        .into_iter()
        .map(|v| Term::constant(v, e))
        .collect()
}

/// The lifting and simplification workload at element type `base`: the IR's integer operators
/// and the FPIR idioms over three variables, with the types one widening, narrowing or change
/// of signedness away.
pub fn lifting(base: Elem, max_size: usize) -> Grammar {
    let mut types = vec![base];
    for t in [
        base.wide(),
        base.narrow().filter(|n| n.bits() >= 8),
        base.other_signedness(),
        base.wide().and_then(Elem::signed),
    ]
    .into_iter()
    .flatten()
    {
        if t.bits() <= 64 && !types.contains(&t) {
            types.push(t);
        }
    }
    Grammar {
        workload: "lift",
        base,
        types,
        vars: vec!["x", "y", "z"],
        literals: vec![0, 1, 2, 4, 8, 16],
        binary: vec!["+", "-", "*", "&", "|", "^", "<<", ">>", "min", "max"],
        unary: vec!["~", "-"],
        idioms: FPIR_IDIOMS.to_vec(),
        casts: true,
        hubs: vec![base],
        max_size,
        keeps: |_, _| true,
    }
}

/// The element type of a unary operator's value on lanes of `e`: Halide's `abs` is unsigned
/// (`abs(x_i8)` of -128 is 128), the others keep the type.
fn unary_result(op: &str, e: Elem) -> Elem {
    match op {
        "abs" => e.unsigned().unwrap_or(e),
        _ => e,
    }
}

/// The absolute-value workload at signed element type `base`: one variable, `abs` and negation,
/// `max`, and casts (plain and saturating) from `base` to its unsigned and wider types and
/// back, up to 5 nodes. It relates Halide's `abs` to the saturating absolute values targets
/// compute at the operand's own width (NEON's `sqabs`, HVX's `vabs:sat`, whose semantics take
/// the absolute value of the operand widened): `i8_sat(abs(x_i8))` is `i8_sat(abs(i16(x_i8)))`.
pub fn absolute_values(base: Elem) -> Grammar {
    let mut types = vec![base];
    for t in [
        base.unsigned(),
        base.wide(),
        base.wide().and_then(Elem::unsigned),
    ]
    .into_iter()
    .flatten()
    {
        if t.bits() <= 64 && !types.contains(&t) {
            types.push(t);
        }
    }
    Grammar {
        workload: "abs",
        base,
        types,
        vars: vec!["x"],
        literals: vec![],
        binary: vec!["max"],
        unary: vec!["abs", "-"],
        idioms: vec![],
        casts: true,
        hubs: vec![base],
        max_size: 4,
        keeps: |_, _| true,
    }
}

/// The bit-count workload at element type `base`: one variable, its complement and its count of
/// leading zeros, `^ >> min max` with the shift by one and the sign's shift (the width less
/// one) as literals, up to the size of `max(clz(x), clz(~x))` (Halide's count of leading sign
/// bits, which NEON's `cls` and HVX's `vnormamt` compute less one).
pub fn bit_counts(base: Elem) -> Grammar {
    Grammar {
        workload: "bits",
        base,
        types: vec![base],
        vars: vec!["x"],
        literals: vec![1, base.bits() as i64 - 1],
        binary: vec!["^", ">>", "min", "max"],
        unary: vec!["~", "count_leading_zeros"],
        idioms: vec![],
        casts: false,
        hubs: vec![base],
        max_size: 6,
        keeps: bit_count_term,
    }
}

/// The bit-count workload's terms: the variable's complement, shifts of the variable or its
/// complement by one of the workload's literals (not the narrower types' bounds), `^` of two
/// different terms that are no counts nor `^`, counts of terms that are no counts, and
/// `min`/`max` of two different counts.
fn bit_count_term(g: &Grammar, t: &Term) -> bool {
    let count = |x: &Term| matches!(x.head, Head::Unary("count_leading_zeros"));
    let complemented = |x: &Term| match (&x.head, x.args.as_slice()) {
        (Head::Unary("~"), [v]) => matches!(v.head, Head::Var(_)),
        (head, _) => matches!(head, Head::Var(_)),
    };
    match (&t.head, t.args.as_slice()) {
        (Head::Unary("~"), [x]) => matches!(x.head, Head::Var(_)),
        (Head::Unary(_), [x]) => !count(x),
        (Head::Binary(">>"), [x, k]) => {
            matches!(k.head, Head::Const(v) if g.literals.contains(&v)) && complemented(x)
        }
        (Head::Binary("^"), [x, y]) => {
            let sum = |z: &Term| matches!(z.head, Head::Binary("^"));
            x != y && !x.is_const() && !y.is_const() && !count(x) && !count(y) && !sum(x) && !sum(y)
        }
        (Head::Binary(_), [x, y]) => x != y && count(x) && count(y),
        _ => true,
    }
}

/// The cast workload at element type `base`: a value truncated to a narrower type and extended
/// back to `base` (kept in its lanes), against masks and pairs of shifts. Every narrower type of
/// either signedness is in play, so extensions of more than one step are found too, with the
/// masks and shift amounts that relate each narrower type to `base`.
pub fn casts(base: Elem) -> Grammar {
    cast_grammar("casts", base, vec![base], 5, cast_term)
}

/// The signedness workload at element type `base`: the cast workload with `base`'s other
/// signedness as a second hub, whose shifts sign-extend a lane of `base` in place
/// (`u32(i8(x_u32))` is `u32((i32(x_u32) << 24) >> 24)`). A piece apart from the cast
/// workload's, so that the derivations its new terms open (which the selection's one-way rules
/// could not take) do not drop what that piece keeps.
pub fn signedness_casts(base: Elem) -> Grammar {
    let hubs = [Some(base), base.other_signedness()]
        .into_iter()
        .flatten()
        .collect();
    cast_grammar("signedness", base, hubs, 7, signedness_cast_term)
}

/// A cast grammar: one variable of type `base`, the `hubs` and every narrower type of either
/// signedness, `& << >>` with the narrower types' masks and shift amounts as literals.
fn cast_grammar(
    workload: &'static str,
    base: Elem,
    hubs: Vec<Elem>,
    max_size: usize,
    keeps: fn(&Grammar, &Term) -> bool,
) -> Grammar {
    let mut types = hubs.clone();
    let mut literals: BTreeSet<i64> = BTreeSet::new();
    let mut narrow = base.narrow();
    while let Some(n) = narrow.filter(|n| n.bits() >= 8) {
        for t in [n.signed(), n.unsigned()].into_iter().flatten() {
            if !types.contains(&t) {
                types.push(t);
            }
        }
        literals.insert((base.bits() - n.bits()) as i64);
        literals.insert(((1u64 << n.bits()) - 1) as i64);
        narrow = n.narrow();
    }
    Grammar {
        workload,
        base,
        types,
        vars: vec!["x"],
        literals: literals.into_iter().collect(),
        binary: vec!["&", "<<", ">>"],
        unary: vec![],
        idioms: vec![],
        casts: true,
        hubs,
        max_size,
        keeps,
    }
}

/// The cast workload's terms: no saturating casts; operators only at a hub type, each with
/// a literal right operand (for `&` the mask of a narrower type, for a shift an amount within
/// the lane) and, when its left operand is an operator too, only a right shift of a left shift
/// by the same amount (a sign extension in place).
fn cast_term(g: &Grammar, t: &Term) -> bool {
    match &t.head {
        Head::SatCast(_) => false,
        Head::Binary(op) => {
            let Head::Const(v) = t.args[1].head else {
                return false;
            };
            let bits = g.base.bits();
            let shifted_back = match &t.args[0].head {
                Head::Binary(inner) => {
                    *op == ">>" && *inner == "<<" && t.args[0].args[1] == t.args[1]
                }
                _ => true,
            };
            g.hubs.contains(&t.elem)
                && shifted_back
                && match *op {
                    "&" => (8..bits).any(|n| n.is_power_of_two() && v as i128 == (1i128 << n) - 1),
                    _ => v > 0 && v < bits as i64,
                }
        }
        _ => true,
    }
}

/// The casts a signedness-workload term may hold: enough for a truncation and an extension
/// through the other signedness (`u32(i8(i32(x_u32)))`).
const MAX_CASTS: usize = 3;

/// The signedness workload's terms: the cast workload's, with at most [`MAX_CASTS`] casts, no
/// change of signedness of a cast (a step the selection's one-way rules could not take back),
/// and operators only over the variable or its other signedness (or a shift pair of those).
fn signedness_cast_term(g: &Grammar, t: &Term) -> bool {
    let the_variable = |x: &Term| matches!(x.head, Head::Var(_));
    cast_term(g, t)
        && match &t.head {
            Head::Cast(to) => {
                let mut casts = 0;
                t.walk(&mut |n| casts += usize::from(matches!(n.head, Head::Cast(_))));
                let operand = &t.args[0];
                let between_hubs = g.hubs.contains(to) && g.hubs.contains(&operand.elem);
                casts <= MAX_CASTS && !(between_hubs && matches!(operand.head, Head::Cast(_)))
            }
            Head::Binary(_) => {
                let operand = match &t.args[0].head {
                    Head::Binary(_) => &t.args[0].args[0],
                    _ => &t.args[0],
                };
                the_variable(operand)
                    || matches!(operand.head, Head::Cast(_)) && the_variable(&operand.args[0])
            }
            _ => true,
        }
}
