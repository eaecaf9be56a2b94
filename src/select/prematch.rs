//! Whether a rewrite's left side could match the e-graph now: its pattern matched against
//! the typed e-nodes the e-graph holds, operator, type and literal operands node by node,
//! down to the pattern's variables and the types its conditions require of them. A match
//! here is necessary, not sufficient (a variable used twice is not required to be one e-class,
//! and the conditions on bounds and constants are not checked), so a rewrite found unable to
//! match cannot match in egglog either: declaring it later ([`super::pending`]) derives the
//! same.

use super::term::{parse_type_name, Condition, Int, Term};
use crate::ir::VecType;
use egglog::{EGraph, Value};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// One typed e-node: its constructor, type, literal operands and operand e-classes.
struct TypedNode {
    name: &'static str,
    ty: VecType,
    params: Vec<Option<i64>>,
    /// The operands' e-classes, by their index in [`Index::classes`].
    args: Vec<usize>,
}

/// The e-graph's e-nodes of the constructors whose first operand is their type name.
#[derive(Default)]
pub struct Index {
    /// Each e-class's typed e-nodes, the e-classes numbered densely.
    classes: Vec<Vec<TypedNode>>,
    /// The e-classes holding an e-node of each constructor and type.
    roots: HashMap<(&'static str, VecType), Vec<usize>>,
    /// Each typed e-node's operands' typed e-nodes, as [`Edge`]s (and with the operand's
    /// constructor left out, for operands a pattern leaves a variable).
    edges: HashSet<Edge>,
    /// The typed operators with an operand whose e-class holds no typed e-node, by position.
    untyped: HashSet<(&'static str, VecType, usize)>,
}

/// A typed operator, the position of one of its operands, and a typed e-node (or, `None`,
/// any typed e-node) of that operand's e-class.
type Edge = (&'static str, VecType, usize, Option<&'static str>, VecType);

/// What a left side needs the e-graph to hold to match, each found by one lookup: its typed
/// operators, and each operator's operand at a position holding a typed operator, or for a
/// variable, a value of the type its conditions require.
pub struct Needs {
    /// The typed operators.
    pub heads: Vec<(&'static str, VecType)>,
    edges: Vec<Edge>,
}

impl Needs {
    /// What `lhs`, with `conditions`' types of its variables, needs.
    pub fn of(lhs: &Term, conditions: &[Condition]) -> Needs {
        let mut needs = Needs {
            heads: Vec::new(),
            edges: Vec::new(),
        };
        needs.add(lhs, conditions);
        needs.heads.sort();
        needs.heads.dedup();
        needs.edges.sort();
        needs.edges.dedup();
        needs
    }

    fn add(&mut self, t: &Term, conditions: &[Condition]) {
        let Some((name, ty)) = head(t) else {
            return;
        };
        self.heads.push((name, ty));
        for (at, arg) in t.children().enumerate() {
            match head(arg) {
                Some((arg_name, arg_ty)) => self.edges.push((name, ty, at, Some(arg_name), arg_ty)),
                None => {
                    for c in conditions {
                        if let Condition::TypeOf(var, var_ty) = c {
                            if var == arg {
                                self.edges.push((name, ty, at, None, *var_ty));
                            }
                        }
                    }
                }
            }
            self.add(arg, conditions);
        }
    }
}

impl Index {
    /// Reads the e-nodes of `names` (constructors whose first operand is a `String`, their type;
    /// other names are skipped).
    pub fn read(egraph: &EGraph, names: &std::collections::HashSet<&'static str>) -> Index {
        let mut index = Index::default();
        let mut types: HashMap<Value, Option<VecType>> = HashMap::default();
        let mut numbers: HashMap<Value, usize> = HashMap::default();
        let mut number = |v: Value, classes: &mut Vec<Vec<TypedNode>>| {
            *numbers.entry(v).or_insert_with(|| {
                classes.push(Vec::new());
                classes.len() - 1
            })
        };
        for &name in names {
            let Some(function) = egraph.get_function(name) else {
                continue;
            };
            let inputs = &function.func_type().input;
            if inputs.first().is_none_or(|sort| sort.name() != "String") {
                continue;
            }
            let kinds: Vec<Option<bool>> = inputs
                .iter()
                .skip(1)
                .map(|sort| match sort.name() {
                    _ if sort.is_eq_sort() => Some(true),
                    "i64" => Some(false),
                    _ => None,
                })
                .collect();
            // Functions that are not constructors are refused here (none is named).
            _ = egraph.constructor_enodes(name, |enode| {
                if enode.subsumed {
                    return;
                }
                let Some((&ty, rest)) = enode.children.split_first() else {
                    return;
                };
                let ty = *types.entry(ty).or_insert_with(|| {
                    parse_type_name(&egraph.value_to_base::<egglog::sort::S>(ty).0)
                });
                let Some(ty) = ty else {
                    return;
                };
                let mut node = TypedNode {
                    name,
                    ty,
                    params: Vec::new(),
                    args: Vec::new(),
                };
                for (&value, kind) in rest.iter().zip(&kinds) {
                    match kind {
                        Some(true) => node.args.push(number(value, &mut index.classes)),
                        Some(false) => node.params.push(Some(egraph.value_to_base::<i64>(value))),
                        None => node.params.push(None),
                    }
                }
                let class = number(enode.eclass, &mut index.classes);
                let roots = index.roots.entry((name, ty)).or_default();
                if roots.last() != Some(&class) {
                    roots.push(class);
                }
                index.classes[class].push(node);
            });
        }
        for classes in index.roots.values_mut() {
            classes.sort_unstable();
            classes.dedup();
        }
        for node in index.classes.iter().flatten() {
            for (at, &arg) in node.args.iter().enumerate() {
                let operand = &index.classes[arg];
                if operand.is_empty() {
                    index.untyped.insert((node.name, node.ty, at));
                }
                for child in operand {
                    index
                        .edges
                        .insert((node.name, node.ty, at, Some(child.name), child.ty));
                    index.edges.insert((node.name, node.ty, at, None, child.ty));
                }
            }
        }
        index
    }

    /// Whether the e-graph holds everything `needs` names.
    pub fn holds(&self, needs: &Needs) -> bool {
        needs.heads.iter().all(|h| self.roots.contains_key(h))
            && needs.edges.iter().all(|e| {
                self.edges.contains(e) || e.3.is_none() && self.untyped.contains(&(e.0, e.1, e.2))
            })
    }

    /// Whether `lhs`, with `conditions`' types of its variables, could match an e-class.
    pub fn could_match(&self, lhs: &Term, conditions: &[Condition]) -> bool {
        let typed: Vec<(&Term, VecType)> = conditions
            .iter()
            .filter_map(|c| match c {
                Condition::TypeOf(var, ty) => Some((var, *ty)),
                Condition::Compare(..) => None,
            })
            .collect();
        let Some((name, ty)) = head(lhs) else {
            return true;
        };
        self.roots
            .get(&(name, ty))
            .is_some_and(|classes| classes.iter().any(|&c| self.matches(lhs, c, &typed)))
    }

    /// Whether `pattern` could match e-class `class`.
    fn matches(&self, pattern: &Term, class: usize, typed: &[(&Term, VecType)]) -> bool {
        let nodes = &self.classes[class];
        let Some((name, ty)) = head(pattern) else {
            return match pattern {
                // A variable: the type its conditions require, where the e-class has a typed
                // e-node to tell its type.
                Term::Wildcard(_) | Term::Slot(_) => typed
                    .iter()
                    .filter(|(var, _)| *var == pattern)
                    .all(|(_, ty)| nodes.is_empty() || nodes.iter().any(|n| n.ty == *ty)),
                _ => true,
            };
        };
        let literal = |v: &Int| match v {
            Int::Lit(v) => i64::try_from(*v).ok(),
            _ => None,
        };
        let agree = |node: &TypedNode, at: usize, p: Option<i64>| {
            p.is_none() || node.params.get(at).is_none_or(|n| n.is_none() || *n == p)
        };
        let args_match = |node: &TypedNode, args: &[&Term]| {
            node.args.len() == args.len()
                && args
                    .iter()
                    .zip(&node.args)
                    .all(|(a, &c)| self.matches(a, c, typed))
        };
        nodes.iter().any(|node| {
            node.name == name
                && node.ty == ty
                && match pattern {
                    Term::Op { params, args, .. } => {
                        node.params.len() == params.len()
                            && params
                                .iter()
                                .enumerate()
                                .all(|(i, &p)| agree(node, i, Some(p)))
                            && node.args.len() == args.len()
                            && args
                                .iter()
                                .zip(&node.args)
                                .all(|(a, &c)| self.matches(a, c, typed))
                    }
                    Term::Const { value, .. } => agree(node, 0, literal(value)),
                    Term::Part { offset, .. } => agree(node, 1, Some(*offset)),
                    Term::Lanes { offset, arg, .. } => {
                        agree(node, 0, Some(*offset)) && args_match(node, &[arg])
                    }
                    Term::Reinterpret { arg, .. }
                    | Term::Nonzero { arg, .. }
                    | Term::Spread { arg, .. } => args_match(node, &[arg]),
                    Term::Pair { lo, hi, .. } => args_match(node, &[lo, hi]),
                    _ => true,
                }
        })
    }
}

/// A pattern node's constructor and type, for the typed nodes this index holds.
fn head(t: &Term) -> Option<(&'static str, VecType)> {
    Some(match t {
        Term::Op { name, ty, .. } => (*name, *ty),
        Term::Var { ty, .. } => ("Var", *ty),
        Term::Part { ty, .. } => ("Part", *ty),
        Term::Const { ty, .. } => ("Const", *ty),
        Term::Reinterpret { ty, .. } => ("Reinterpret", *ty),
        Term::Nonzero { ty, .. } => ("Nonzero", *ty),
        Term::Spread { ty, .. } => ("Spread", *ty),
        Term::Pair { ty, .. } => ("Pair", *ty),
        Term::Lanes { ty, .. } => ("Lanes", *ty),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Elem;

    fn op(name: &'static str, args: Vec<Term>) -> Term {
        Term::Op {
            name,
            ty: VecType::new(16, Elem::I8),
            params: vec![],
            args,
        }
    }

    fn egraph(program: &str) -> EGraph {
        let mut egraph = EGraph::default();
        egraph
            .parse_and_run_program(None, include_str!("prelude.egg"))
            .unwrap();
        egraph.parse_and_run_program(None, program).unwrap();
        egraph
    }

    fn could_match(egraph: &EGraph, lhs: &Term, conditions: &[Condition]) -> bool {
        let names = ["Abs", "Neg", "Const", "Var"].into_iter().collect();
        let index = Index::read(egraph, &names);
        index.holds(&Needs::of(lhs, conditions)) && index.could_match(lhs, conditions)
    }

    /// A nested left side needs its operators nested as it nests them: `Abs(Neg(x))` cannot
    /// match an `Abs` and a `Neg` apart, and can once a union puts the `Neg` under the `Abs`.
    #[test]
    fn nested_patterns_need_their_nesting_and_see_unions() {
        let lhs = op("Abs", vec![op("Neg", vec![Term::Slot("x")])]);
        let mut g = egraph(concat!(
            "(let a (Abs \"i8x16\" (Var \"i8x16\" \"a\")))\n",
            "(let n (Neg \"i8x16\" (Var \"i8x16\" \"b\")))\n",
        ));
        assert!(!could_match(&g, &lhs, &[]));
        g.parse_and_run_program(None, "(union (Var \"i8x16\" \"a\") n)")
            .unwrap();
        assert!(could_match(&g, &lhs, &[]));
    }

    /// A literal in the left side must be the e-graph's, and a variable's required type its
    /// e-class's.
    #[test]
    fn literals_and_variable_types_are_checked() {
        let g = egraph("(let a (Abs \"i8x16\" (Const \"i8x16\" 3)))\n");
        let constant = |v| Term::Const {
            ty: VecType::new(16, Elem::I8),
            value: Int::Lit(v),
        };
        assert!(could_match(&g, &op("Abs", vec![constant(3)]), &[]));
        assert!(!could_match(&g, &op("Abs", vec![constant(4)]), &[]));
        let lhs = op("Abs", vec![Term::Slot("x")]);
        let typed = |ty| [Condition::TypeOf(Term::Slot("x"), ty)];
        assert!(could_match(&g, &lhs, &typed(VecType::new(16, Elem::I8))));
        assert!(!could_match(&g, &lhs, &typed(VecType::new(8, Elem::I16))));
    }
}
