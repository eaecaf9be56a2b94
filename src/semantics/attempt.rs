//! Ways of asking z3 one lane's query, and which to try first: the incremental SMT core on the
//! query as written or simplified, the bit-blasting solver, and the bit-blasting solver with the
//! products both sides compute abstracted.

use super::budget::{check, Theory};
use std::cmp::Ordering;
use std::collections::HashSet;
use z3::ast::{Ast, AstKind, Bool, Dynamic, BV};
use z3::{FuncDecl, SatResult, Solver};

/// The attempts for one lane's `simplified` query, in order, each with its budget. A query over
/// bit-vectors alone (`bit_vectors`) is bit-blasted first; where it multiplies halfwords, first
/// with its shared products abstracted; where it multiplies wider factors ([`Factors::Wide`]),
/// first with its shared products abstracted and then by the core on the query as written
/// before the bit-blaster.
pub fn attempts(bit_vectors: bool, simplified: &Bool, timeout_ms: u32) -> Vec<(Attempt, u32)> {
    let blasted = [
        (Attempt::BitBlasted, timeout_ms),
        (Attempt::Written, timeout_ms),
        (Attempt::Simplified, timeout_ms),
    ];
    match bit_vectors.then(|| widest_factors(simplified)) {
        // Over reals the written query is the faster for most (a minute on neither), the
        // simplified one for some: x86's saturating narrowing of a fixed-up `cvttps2dq`,
        // `i16(x_f32)`, was unknown after a minute written and proved in 4 s simplified.
        None => vec![
            (Attempt::Written, timeout_ms / 16),
            (Attempt::Simplified, timeout_ms),
            (Attempt::Written, timeout_ms),
        ],
        // What both sides compute abstracted first: it proves most at once, and where it
        // cannot, bit-blasting it costs less than the whole query's.
        Some(Factors::Narrow) => std::iter::once((Attempt::SharedAbstracted, timeout_ms / 16))
            .chain(blasted)
            .collect(),
        // The multipliers of `pmulhw` and of the input's `i32(x) * i32(y)`, both of halfwords,
        // took the bit-blaster 4-5 s per lane to tell equal; abstracted, 0.1 s.
        Some(Factors::Halfwords) => std::iter::once((Attempt::ProductsAbstracted, timeout_ms / 16))
            .chain(blasted)
            .collect(),
        Some(Factors::Wide) => [
            (Attempt::ProductsAbstracted, timeout_ms / 4),
            // Split products prove in milliseconds or not at all (HVX's `vmpa` for
            // `mul_shr(x_i16, y_i16, 15)`: not in 15 s, 0.8 s by the core after).
            (
                Attempt::ProductsSplit,
                (timeout_ms / 16).min(PRODUCTS_SPLIT_MS),
            ),
            // HVX's high word of unsigned products of words (`vmpye`, `vmpyo` and the
            // corrections) proves so in 2-3 s, which a 16th of a minute held only on an idle
            // machine; `x_i32 / 3`'s, a cut point of a 16th of a minute, in 0.7-0.8 s beside
            // another job, which a quarter of that (0.94 s) did not hold beside two: the
            // selection was then scalarized after 464 s of attempts on the whole.
            (Attempt::ExtensionsSplit, timeout_ms / 2),
        ]
        .into_iter()
        .chain(
            (timeout_ms >= WIDE_WHOLE_FROM_MS)
                .then_some(blasted)
                .into_iter()
                .flatten(),
        )
        .collect(),
    }
}

/// The most a query multiplying wide factors gives its products split: they prove in
/// milliseconds or not at all (HVX's `x_u32 / 3`, its numeral generalized: 3.75 s in vain
/// before its extensions split proved it in 0.5 s).
const PRODUCTS_SPLIT_MS: u32 = 1_000;

