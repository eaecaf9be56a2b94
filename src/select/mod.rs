//! Instruction selection (`isadb compile`): a Halide-style expression goes into an egglog
//! e-graph, the lift ruleset rewrites integer arithmetic into fixed-point idioms, the target's
//! lower ruleset rewrites idioms into instructions, extraction picks the cheapest instruction
//! tree, and z3 proves it equivalent to the input before it is printed.

pub mod cache;
pub mod catalog;
pub mod check;
pub mod emit_c;
pub mod extract;
mod layout;
mod permute;
pub mod program;
mod simplify;
pub mod term;

use crate::database::Database;
use crate::error::{Error, Result};
use crate::ir::forms::elaborate_expression;
use crate::ir::{Elem, Expr, VecType};
use crate::semantics::{prove_equivalent, Verdict};
pub use crate::spec::Target;
pub use catalog::Catalog;
pub use extract::Node;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Instant;

const VALIDATION_TIMEOUT_MS: u32 = 60_000;

/// The selected program for one expression.
pub struct Compiled {
    pub source: String,
    pub input: Rc<Expr>,
    pub root: Rc<Node>,
    pub cost: f64,
    /// The egglog program that selected it; `None` when it came from the selection cache.
    pub program: Option<program::Program>,
    /// Time of selection (elaboration, program generation and egglog, or the cache lookup).
    pub select_ms: f64,
    /// z3 translation validation; 0 for a cached selection, validated when it was stored.
    pub validate_ms: f64,
    /// Whether the selection came from the selection cache.
    pub cached: bool,
}

/// The lane count of the result when none is given: the widest variable (counting the lanes
/// it has per result lane) fills one register.
pub fn default_lanes(
    text: &str,
    catalog: &Catalog,
    declared: &HashMap<String, Elem>,
) -> Result<u32> {
    let one = elaborate_expression(text, "expression", &catalog.specs.macros, 1, declared)?;
    let widest = one
        .vars()
        .iter()
        .map(|(_, t)| t.bits())
        .max()
        .unwrap_or(one.ty.bits())
        .max(1);
    Ok((catalog.target.register_bits / widest).max(1))
}

/// The input expression at its lane count (default: [`default_lanes`]).
pub fn elaborate(
    catalog: &Catalog,
    text: &str,
    lanes: Option<u32>,
    declared: &HashMap<String, Elem>,
) -> Result<Rc<Expr>> {
    let lanes = match lanes {
        Some(0) => return Err(Error::Usage("--lanes must be at least 1".into())),
        Some(n) => n,
        None => default_lanes(text, catalog, declared)?,
    };
    elaborate_expression(text, "expression", &catalog.specs.macros, lanes, declared)
}

/// The egglog program that selects for an elaborated input.
fn generate(catalog: &Catalog, input: &Rc<Expr>) -> Result<program::Program> {
    program::program(catalog, input).map_err(|m| Error::Usage(format!("expression: {m}")))
}

/// The input expression at its lane count and the egglog program that selects for it.
pub fn prepare(
    catalog: &Catalog,
    text: &str,
    lanes: Option<u32>,
    declared: &HashMap<String, Elem>,
) -> Result<(Rc<Expr>, program::Program)> {
    let input = elaborate(catalog, text, lanes, declared)?;
    let program = generate(catalog, &input)?;
    Ok((input, program))
}

/// Elaborates, selects and validates one expression. With `cache` (the database holding the
/// selection cache) a validated selection stored before is reused without egglog or z3, and a
/// new one is stored once it is validated.
pub fn compile(
    catalog: &Catalog,
    text: &str,
    lanes: Option<u32>,
    declared: &HashMap<String, Elem>,
    cache: Option<&mut Database>,
) -> Result<Compiled> {
    let started = Instant::now();
    let input = elaborate(catalog, text, lanes, declared)?;
    let stored = match cache.as_deref() {
        Some(db) => cache::lookup(db, catalog, &input, declared)?,
        None => None,
    };
    // A stored term that no longer reads back, or that computes something else on random
    // inputs, is a miss: it is selected again and overwritten.
    if let Some(root) = stored
        .and_then(|term| extract::read_term(&term, catalog).ok())
        .filter(|root| cache::agrees_on_random_inputs(catalog, &input, root))
    {
        return Ok(Compiled {
            source: text.to_string(),
            input,
            cost: root.cost(catalog),
            root,
            program: None,
            select_ms: started.elapsed().as_secs_f64() * 1e3,
            validate_ms: 0.0,
            cached: true,
        });
    }
    let program = generate(catalog, &input)?;
    let term = extract::run(&program)?;
    let root = extract::read_term(&term, catalog)?;
    let select_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    validate(catalog, &input, &root)?;
    let validate_ms = started.elapsed().as_secs_f64() * 1e3;
    let cost = root.cost(catalog);
    if let Some(db) = cache {
        cache::store(db, catalog, &input, declared, &term, cost)?;
    }
    Ok(Compiled {
        source: text.to_string(),
        input,
        root,
        cost,
        program: Some(program),
        select_ms,
        validate_ms,
        cached: false,
    })
}

