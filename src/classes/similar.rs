//! Hydride's similarity checking engine (paper 000, Algorithm 1): instructions whose extracted
//! shapes are equal are checked against each class's representative, instantiated at their own
//! parameters; equal semantics make them members. Equality is syntactic when the two agree on
//! signedness, and otherwise z3's verdict (cached by the hash of the two texts, so a rebuild
//! asks only about semantics that changed), after the interpreter has failed to tell them apart
//! on random inputs. Operand order is a parameter of the shape, so
//! Hydride's second pass over permuted arguments is part of the first here.

use super::shape::{instantiate, shape, template, Shape};
use crate::error::Result;
use crate::ir::Expr;
use crate::semantics::sample::agree_on_random_inputs;
use crate::semantics::{prove_equivalent, Verdict};
use crate::spec::{hash_text, Instruction};
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// The solver's time limit for one similarity check.
pub const CHECK_TIMEOUT_MS: u32 = 5_000;

/// Random inputs (a third of their lanes edge values) the interpreter tries before z3 is asked:
/// most instructions that differ only in signedness differ on one of them.
const SAMPLES: usize = 16;
const SAMPLE_SEED: u64 = 0x5151;

/// A class: its parameterized operation and its members.
#[derive(Debug, Clone)]
pub struct Class {
    /// `<operator>/<representative>`.
    pub name: String,
    /// The representative's semantics with the parameters that differ between members as
    /// symbols (Hydride's elimination of unnecessary arguments fixes the others).
    pub template: String,
    /// Index into the classified instructions, and the member's values of the open symbols.
    pub members: Vec<(usize, String)>,
}

/// z3's verdict on one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Similarity {
    /// Proven equal at the member's parameters.
    Similar,
    /// A counterexample.
    Different,
    /// The solver gave up: not made a member.
    Unknown,
}

impl Similarity {
    /// The stored text.
    pub fn name(self) -> &'static str {
        match self {
            Similarity::Similar => "similar",
            Similarity::Different => "different",
            Similarity::Unknown => "unknown",
        }
    }

    /// Parses the stored text.
    pub fn parse(s: &str) -> Option<Similarity> {
        [
            Similarity::Similar,
            Similarity::Different,
            Similarity::Unknown,
        ]
        .into_iter()
        .find(|v| v.name() == s)
    }
}

/// A check's verdict and the solver's time.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    #[allow(missing_docs)]
    pub verdict: Similarity,
    #[allow(missing_docs)]
    pub ms: f64,
}

/// What classification found and what it cost.
#[derive(Debug, Default)]
pub struct Classification {
    #[allow(missing_docs)]
    pub classes: Vec<Class>,
    /// Checks z3 answered during this run, by pair hash, to be cached.
    pub new_checks: Vec<(String, Check)>,
    /// Distinct shapes classified.
    pub shapes: usize,
    /// Members admitted by syntactic equality.
    pub syntactic: usize,
    /// Checks answered by the cache.
    pub cached: usize,
    /// Checks refuted by the interpreter on random inputs, before z3.
    pub refuted_by_samples: usize,
}

/// Groups `instructions` into classes, in their order (the first of a class is its
/// representative); `cache` holds earlier verdicts. Instructions of different shapes are never
/// similar, so the shapes can be shared out: this call classifies the shapes whose index in key
/// order is `share.0` modulo `share.1`.
pub fn classify(
    instructions: &[&Instruction],
    cache: &HashMap<String, Check>,
    share: (usize, usize),
) -> Result<Classification> {
    let shapes: Vec<Shape> = instructions.iter().map(|i| shape(&i.semantics)).collect();
    let mut buckets: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, s) in shapes.iter().enumerate() {
        buckets.entry(&s.key).or_default().push(i);
    }
    let mut out = Classification::default();
    for members in buckets.values().skip(share.0).step_by(share.1) {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for &i in members {
            match join(&shapes, &groups, i, cache, &mut out)? {
                Some(g) => groups[g].push(i),
                None => groups.push(vec![i]),
            }
        }
        out.shapes += 1;
        for group in groups {
            out.classes.push(class(instructions, &shapes, &group));
        }
    }
    Ok(out)
}