/// The least budget for which a query multiplying wide factors is given whole to the core and
/// the bit-blaster: with less they decide nothing. HVX's `x_u32 / 3`, `x_i32 % 7`,
/// `widening_mul(x_u32, y_u32)` and `mul_shr(x_u32, y_u32, 31)` each spent about 2.8 s of a
/// 0.94 s quick attempt per way on their whole queries, undecided, before their parts proved
/// in under a second.
const WIDE_WHOLE_FROM_MS: u32 = 2_000;

/// One way of asking z3 a lane's query.
pub enum Attempt {
    /// The incremental SMT core, on the query as written.
    Written,
    /// The incremental SMT core, on the query simplified.
    Simplified,
    /// The bit-blasting solver ([`bit_blasted`]).
    BitBlasted,
    /// The bit-blasting solver on the query with its wide products as unknowns
    /// ([`products_abstracted`]); a proof only.
    ProductsAbstracted,
    /// The bit-blasting solver on the query with its products split into products of halves
    /// ([`products_split`]), shared products abstracted; a proof only.
    ProductsSplit,
    /// The same with products of extended words split at the words' halves instead
    /// ([`split_extension`]); a proof only.
    ExtensionsSplit,
    /// The bit-blasting solver on the query with the largest subterms both sides compute as
    /// unknowns ([`shared_abstracted`]); a proof only.
    SharedAbstracted,
}

/// `query` alone (under `assume`) on z3's solver for bit-vector logic, which simplifies and
/// bit-blasts it: selects of bytes and saturating chains that the incremental SMT core takes
/// minutes over prove in milliseconds (NEON's `umull` chain for `i32(x_u8) * i32(y_u8)`:
/// 39 s by the core, 29 ms bit-blasted), but not products of wide factors, which SAT solving
/// takes apart bit by bit (AVX-512's `x_u32 % 7`: 50 s by the core, not in 60 s bit-blasted;
/// `x_u32 / 3`: 40 ms by the core). With a model when the query is satisfiable.
pub fn bit_blasted(
    query: &Bool,
    assume: &[Bool],
    timeout_ms: u32,
) -> (SatResult, Option<z3::Model>) {
    let Some(solver) = Solver::new_for_logic("QF_BV") else {
        return (SatResult::Unknown, None);
    };
    for a in assume {
        solver.assert(a);
    }
    solver.assert(query);
    match check(&solver, Theory::BitVectors, timeout_ms, Solver::check) {
        SatResult::Sat => (SatResult::Sat, solver.get_model()),
        other => (other, None),
    }
}

