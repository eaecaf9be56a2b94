//! Ways of asking z3 one lane's query, and which to try first: the incremental SMT core on the
//! query as written or simplified, the bit-blasting solver, and the bit-blasting solver with the
//! products both sides compute abstracted.

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
        None => vec![
            (Attempt::Written, timeout_ms),
            (Attempt::Simplified, timeout_ms),
        ],
        Some(Factors::Narrow) => blasted.into(),
        // The multipliers of `pmulhw` and of the input's `i32(x) * i32(y)`, both of halfwords,
        // took the bit-blaster 4-5 s per lane to tell equal; abstracted, 0.1 s.
        Some(Factors::Halfwords) => std::iter::once((Attempt::ProductsAbstracted, timeout_ms / 16))
            .chain(blasted)
            .collect(),
        Some(Factors::Wide) => vec![
            (Attempt::ProductsAbstracted, timeout_ms / 4),
            // Split products prove in milliseconds or not at all (HVX's `vmpa` for
            // `mul_shr(x_i16, y_i16, 15)`: not in 15 s, 0.8 s by the core after).
            (Attempt::ProductsSplit, timeout_ms / 16),
            (Attempt::ExtensionsSplit, timeout_ms / 16),
            (Attempt::Written, timeout_ms),
            (Attempt::BitBlasted, timeout_ms),
            (Attempt::Simplified, timeout_ms),
        ],
    }
}

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
    let mut params = z3::Params::new();
    params.set_u32("timeout", timeout_ms);
    solver.set_params(&params);
    for a in assume {
        solver.assert(a);
    }
    solver.assert(query);
    match solver.check() {
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
    let sides = match query.decl().name().as_str() {
        "not" => query.children()[0].clone(),
        _ => return None,
    };
    let [lhs, rhs] = <[Dynamic; 2]>::try_from(sides.children()).ok()?;
    let products = |term: &Dynamic| {
        let mut seen = HashSet::new();
        let mut found = Vec::new();
        let mut stack = vec![term.clone()];
        while let Some(node) = stack.pop() {
            if !seen.insert(node.clone()) {
                continue;
            }
            if is_wide_product(&node) {
                found.push(node.clone());
            }
            stack.extend(node.children());
        }
        found
    };
    let on_the_right: HashSet<Dynamic> = products(&rhs).into_iter().collect();
    let shared: Vec<Dynamic> = products(&lhs)
        .into_iter()
        .filter(|p| on_the_right.contains(p))
        .collect();
    if shared.is_empty() {
        return None;
    }
    let abstracted = replaced_by_unknowns(query, &shared, "product");
    // Each unknown within the range its factors give the product: `(x * even(y)) >> 16` of a
    // word and an unsigned halfword fits a word again, which Hexagon's `vmpye` relies on.
    let ranges: Vec<Bool> = shared
        .iter()
        .enumerate()
        .filter_map(|(k, p)| {
            let bits = product_bits(p)?;
            let unknown = FuncDecl::new(format!("product{k}"), &[], &p.get_sort())
                .apply(&[])
                .as_bv()?;
            let width = unknown.get_size();
            let low = unknown.extract(bits - 1, 0).sign_ext(width - bits);
            Some(unknown.eq(&low))
        })
        .collect();
    Some(Bool::and(
        &std::iter::once(&abstracted)
            .chain(&ranges)
            .collect::<Vec<_>>(),
    ))
}

/// The bits of a two's-complement value that hold `product`, where each factor is an
/// extension (sign or zero) or a numeral, when fewer than its width.
fn product_bits(product: &Dynamic) -> Option<u32> {
    let width = product.as_bv()?.get_size();
    let [a, b] = <[Dynamic; 2]>::try_from(product.children()).ok()?;
    let (a, b) = (factor_range(&a)?, factor_range(&b)?);
    let corners = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
    let (low, high) = (*corners.iter().min()?, *corners.iter().max()?);
    let bits = (1..width).find(|&n| -(1i128 << (n - 1)) <= low && high < 1i128 << (n - 1))?;
    Some(bits)
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
        let mut seen = HashSet::new();
        let mut stack = vec![Dynamic::from_ast(&current)];
        let mut splits = Vec::new();
        while let Some(node) = stack.pop() {
            if !seen.insert(node.clone()) {
                continue;
            }
            let split = match at_extensions {
                false => split_product(&node),
                true => split_extension(&node),
            };
            if let Some(split) = split {
                splits.push((node.clone(), split));
            }
            stack.extend(node.children());
        }
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
/// `vmpye` and `vmpyo` for `mul_shr(x_i32, y_i32, 31)`).
fn split_extension(node: &Dynamic) -> Option<Dynamic> {
    if node.kind() != AstKind::App || node.decl().name() != "bvmul" {
        return None;
    }
    let [a, b] = <[Dynamic; 2]>::try_from(node.children()).ok()?;
    let (ea, eb) = (extension(&a)?, extension(&b)?);
    let other = ea.0.get_size().min(eb.0.get_size());
    let (kept, (v, signed)) = match eb.0.get_size() >= ea.0.get_size() {
        true => (a.as_bv()?, eb),
        false => (b.as_bv()?, ea),
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

/// The factors `node` multiplies, where it is a product (z3's simplifier writes a negation as
/// a product by -1, which counts as narrow).
fn product_factors(node: &Dynamic) -> Option<Factors> {
    let minus_one = |v: &Dynamic| {
        v.as_bv().is_some_and(|bv| {
            let w = bv.get_size();
            w <= 64 && bv.as_u64() == Some(u64::MAX >> (64 - w))
        })
    };
    if node.kind() != AstKind::App || node.decl().name() != "bvmul" {
        return None;
    }
    let factors = node.children();
    if factors.iter().any(minus_one) {
        return Some(Factors::Narrow);
    }
    let at_least = |bits: u32| {
        factors
            .iter()
            .filter(|f| significant_bits(f) >= bits)
            .count()
    };
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
    let mut seen = HashSet::new();
    let mut stack = vec![Dynamic::from_ast(query)];
    let mut widest = Factors::Narrow;
    while let Some(node) = stack.pop() {
        if !seen.insert(node.clone()) {
            continue;
        }
        widest = widest.max(product_factors(&node).unwrap_or(Factors::Narrow));
        stack.extend(node.children());
    }
    widest
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