/// The group `i` belongs to: first by syntactic equality with a representative instantiated
/// at `i`'s parameters, then by z3.
fn join(
    shapes: &[Shape],
    groups: &[Vec<usize>],
    i: usize,
    cache: &HashMap<String, Check>,
    out: &mut Classification,
) -> Result<Option<usize>> {
    let own = shapes[i].canonical.to_string();
    let candidates: Vec<(usize, Expr)> = groups
        .iter()
        .enumerate()
        .filter_map(|(g, group)| Some((g, instantiate(&shapes[group[0]], &shapes[i]).ok()?)))
        .collect();
    if let Some((g, _)) = candidates.iter().find(|(_, e)| e.to_string() == own) {
        out.syntactic += 1;
        return Ok(Some(*g));
    }
    for (g, at) in candidates {
        if !agree_on_random_inputs(&at, &shapes[i].canonical, SAMPLES, SAMPLE_SEED) {
            out.refuted_by_samples += 1;
            continue;
        }
        let key = hash_text(&format!("{at}\n{own}"));
        let check = match cache.get(&key) {
            Some(c) => {
                out.cached += 1;
                *c
            }
            None => {
                let c = prove(&at, &shapes[i].canonical);
                out.new_checks.push((key, c));
                c
            }
        };
        if check.verdict == Similarity::Similar {
            return Ok(Some(g));
        }
    }
    Ok(None)
}

/// z3's verdict on `at == own`.
fn prove(at: &Expr, own: &Expr) -> Check {
    let start = Instant::now();
    // Semantics z3 cannot encode are not made members, rather than failing the build.
    let verdict = match prove_equivalent(at, own, None, CHECK_TIMEOUT_MS) {
        Ok(Verdict::Proven { .. }) => Similarity::Similar,
        Ok(Verdict::Counterexample { .. }) => Similarity::Different,
        Ok(Verdict::Unknown { .. }) | Err(_) => Similarity::Unknown,
    };
    Check {
        verdict,
        ms: start.elapsed().as_secs_f64() * 1000.0,
    }
}

/// The class of `group`. A slot whose value differs between members is open: slots with the
/// same values in every member share one symbol; the others are fixed at their value.
fn class(instructions: &[&Instruction], shapes: &[Shape], group: &[usize]) -> Class {
    let rep = &shapes[group[0]];
    let mut symbols: Vec<(String, Vec<&str>)> = Vec::new();
    let mut texts = Vec::new();
    for (i, (slot, value)) in rep.slots.iter().enumerate() {
        let column: Vec<&str> = group
            .iter()
            .map(|&m| shapes[m].slots[i].1.as_str())
            .collect();
        if column.iter().all(|v| v == value) {
            texts.push(value.clone());
            continue;
        }
        let name = match symbols
            .iter()
            .find(|(n, c)| n.starts_with(slot.letter()) && *c == column)
        {
            Some((n, _)) => n.clone(),
            None => {
                let k = symbols
                    .iter()
                    .filter(|(n, _)| n.starts_with(slot.letter()))
                    .count();
                let n = format!("{}{k}", slot.letter());
                symbols.push((n.clone(), column));
                n
            }
        };
        texts.push(name);
    }
    let members = group
        .iter()
        .enumerate()
        .map(|(j, &m)| {
            let mut binding: Vec<String> = symbols
                .iter()
                .map(|(n, column)| format!("{n}={}", column[j]))
                .collect();
            let vars = shapes[m].vars.iter().enumerate();
            binding.extend(vars.map(|(k, name)| format!("v{k}={name}")));
            (m, binding.join(" "))
        })
        .collect();
    Class {
        name: format!(
            "{}/{}",
            rep.canonical.op.name(),
            instructions[group[0]].name
        ),
        template: template(rep, &texts),
        members,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::forms::elaborate_expression;
    use crate::ir::Macros;

    fn parse(text: &str) -> Shape {
        let e = elaborate_expression(text, "test", &Macros::default(), 8, &HashMap::new()).unwrap();
        shape(&e)
    }

    /// The verdict on the first instantiated at the second, by z3 alone.
    fn verdict(rep: &str, other: &str) -> Similarity {
        let (rep, other) = (parse(rep), parse(other));
        assert_eq!(rep.key, other.key);
        let at = instantiate(&rep, &other).unwrap();
        assert_ne!(at.to_string(), other.canonical.to_string(), "needs z3");
        prove(&at, &other.canonical).verdict
    }

    #[test]
    fn z3_decides_whether_signedness_matters() {
        let add = "(add (var a <8 x i16>) (var b <8 x i16>))";
        assert_eq!(
            verdict(add, "(add (var x <16 x u8>) (var y <16 x u8>))"),
            Similarity::Similar
        );
        let max = "(max (var a <8 x i16>) (var b <8 x i16>))";
        assert_eq!(
            verdict(max, "(max (var x <16 x u8>) (var y <16 x u8>))"),
            Similarity::Different
        );
        // The high half of a 64-bit sum does not depend on how the sum is shifted right.
        let high =
            "(cast i32 (shr (add (var a <2 x i64>) (var b <2 x i64>)) (const <2 x i64> 32)))";
        assert_eq!(
            verdict(
                high,
                "(cast u32 (shr (add (var a <2 x u64>) (var b <2 x u64>)) (const <2 x u64> 32)))"
            ),
            Similarity::Similar
        );
    }
}