/// `query`, a disequality of two terms, with each wide product ([`is_wide_product`]) that both
/// terms compute replaced by a fresh unknown of its width. What holds for every value of the
/// unknowns holds for the products' values, so a proof of the abstraction proves the query. A
/// selection mostly computes the product its input computes, in other instructions: AVX-512's
/// `x_u32 % 7` takes the high half of the same 64-bit product by the magic number, truncated by
/// a clamp instead of a cast. z3's simplifier writes both products as one term, and the rest is
/// bit-level rearrangement that bit-blasts at once (46 s by the core before). `None` when no
/// product is shared.
pub fn products_abstracted(query: &Bool) -> Option<Bool> {
    let query = &narrower_products_widened(query);
    let sides = match query.decl().name().as_str() {
        "not" => query.children()[0].clone(),
        _ => return None,
    };
    let [lhs, rhs] = <[Dynamic; 2]>::try_from(sides.children()).ok()?;
    let products = |term: &Dynamic| nodes(term).into_iter().filter(is_wide_product);
    let on_the_right: HashSet<Dynamic> = products(&rhs).collect();
    let shared: Vec<Dynamic> = products(&lhs)
        .filter(|p| on_the_right.contains(p))
        .collect();
    if shared.is_empty() {
        return None;
    }
    let abstracted = replaced_by_unknowns(query, &shared, "product");
    let unknown = |k: usize, p: &Dynamic| {
        FuncDecl::new(format!("product{k}"), &[], &p.get_sort())
            .apply(&[])
            .as_bv()
    };
    // Each unknown within the range its factors give the product (an interval, not a count of
    // bits: a sum of products must not seem to wrap where it cannot): `(x * even(y)) >> 16` of
    // a word and an unsigned halfword fits a word again, which Hexagon's `vmpye` relies on.
    let ranges = shared.iter().enumerate().filter_map(|(k, p)| {
        let (low, high) = product_range(p)?;
        let unknown = unknown(k, p)?;
        let width = unknown.get_size();
        let bound = |v: i128| Some(BV::from_i64(i64::try_from(v).ok()?, width));
        let (low, high) = (bound(low)?, bound(high)?);
        Some(Bool::and(&[low.bvsle(&unknown), unknown.bvsle(&high)]))
    });
    // The low bits of a product depend only on the low bits of its factors: each narrower
    // product left in the query whose factors' low bits are the abstracted one's agrees with
    // it there (Hexagon's low word of a product of words, `vmpyieo` then `vmpyie`, against the
    // low half of the 64-bit product).
    let narrower = products_of(&abstracted);
    let low_bits = shared.iter().enumerate().flat_map(|(k, p)| {
        let unknown = unknown(k, p);
        narrower.iter().filter_map(move |q| {
            let bits = common_low_bits(p, q)?;
            let unknown = unknown.as_ref()?;
            Some(
                unknown
                    .extract(bits - 1, 0)
                    .eq(q.as_bv()?.extract(bits - 1, 0)),
            )
        })
    });
    let facts: Vec<Bool> = ranges.chain(low_bits).collect();
    Some(Bool::and(
        &std::iter::once(&abstracted)
            .chain(&facts)
            .collect::<Vec<_>>(),
    ))
}

/// `query`, a disequality of two terms, with each largest subterm both terms compute (other
/// than an input or a numeral) replaced by a fresh unknown of its sort; a proof of it proves
/// the query. A selection mostly computes its input's subterms in other instructions and
/// rearranges them, and SAT solving loses its way when a shared subterm also feeds a
/// comparison: AVX2's `select(x_i32 > y_i32, (x_i32 - y_i32) * 3, (y_i32 - x_i32) >> 2)`, its
/// blend of `x - y` shifted and subtracted, bit-blasted in 18 s, abstracted in milliseconds.
/// `None` when the terms share nothing.
pub fn shared_abstracted(query: &Bool) -> Option<Bool> {
    let sides = match query.decl().name().as_str() {
        "not" => query.children()[0].clone(),
        _ => return None,
    };
    let [lhs, rhs] = <[Dynamic; 2]>::try_from(sides.children()).ok()?;
    let computed = |n: &Dynamic| n.kind() == AstKind::App && !n.children().is_empty();
    let on_the_right: HashSet<Dynamic> = nodes(&rhs).into_iter().filter(computed).collect();
    let shared: HashSet<Dynamic> = nodes(&lhs)
        .into_iter()
        .filter(|n| on_the_right.contains(n))
        .collect();
    // The largest: those reached from either side's root through unshared terms only.
    let mut largest = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![lhs, rhs];
    while let Some(node) = stack.pop() {
        if !seen.insert(node.clone()) {
            continue;
        }
        match shared.contains(&node) {
            true => largest.push(node),
            false => stack.extend(node.children()),
        }
    }
    (!largest.is_empty()).then(|| replaced_by_unknowns(query, &largest, "shared"))
}

