//! The per-lane queries of a proof: each lane's query simplified with the others at once, and
//! renamed apart so that two lanes asking the same up to their inputs are asked once.

use super::attempt::replaced_by_unknowns;
use std::collections::HashSet;
use z3::ast::{Ast, AstKind, Bool, Dynamic};
use z3::{FuncDecl, Sort};

/// `query` with its input lanes renamed in order of first use. z3 shares equal terms, so two
/// lane queries that are the same formula up to a renaming of the inputs become one term.
pub fn renamed_apart(query: &Bool) -> Dynamic {
    let mut seen = HashSet::new();
    let mut inputs = Vec::new();
    let mut stack = vec![Dynamic::from_ast(query)];
    while let Some(node) = stack.pop() {
        if !seen.insert(node.clone()) {
            continue;
        }
        // An input is a leaf application other than `true`/`false` (numerals are not
        // applications). `DeclKind` is not used: z3-sys's prebuilt enum values are those of a
        // newer z3 than Debian's 4.8.12, and `Z3_OP_UNINTERPRETED` moved between the two.
        if node.kind() == AstKind::App
            && node.num_children() == 0
            && !matches!(node.decl().name().as_str(), "true" | "false")
        {
            inputs.push(node.clone());
        }
        stack.extend(node.children().into_iter().rev());
    }
    replaced_by_unknowns(&Dynamic::from_ast(query), &inputs, "renamed")
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