/// The input variables with their full types.
pub fn inputs(input: &Expr) -> HashMap<String, VecType> {
    input.vars().into_iter().collect()
}

/// Translation validation: the selected instructions compute the input expression.
pub fn validate(catalog: &Catalog, input: &Rc<Expr>, root: &Node) -> Result<()> {
    let selected = root.to_expr(catalog, &inputs(input))?;
    match prove_equivalent(input, &selected, None, VALIDATION_TIMEOUT_MS)? {
        Verdict::Proven { .. } => Ok(()),
        Verdict::Counterexample { .. } => Err(Error::data(
            "translation validation",
            format!(
                "the selection for {} differs from the input (a bug in a rule or fact): {selected}",
                catalog.target.name
            ),
        )),
        Verdict::Unknown { reason, .. } => Err(Error::data(
            "translation validation",
            format!("z3 could not decide the selection ({reason})"),
        )),
    }
}

/// One line of the printed sequence.
pub struct Step {
    pub temp: String,
    pub call: String,
    pub asm: String,
    pub cost: f64,
}

/// The selection as straight-line steps (shared subterms computed once) and the names of the
/// output parts with their lane ranges.
pub fn steps(compiled: &Compiled, catalog: &Catalog) -> (Vec<Step>, Vec<(String, u32, u32)>) {
    let root = &compiled.root;
    let full = inputs(&compiled.input);
    let mut steps = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut outputs = Vec::new();
    let mut parts = Vec::new();
    flatten_parts(root, &mut parts);
    let mut lane = 0;
    for p in parts {
        let name = operand_text(&p, catalog, &full, &mut steps, &mut seen);
        let n = p.ty(catalog).lanes;
        outputs.push((name, lane, lane + n));
        lane += n;
    }
    (steps, outputs)
}

pub fn flatten_parts(n: &Rc<Node>, out: &mut Vec<Rc<Node>>) {
    match &**n {
        Node::Parts(ps) => ps.iter().for_each(|p| flatten_parts(p, out)),
        _ => out.push(n.clone()),
    }
}

fn operand_text(
    n: &Node,
    catalog: &Catalog,
    full: &HashMap<String, VecType>,
    steps: &mut Vec<Step>,
    seen: &mut HashMap<String, String>,
) -> String {
    match n {
        Node::Input { name, ty, offset } => {
            if *offset == 0 && full.get(name) == Some(ty) {
                name.clone()
            } else {
                format!("{name}[{offset}..{}]", offset + ty.lanes)
            }
        }
        Node::Const { value, ty } => format!("splat({value}) {ty}"),
        Node::Reinterpret { ty, arg } => {
            format!("({ty}) {}", operand_text(arg, catalog, full, steps, seen))
        }
        Node::Lanes { ty, offset, arg } => format!(
            "{}[{offset}..{}]",
            operand_text(arg, catalog, full, steps, seen),
            offset + ty.lanes
        ),
        Node::Parts(_) => {
            let mut parts = Vec::new();
            flatten_parts(&Rc::new(n.clone()), &mut parts);
            let texts: Vec<String> = parts
                .iter()
                .map(|p| operand_text(p, catalog, full, steps, seen))
                .collect();
            format!("concat({})", texts.join(", "))
        }
        Node::Instr { index, args } => {
            let ins = &catalog.instructions[*index];
            let texts: Vec<String> = args
                .iter()
                .zip(&ins.operands)
                .map(|(a, op)| match a.scalar() {
                    Some(value) if op.ty.lanes == 1 || op.c_type.is_some() => value.to_string(),
                    _ => operand_text(a, catalog, full, steps, seen),
                })
                .collect();
            let call = format!(
                "{}({})",
                ins.intrinsic.as_deref().unwrap_or(&ins.name),
                texts.join(", ")
            );
            if let Some(t) = seen.get(&call) {
                return t.clone();
            }
            let temp = format!("t{}", steps.len());
            seen.insert(call.clone(), temp.clone());
            steps.push(Step {
                temp: temp.clone(),
                call,
                asm: ins.asm.clone(),
                cost: ins.cost,
            });
            temp
        }
    }
}