/// `query`, a disequality of two terms, with each product of one term that is the low bits of
/// a wider product of the other (its factors are the wider one's cut to its width) written as
/// those bits, so that the two terms share the product: z3's simplifier writes `(a * b) << 16`
/// of 64 bits as the 48-bit product of `a` and `b` cut, beside zeros, where an instruction
/// shifts the 64-bit product. Not simplified again (the simplifier would cut the product once
/// more).
fn narrower_products_widened(query: &Bool) -> Bool {
    let Some([lhs, rhs]) = query
        .children()
        .first()
        .and_then(|sides| <[Dynamic; 2]>::try_from(sides.children()).ok())
    else {
        return query.clone();
    };
    let (left, right) = (products_of(&lhs), products_of(&rhs));
    let width = |n: &Dynamic| n.as_bv().map_or(0, |b| b.get_size());
    let widened = |ours: &[Dynamic], theirs: &[Dynamic]| -> Vec<(Dynamic, Dynamic)> {
        ours.iter()
            .filter(|q| !theirs.contains(q))
            .filter_map(|q| {
                let wider = theirs
                    .iter()
                    .filter(|p| width(p) > width(q) && cuts_to(p, q))
                    .max_by_key(|p| width(p))?;
                let bits = wider.as_bv()?.extract(width(q) - 1, 0);
                Some((q.clone(), Dynamic::from_ast(&bits)))
            })
            .collect()
    };
    let pairs = [widened(&left, &right), widened(&right, &left)].concat();
    if pairs.is_empty() || query.decl().name() != "not" {
        return query.clone();
    }
    let pairs: Vec<(&Dynamic, &Dynamic)> = pairs.iter().map(|(a, b)| (a, b)).collect();
    query.substitute(&pairs)
}

/// Whether the factors of the product `p` cut to the width of the product `q` are `q`'s, in
/// either order.
fn cuts_to(p: &Dynamic, q: &Dynamic) -> bool {
    let width = q.as_bv().map_or(0, |b| b.get_size());
    factors_agree_in_low_bits(p, q, width) == Some(true)
}

/// Whether the low `bits` of the factors of the products `p` and `q` are the same, in either
/// order.
fn factors_agree_in_low_bits(p: &Dynamic, q: &Dynamic, bits: u32) -> Option<bool> {
    let [a, b] = <[Dynamic; 2]>::try_from(p.children()).ok()?;
    let [c, d] = <[Dynamic; 2]>::try_from(q.children()).ok()?;
    let low = |v: Dynamic| Some(v.as_bv()?.extract(bits - 1, 0).simplify());
    let (a, b, c, d) = (low(a)?, low(b)?, low(c)?, low(d)?);
    Some((a == c && b == d) || (a == d && b == c))
}

/// The products (`bvmul` nodes) of `term`.
fn products_of<T: Ast>(term: &T) -> Vec<Dynamic> {
    nodes(term)
        .into_iter()
        .filter(|n| n.kind() == AstKind::App && n.decl().name() == "bvmul")
        .collect()
}

/// Every distinct node of `term`.
pub(super) fn nodes<T: Ast>(term: &T) -> Vec<Dynamic> {
    let mut seen = HashSet::new();
    let mut stack = vec![Dynamic::from_ast(term)];
    let mut out = Vec::new();
    while let Some(node) = stack.pop() {
        if seen.insert(node.clone()) {
            stack.extend(node.children());
            out.push(node);
        }
    }
    out
}

/// The most low bits (a power of two from 8 up, at most half `p`'s width and at most `q`'s) in
/// which the factors of the products `p` and `q` agree, in either order.
fn common_low_bits(p: &Dynamic, q: &Dynamic) -> Option<u32> {
    let width = |n: &Dynamic| n.as_bv().map_or(0, |b| b.get_size());
    let mut bits = width(q).min(width(p) / 2);
    while bits >= 8 {
        if factors_agree_in_low_bits(p, q, bits)? {
            return Some(bits);
        }
        bits /= 2;
    }
    None
}

/// The least and greatest value of `product`, where each factor is an extension (sign or zero)
/// or a numeral, when it holds them without wrapping (as a signed value of its width).
fn product_range(product: &Dynamic) -> Option<(i128, i128)> {
    let width = product.as_bv()?.get_size();
    let [a, b] = <[Dynamic; 2]>::try_from(product.children()).ok()?;
    let (a, b) = (factor_range(&a)?, factor_range(&b)?);
    let corners = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
    let (low, high) = (*corners.iter().min()?, *corners.iter().max()?);
    let half = 1i128 << (width.min(64) - 1);
    (-half <= low && high < half).then_some((low, high))
}

