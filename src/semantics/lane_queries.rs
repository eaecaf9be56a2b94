//! The per-lane queries of a proof: each lane's query simplified with the others at once, and
//! renamed apart so that two lanes asking the same up to their inputs are asked once.

use super::attempt::replaced_by_unknowns;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use z3::ast::{Ast, AstKind, Bool, Dynamic};
use z3::{FuncDecl, Sort};

/// The inputs of `query`: its leaf applications other than `true`/`false` (numerals are not
/// applications), in order of first use.
fn inputs_of(query: &Dynamic) -> Vec<Dynamic> {
    let mut seen = HashSet::new();
    let mut inputs = Vec::new();
    let mut stack = vec![query.clone()];
    while let Some(node) = stack.pop() {
        if !seen.insert(node.clone()) {
            continue;
        }
        // `DeclKind` is not used: z3-sys's prebuilt enum values are those of a newer z3 than
        // Debian's 4.8.12, and `Z3_OP_UNINTERPRETED` moved between the two.
        if node.kind() == AstKind::App
            && node.num_children() == 0
            && !matches!(node.decl().name().as_str(), "true" | "false")
        {
            inputs.push(node.clone());
        }
        stack.extend(node.children().into_iter().rev());
    }
    inputs
}

/// `query` with its input lanes renamed in order of first use. z3 shares equal terms, so two
/// lane queries that are the same formula up to a renaming of the inputs become one term.
pub fn renamed_apart(query: &Bool) -> Dynamic {
    let query = Dynamic::from_ast(query);
    replaced_by_unknowns(&query, &inputs_of(&query), "renamed")
}

/// The most lanes under a precondition whose queries are compared (each lane renames every
/// lane's precondition).
const MOST_PRECONDITION_LANES: usize = 32;

/// What a lane's query is asked once for: the query, and under a precondition the set of its
/// lanes, renamed alike. Two lanes with the same key have the same answer.
type LaneKey = (Dynamic, Vec<Dynamic>);

/// Each lane's [`LaneKey`] (`lanes` simplified, `preconditions` one a lane, all asserted while
/// each lane is asked); None for a lane to be asked on its own. Without a precondition the key
/// is the query renamed apart. Under one, the inputs are named in order of first use in the
/// lane's query, then in the preconditions: two lanes whose queries and sets of preconditions
/// are then the same are one formula up to a renaming of its inputs. Predicated rules such as
/// `x * c0 => x << c1` (where `c0 == 1 << c1`, the same scalar in every lane) were asked all
/// 84 of their lanes.
pub fn lane_keys(lanes: &[Bool], preconditions: &[Bool]) -> Vec<Option<LaneKey>> {
    if preconditions.is_empty() {
        return lanes
            .iter()
            .map(|q| Some((renamed_apart(q), vec![])))
            .collect();
    }
    if preconditions.len() > MOST_PRECONDITION_LANES {
        return vec![None; lanes.len()];
    }
    let preconditions: Vec<Dynamic> = preconditions.iter().map(|p| Dynamic::from_ast(p)).collect();
    let mut in_preconditions = Vec::new();
    for p in &preconditions {
        for input in inputs_of(p) {
            if !in_preconditions.contains(&input) {
                in_preconditions.push(input);
            }
        }
    }
    let hash = |d: &Dynamic| {
        let mut h = std::hash::DefaultHasher::new();
        d.hash(&mut h);
        h.finish()
    };
    (lanes.iter().map(|q| Dynamic::from_ast(q)))
        .map(|q| {
            let mut inputs = inputs_of(&q);
            for input in &in_preconditions {
                if !inputs.contains(input) {
                    inputs.push(input.clone());
                }
            }
            let renamed = |d: &Dynamic| replaced_by_unknowns(d, &inputs, "renamed");
            // The set in a fixed order: sorted by hash, equal ones once (a tie in the hash
            // between unequal ones only costs a lane asked again).
            let mut set: Vec<Dynamic> = preconditions.iter().map(renamed).collect();
            set.sort_by_key(hash);
            set.dedup();
            Some((renamed(&q), set))
        })
        .collect()
}

/// Each of `queries` simplified, in one call to z3's simplifier: the lanes of a wide vector share
/// most of their terms (a 1,024-bit HVX register behind every lane), which one call simplifies
/// once and a call per lane 128 times over (half the time of an HVX selection's proof). The
/// lanes are the arguments of an uninterpreted function, which the simplifier keeps in order.
pub fn simplified_together(queries: &[Bool]) -> Vec<Bool> {
    let bool_sort = Sort::bool();
    let domain: Vec<&Sort> = queries.iter().map(|_| &bool_sort).collect();
    let lanes = FuncDecl::new("isadb_lanes", &domain, &bool_sort);
    let args: Vec<&dyn Ast> = queries.iter().map(|q| q as &dyn Ast).collect();
    let together = lanes.apply(&args).simplify();
    match together.children().iter().map(Dynamic::as_bool).collect() {
        Some(simplified) if together.num_children() == queries.len() => simplified,
        _ => queries.iter().map(Bool::simplify).collect(),
    }
}