/// The least and greatest value of a factor: an extension of at most 62 bits
/// ([`extension`]), or a numeral below 2^62.
fn factor_range(f: &Dynamic) -> Option<(i128, i128)> {
    if let Some(n) = f.as_bv()?.as_u64() {
        return (n < 1 << 62).then_some((n as i128, n as i128));
    }
    let (v, signed) = extension(f)?;
    let bits = v.get_size();
    match (bits > 62, signed) {
        (true, _) => None,
        (false, true) => Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)),
        (false, false) => Some((0, (1i128 << bits) - 1)),
    }
}

/// The value `f` extends and whether it extends its sign, where `f` is an extension as
/// written or as z3's simplifier writes one: a concatenation after zeros, or after copies of
/// the value's top bit.
fn extension(f: &Dynamic) -> Option<(BV, bool)> {
    if f.kind() != AstKind::App {
        return None;
    }
    let parts = f.children();
    let (last, init) = parts.split_last()?;
    let v = last.as_bv()?;
    match f.decl().name().as_str() {
        "sign_extend" => Some((v, true)),
        "zero_extend" => Some((v, false)),
        "concat" if init.len() == 1 && init[0].as_bv()?.as_u64() == Some(0) => Some((v, false)),
        "concat" => {
            let top = v.extract(v.get_size() - 1, v.get_size() - 1).simplify();
            let copies = init.iter().all(|b| b.as_bv().is_some_and(|b| b == top));
            copies.then_some((v, true))
        }
        _ => None,
    }
}

/// Rounds of [`products_split`]: each halves the factors it splits (64-bit factors take two).
const SPLIT_ROUNDS: usize = 4;

/// `query` with each product of 32 or more bits whose factor (not a numeral) has more than half
/// the width split at the half: `a * b = a * lo(b) + (a * hi(b)) << h` modulo `2^2h`, until
/// every factor of a product of two unknowns fits in half the width. Bit-blasting proves no
/// identity of differently built multipliers (`x * y` against Hexagon's `vmpyieo` then
/// `vmpyie`: unknown after a minute); split, the two sides share their partial products,
/// which [`products_abstracted`] takes out, and the rest is the low half of products of
/// halves, which bit-blasts at once. The split query is equivalent to `query`. `None` when
/// nothing is split.
pub fn products_split(query: &Bool, at_extensions: bool) -> Option<Bool> {
    let mut current = query.clone();
    for round in 0..=SPLIT_ROUNDS {
        let present = nodes(&current);
        let terms: HashSet<&Dynamic> = present.iter().collect();
        let splits: Vec<(Dynamic, Dynamic)> = present
            .iter()
            .filter_map(|node| {
                let split = match at_extensions {
                    false => split_product(node),
                    true => split_extension(node, &terms),
                }?;
                Some((node.clone(), split))
            })
            .collect();
        if splits.is_empty() {
            return (round > 0).then_some(current);
        }
        let pairs: Vec<(&Dynamic, &Dynamic)> = splits.iter().map(|(a, b)| (a, b)).collect();
        current = current.substitute(&pairs).simplify();
    }
    Some(current)
}

/// `a * b` as `a * lo(b) + (a * hi(b)) << h`, splitting the factor with more than half the
/// product's bits (the second first), where neither factor is a numeral.
fn split_product(node: &Dynamic) -> Option<Dynamic> {
    if node.kind() != AstKind::App || node.decl().name() != "bvmul" {
        return None;
    }
    let [a, b] = <[Dynamic; 2]>::try_from(node.children()).ok()?;
    let (a, b) = (a.as_bv()?, b.as_bv()?);
    let width = a.get_size();
    let half = width / 2;
    if width < 32 || a.as_u64().is_some() || b.as_u64().is_some() {
        return None;
    }
    let wide = |f: &BV| significant_bits(&Dynamic::from_ast(f)) > half;
    let (kept, split) = match (wide(&a), wide(&b)) {
        (_, true) => (a, b),
        (true, false) => (b, a),
        (false, false) => return None,
    };
    let low = split.extract(half - 1, 0).zero_ext(width - half);
    let high = split.extract(width - 1, half).zero_ext(half);
    Some(by_parts(&kept, &low, &high, half))
}

/// `kept * (high << shift + low)` as `kept * low + (kept * high) << shift`.
fn by_parts(kept: &BV, low: &BV, high: &BV, shift: u32) -> Dynamic {
    let width = kept.get_size();
    let shifted = kept
        .bvmul(high)
        .bvshl(BV::from_u64(u64::from(shift), width));
    Dynamic::from_ast(&kept.bvmul(low).bvadd(&shifted))
}

/// A product of two factors of more than 16 significant bits (where neither is wider than half
/// the product, which [`split_product`] splits) as the products of the wider factor's
/// halves, where that factor extends a value `v` of `s` bits:
/// `a * ext(v) = (a * ext(hi(v))) << s/2 + a * zext(lo(v))`, `hi` extended as `v` is; exact, so
/// the halves' products meet those of an instruction multiplying words by halfwords (Hexagon's
/// `vmpye` and `vmpyo` for `mul_shr(x_i32, y_i32, 31)`). Of factors as wide, the one whose
/// high half the query (`terms`) takes apart already is split, else the second.
fn split_extension(node: &Dynamic, terms: &HashSet<&Dynamic>) -> Option<Dynamic> {
    if node.kind() != AstKind::App || node.decl().name() != "bvmul" {
        return None;
    }
    let [a, b] = <[Dynamic; 2]>::try_from(node.children()).ok()?;
    let (ea, eb) = (extension(&a)?, extension(&b)?);
    if let Some(signed) =
        signed_extension_of(&a, &ea, &b).or_else(|| signed_extension_of(&b, &eb, &a))
    {
        return Some(signed);
    }
    let other = ea.0.get_size().min(eb.0.get_size());
    let halves_taken = |v: &BV| {
        let bits = v.get_size();
        bits.is_multiple_of(2) && terms.contains(&Dynamic::from_ast(&v.extract(bits - 1, bits / 2)))
    };
    let first = match eb.0.get_size().cmp(&ea.0.get_size()) {
        Ordering::Equal => halves_taken(&ea.0) && !halves_taken(&eb.0),
        wider => wider == Ordering::Less,
    };
    let (kept, (v, signed)) = match first {
        false => (a.as_bv()?, eb),
        true => (b.as_bv()?, ea),
    };
    let (width, bits) = (kept.get_size(), v.get_size());
    if other <= 16 || bits % 2 != 0 || bits >= width {
        return None;
    }
    let half = bits / 2;
    let high = v.extract(bits - 1, half);
    let high = match signed {
        true => high.sign_ext(width - half),
        false => high.zero_ext(width - half),
    };
    let low = v.extract(half - 1, 0).zero_ext(width - half);
    Some(by_parts(&kept, &low, &high, half))
}

/// `zext(v) * other`, where `zext(v)` (`extended`) extends a value of more than 16 bits with
/// zeros, as `sext(v) * other + (v < 0 ? other << s : 0)` (`v` of `s` bits read signed is
/// `2^s` less where its top bit is set): exact, so the product meets the signed products of an
/// instruction that multiplies signed words (Hexagon's high word of an unsigned product, from
/// the signed one and a correction).
fn signed_extension_of(
    extended: &Dynamic,
    (v, signed): &(BV, bool),
    other: &Dynamic,
) -> Option<Dynamic> {
    let (bits, other) = (v.get_size(), other.as_bv()?);
    let width = other.get_size();
    if *signed || bits <= 16 || bits >= width || extended.as_bv()?.get_size() != width {
        return None;
    }
    let negative = v.extract(bits - 1, bits - 1).eq(BV::from_u64(1, 1));
    let correction = negative.ite(
        &other.bvshl(BV::from_u64(u64::from(bits), width)),
        &BV::from_u64(0, width),
    );
    Some(Dynamic::from_ast(
        &v.sign_ext(width - bits).bvmul(&other).bvadd(&correction),
    ))
}

/// `query` with each of `terms` replaced by a fresh unknown of its sort, named `prefix` and
/// its position.
pub fn replaced_by_unknowns<T: Ast>(query: &T, terms: &[Dynamic], prefix: &str) -> T {
    let unknowns: Vec<Dynamic> = terms
        .iter()
        .enumerate()
        .map(|(k, t)| FuncDecl::new(format!("{prefix}{k}"), &[], &t.get_sort()).apply(&[]))
        .collect();
    let pairs: Vec<(&Dynamic, &Dynamic)> = terms.iter().zip(&unknowns).collect();
    query.substitute(&pairs)
}

/// The factors of a query's products, by their significant bits ([`significant_bits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Factors {
    /// No product of two factors of 16 bits or more: products of extended bytes bit-blast
    /// at once.
    Narrow,
    /// Products of halfwords.
    Halfwords,
    /// A product of two factors of more than 16 bits: a 64-bit product by a magic number
    /// does not bit-blast.
    Wide,
}

/// The factors `node` multiplies, where it is a product. A numeral counts by the bits of the
/// smaller of itself and its negation: z3's simplifier writes a negation as a product by -1 and
/// `(x - y) * 3` as `3x + -3y`, and a product by a small number, of either sign, bit-blasts as a
/// few additions (AVX2's `select(x_i32 > y_i32, (x_i32 - y_i32) * 3, (y_i32 - x_i32) >> 2)` took
/// 81 s through the attempts for wide products, 21 of them bit-blasted).
fn product_factors(node: &Dynamic) -> Option<Factors> {
    if node.kind() != AstKind::App || node.decl().name() != "bvmul" {
        return None;
    }
    let bits = |f: &Dynamic| match f.as_bv().and_then(|bv| Some((bv.as_u64()?, bv.get_size()))) {
        Some((n, width @ 1..=64)) => {
            let negated = n.wrapping_neg() & (u64::MAX >> (64 - width));
            64 - n.min(negated).leading_zeros()
        }
        _ => significant_bits(f),
    };
    let factors = node.children();
    let at_least = |least: u32| factors.iter().filter(|f| bits(f) >= least).count();
    Some(match (at_least(17), at_least(16)) {
        (2.., _) => Factors::Wide,
        (_, 2..) => Factors::Halfwords,
        _ => Factors::Narrow,
    })
}

/// Whether `node` is a product [`products_abstracted`] takes out: of two factors of 16 bits
/// or more.
fn is_wide_product(node: &Dynamic) -> bool {
    product_factors(node).is_some_and(|f| f != Factors::Narrow)
}

/// The widest factors of `query`'s products.
fn widest_factors(query: &Bool) -> Factors {
    nodes(query)
        .iter()
        .filter_map(product_factors)
        .max()
        .unwrap_or(Factors::Narrow)
}

/// The bits of a bit-vector term that are not a zero or sign extension: a numeral's up to its
/// highest set bit, an extension's or zero-padded concatenation's of what it extends.
fn significant_bits(v: &Dynamic) -> u32 {
    let Some(bv) = v.as_bv() else {
        return 0;
    };
    if let Some(n) = bv.as_u64() {
        return 64 - n.leading_zeros();
    }
    if v.kind() != AstKind::App {
        return bv.get_size();
    }
    let parts = v.children();
    match v.decl().name().as_str() {
        "sign_extend" | "zero_extend" => parts.first().map_or(bv.get_size(), significant_bits),
        "concat" if parts.len() == 2 && parts[0].as_bv().and_then(|b| b.as_u64()) == Some(0) => {
            significant_bits(&parts[1])
        }
        _ => bv.get_size(),
    }
}
