//! The egglog program that selects instructions for one expression, generated from the
//! catalog: the prelude (`prelude.egg`), the target's instruction constructors, the type and
//! bounds analysis (`analysis.egg`, `bounds.egg`), the layout rules where the target needs them,
//! the rewrites that can apply to this input (proven rules at the types and lane counts in
//! play, lowerings, rewrites sound by construction), the input with its splits into halves,
//! and the schedule (`schedule.egg`).
//!
//! [`Programs`] owns the rewrites that do not depend on the input, so a catalog compiling many
//! expressions builds each of them once.

use super::bit_permutation::byte_bit_permutations;
use super::catalog::{instruction_constructor, look_aheads, Catalog, DirectOperator};
use super::constants::constants_in_play;
use super::encode::{ground, lane_broadcast_facts};
use super::extract::LookAhead;
use super::layout;
use super::lookups::{lookup_rewrites, masked_lookups, MaskedLookup};
use super::pair_products::{pair_product_sum_types, pair_products};
use super::per_lane_shifts::{
    per_lane_shift_types, per_lane_shifts, right_shift_by_signed_count_types, widened_shift_nodes,
};
use super::reach::{live, reach, Headed, Heads, Names, Step};
use super::reciprocal::reciprocal_products;
use super::rewrites::{choice_rewrites, rule_rewrite, scalar_choices};
use super::sound::{cast_midpoints, cast_twin, generated, part_widenings};
use super::split::splits;
use super::sums::wider_sum_types;
use super::term::{op, type_name, Command, Ruleset, Term, COST_SCALE};
use super::word_pairs::register_pairs;
use crate::ir::{Elem, Expr, Op, VecType};
use crate::rules::load::rule_types;
use crate::rules::Rule;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::rc::Rc;

/// A generated program and what went into it.
pub struct Program {
    /// The commands, in order.
    pub commands: Vec<Command>,
    /// Rewrites in it.
    pub rewrites: usize,
    /// Rules that have no e-graph form, with the reason.
    pub skipped: Vec<String>,
    /// The look-aheads extraction tries (the cheapest term found stands).
    pub look_aheads: &'static [LookAhead],
}

impl fmt::Display for Program {
    /// The program as egglog text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.commands.iter().try_for_each(|c| write!(f, "{c}"))
    }
}

/// A rule's rewrite at one element type and lane count, or why it has none.
type Built = Result<Option<Rc<Headed>>, String>;

/// A lowering's rewrites with its scalar operands at given values (none for most), or why it
/// has none.
type Chosen = Result<Vec<Rc<Headed>>, String>;

/// Program generation for one catalog, keeping the rewrites that do not depend on the input:
/// rules at a type and lane count, and lowerings at each choice of values of their scalar
/// operands.
#[derive(Default)]
pub struct Programs {
    rules: HashMap<(Ruleset, String, Option<Elem>, u32), Built>,
    lowerings: HashMap<(usize, Vec<Vec<i64>>), Chosen>,
    /// Each rule's first instance at a type it covers (none: it needs and makes nothing).
    shapes: HashMap<(Ruleset, String), Option<Rc<Headed>>>,
    direct: Option<Rc<BTreeSet<DirectOperator>>>,
    /// The target's lookups that mask their index ([`masked_lookups`]).
    masked_lookups: Option<Vec<MaskedLookup>>,
}

/// The parts of inputs (type, name, offset) in `t` read directly by an operator other than a
/// cast to twice their width, which [`part_widenings`] covers: any other reads the part as the
/// low lanes of a register (AVX2's `vpmovzxbd` widens bytes fourfold from one).
fn parts_under_operators(t: &Term, out: &mut BTreeSet<(VecType, String, i64)>) {
    if let Term::Op {
        name,
        ty: result,
        args,
        ..
    } = t
    {
        for a in args {
            if let Term::Part {
                ty,
                name: part,
                offset,
            } = a
            {
                // A conversion to the part's own type (a macro's) keeps it.
                let doubling = result.elem.bits() == 2 * ty.elem.bits();
                if *name != "Cast" || ty == result || !doubling {
                    out.insert((*ty, part.clone(), *offset));
                }
            }
        }
    }
    for child in t.children() {
        parts_under_operators(child, out);
    }
}

impl Programs {
    /// The whole program for `input` on the catalog's target.
    pub fn generate(&mut self, catalog: &Catalog, input: &Rc<Expr>) -> Result<Program, String> {
        self.generate_many(catalog, std::slice::from_ref(input))
    }

    /// One program selecting for every input at once: the rewrites any of them can use are
    /// declared once, the inputs share one e-graph and each is extracted in turn (`$root` for
    /// the first, `$root_K` for input K). Inputs must agree on the type of every variable
    /// they share (a batch chunks its inputs so).
    pub fn generate_many(
        &mut self,
        catalog: &Catalog,
        inputs: &[Rc<Expr>],
    ) -> Result<Program, String> {
        let target = catalog.target;
        // Shared, so that `self` stays free for the lowerings below.
        let direct = (self.direct)
            .get_or_insert_with(|| Rc::new(catalog.direct_operators()))
            .clone();
        let lacks = |op: &Op, elem: Elem| {
            let name = if *op == Op::Shl { "Shl" } else { "Shr" };
            !direct.contains(&(name, elem, elem))
        };
        let mut split_list = Vec::new();
        for input in inputs {
            splits(input, target.min_split_bits, &mut split_list);
        }
        // Nodes of the inputs with another form of the same value, each made equal to it.
        let mut equal_forms = widened_shift_nodes(inputs, &mut split_list, &target, &lacks);
        equal_forms.extend(byte_bit_permutations(inputs));
        let forms: Vec<Rc<Expr>> = equal_forms.iter().map(|(_, w)| w.clone()).collect();
        let with_forms: Vec<Rc<Expr>> = inputs.iter().chain(&forms).cloned().collect();
        let mut in_play: BTreeSet<VecType> = BTreeSet::new();
        let mut add_types = |e: &Expr| e.walk(&mut |n| _ = in_play.insert(n.ty));
        for input in &with_forms {
            add_types(input);
        }
        for (_, lo, hi) in &split_list {
            add_types(lo);
            add_types(hi);
        }
        let doubled: Vec<Rc<Expr>> = with_forms
            .iter()
            .flat_map(|input| {
                layout::narrow_nodes(input, target.min_split_bits, target.lane_layout)
            })
            .flat_map(|(_, chain)| chain)
            .collect();
        for d in &doubled {
            add_types(d);
        }
        if target.lane_layout {
            let halves = layout::halves(&in_play);
            in_play.extend(halves);
        }
        let pairs = register_pairs(&in_play, target.register_bits, &|n, s, t| {
            direct.contains(&(n, s, t))
        });
        in_play.extend(pairs);
        let lanes: BTreeSet<u32> = in_play.iter().map(|t| t.lanes).collect();
        let constants = constants_in_play(&in_play, &with_forms);
        let mut skipped = Vec::new();
        let mut lowered = Vec::new();
        for (i, l) in catalog.lowerings_for(&with_forms) {
            for chosen in self.lowering(i, catalog, &constants) {
                chosen.map_or_else(
                    |why| skipped.push(format!("{}: {why}", l.source)),
                    |rs| lowered.extend(rs),
                );
            }
        }
        let roots = inputs
            .iter()
            .map(|i| ground(i))
            .collect::<Result<Vec<_>, _>>()?;
        let form_unions: Vec<Command> = equal_forms
            .iter()
            .map(|(node, widened)| Ok(Command::Union(ground(node)?, ground(widened)?)))
            .collect::<Result<_, String>>()?;
        let mut nodes = Heads::new();
        for root in &roots {
            root.typed_heads(&mut |n, t| _ = nodes.insert((n, t)));
        }
        for fact in &form_unions {
            if let Command::Union(_, widened) = fact {
                widened.typed_heads(&mut |n, t| _ = nodes.insert((n, t)));
            }
        }
        let mut doubling = Vec::new();
        for input in inputs {
            let mut facts =
                layout::doubling_facts(input, target.min_split_bits, target.lane_layout)?;
            facts.extend(
                lane_broadcast_facts(input, target.min_split_bits)
                    .into_iter()
                    .map(|(a, b)| Command::Union(a, b)),
            );
            doubling.push(facts);
        }
        // The other forms' narrow nodes are doubled as the inputs' are (with the first input's).
        for form in &forms {
            let facts = layout::doubling_facts(form, target.min_split_bits, target.lane_layout)?;
            doubling[0].extend(facts);
        }
        for fact in doubling.iter().flatten() {
            if let Command::Union(a, b) = fact {
                a.typed_heads(&mut |n, t| _ = nodes.insert((n, t)));
                b.typed_heads(&mut |n, t| _ = nodes.insert((n, t)));
            }
        }
        let mut split_terms = Vec::new();
        for (n, lo, hi) in &split_list {
            nodes.insert(("Concat", n.ty));
            let (ty, n, lo, hi) = (n.ty, ground(n)?, ground(lo)?, ground(hi)?);
            lo.typed_heads(&mut |n, t| _ = nodes.insert((n, t)));
            hi.typed_heads(&mut |n, t| _ = nodes.insert((n, t)));
            split_terms.push((ty, n, lo, hi));
        }
        // Lookups' rewrites make operators the rules and generated rewrites then lower.
        let masked = self
            .masked_lookups
            .get_or_insert_with(|| masked_lookups(catalog));
        let vars: Vec<(String, VecType)> = inputs.iter().flat_map(|input| input.vars()).collect();
        let lookups = lookup_rewrites(&mut nodes, masked, &vars);
        let mut names: Names = nodes.iter().map(|(n, _)| *n).collect();
        names.insert("Const");
        if target.lane_layout {
            names.extend(layout::OPERATORS);
        }
        let mut rewrites = Vec::new();
        for (rule, ruleset) in self.rules_in_reach(catalog, &lowered, names, &lanes) {
            self.rule_rewrites(rule, &lanes, catalog, ruleset, &mut rewrites, &mut skipped);
        }
        let from_rules = rewrites.len();
        rewrites.extend(lowered);
        let mut var_lanes = HashMap::new();
        for input in inputs {
            input.walk(&mut |n| {
                if let Op::Var(name) = &n.op {
                    var_lanes.insert(name.clone(), n.ty.lanes);
                }
            });
        }
        let mut parts = BTreeSet::new();
        // The doubled inputs' padded registers are parts too (a pair of them is two registers).
        let doubled_terms = doubling.iter().flatten().filter_map(|fact| match fact {
            Command::Union(_, b) => Some(b),
            _ => None,
        });
        for term in roots
            .iter()
            .chain(split_terms.iter().flat_map(|(_, _, lo, hi)| [lo, hi]))
            .chain(doubled_terms)
        {
            term.parts(&mut |ty, name, offset| {
                if let Some(&l) = var_lanes.get(name) {
                    parts.insert((ty, name.to_string(), offset, l));
                }
            });
        }
        rewrites.extend(
            part_widenings(&parts, target.register_bits)
                .into_iter()
                .map(Headed::new),
        );
        let input_vars: BTreeSet<(VecType, String)> = inputs
            .iter()
            .flat_map(|input| input.vars())
            .map(|(n, t)| (t, n))
            .collect();
        // A narrow input widens as the low lanes of its register's widening, except on targets
        // with lane layouts, whose widenings deal pairs: they double narrow nodes (`narrow_nodes`).
        if !target.lane_layout {
            let low_lanes = catalog.low_lane_widenings();
            let widenings = layout::narrow_input_widenings(&input_vars, &target, &low_lanes);
            rewrites.extend(widenings.into_iter().map(Headed::new));
        }
        // An input, or a part of one, two registers wide, is its two register-wide parts.
        let part_halves = layout::register_halves(&parts, &input_vars, &target);
        // A narrow part an operator other than a cast reads is also the low lanes of a register
        // (casts widen parts by `part_widenings`).
        let mut operands = BTreeSet::new();
        for term in roots
            .iter()
            .chain(split_terms.iter().flat_map(|(_, _, lo, hi)| [lo, hi]))
        {
            parts_under_operators(term, &mut operands);
        }
        let operand_parts = parts
            .iter()
            .filter(|(ty, name, offset, _)| operands.contains(&(*ty, name.clone(), *offset)))
            .cloned()
            .collect();
        let narrow_parts = layout::narrow_parts(&operand_parts, target.min_split_bits);
        for fact in &narrow_parts {
            if let Command::Union(a, b) = fact {
                a.typed_heads(&mut |n, t| _ = nodes.insert((n, t)));
                b.typed_heads(&mut |n, t| _ = nodes.insert((n, t)));
                b.types(&mut in_play);
            }
        }
        for (ty, ..) in &part_halves {
            nodes.insert(("Concat", *ty));
        }
        // Every type a rewrite can make, for the generated rewrites and the type ranges.
        let mut types = in_play.clone();
        let mut shifting = BTreeSet::new();
        let halves = split_list.iter().flat_map(|(_, lo, hi)| [lo, hi]);
        let adds = |w| direct.contains(&("Add", w, w));
        let widened = equal_forms.iter().map(|(_, w)| w);
        for e in inputs.iter().chain(halves).chain(&doubled).chain(widened) {
            per_lane_shift_types(e, &mut shifting);
            wider_sum_types(e, &adds, &mut types);
        }
        types.extend(&shifting);
        for r in &rewrites {
            types.extend(&r.makes_types);
        }
        // Casts can go through their twins and midpoints (see `generated`), to a fixpoint.
        loop {
            let before = types.len();
            let via: Vec<VecType> = types
                .iter()
                .flat_map(|s| types.iter().map(move |t| (*s, *t)))
                .flat_map(|(s, t)| {
                    let mut via = cast_midpoints(s, t, false);
                    via.extend(cast_midpoints(s, t, true));
                    via.extend(cast_twin(s, t));
                    via
                })
                .collect();
            types.extend(via);
            if types.len() == before {
                break;
            }
        }
        // By name, the order programs list types in.
        let by_name: BTreeMap<String, VecType> =
            types.iter().map(|t| (type_name(*t), *t)).collect();
        let named: Vec<VecType> = by_name.values().copied().collect();
        // Operators at the other signedness for the input's own operators, conversions only
        // where the target has no instruction for them; fallbacks for operators it lacks.
        let masks = direct.iter().all(|d| d.2 != Elem::Bool);
        // What the generated rewrites make is wanted in turn (`i16(x_i32)` is the bits of
        // `u16(x_i32)`, which wants its own rewrites), to a fixpoint.
        let mut made = nodes.clone();
        let right_by_signed = right_shift_by_signed_count_types(&catalog.lowerings);
        let pair_sums = pair_product_sum_types(&catalog.lowerings);
        let extra = loop {
            let wanted = |name: &'static str, ty: VecType, from: Option<VecType>| {
                made.contains(&(name, ty))
                    && from.is_none_or(|s| !direct.contains(&(name, s.elem, ty.elem)))
            };
            let lacks = |name: &'static str, ty: VecType, from: Option<VecType>| {
                made.contains(&(name, ty))
                    && match from {
                        Some(s) => !direct.contains(&(name, s.elem, ty.elem)),
                        None => !direct.iter().any(|d| d.0 == name && d.2 == ty.elem),
                    }
            };
            let own = |name: &'static str, ty: VecType| nodes.contains(&(name, ty));
            let has = |n: &'static str, s: Elem, t: Elem| direct.contains(&(n, s, t));
            let mut extra = generated(&named, &target, masks, &own, &wanted, &lacks, &has);
            extra.extend(
                shifting
                    .iter()
                    .flat_map(|t| per_lane_shifts(*t, &wanted, &lacks, &right_by_signed)),
            );
            if !target.lane_layout {
                let summed = |t: &&VecType| pair_sums.contains(&t.elem) && wanted("Mul", **t, None);
                extra.extend(
                    named
                        .iter()
                        .filter(summed)
                        .flat_map(|t| pair_products(*t, &named, target.register_bits)),
                );
            }
            let before = made.len();
            for r in &extra {
                r.rhs.typed_heads(&mut |n, t| _ = made.insert((n, t)));
            }
            if made.len() == before {
                break extra;
            }
        };
        rewrites.extend(extra.into_iter().map(Headed::new));
        let reciprocals = reciprocal_products(inputs, &types).into_iter();
        rewrites.extend(reciprocals.chain(lookups).map(Headed::new));
        if target.lane_layout {
            // Layout rules make these at every type in play.
            for t in &types {
                for op in layout::OPERATORS {
                    nodes.insert((op, *t));
                }
            }
        }
        let rewrites = live(&rewrites, from_rules, nodes, target.lane_layout);

        let mut commands = vec![Command::Fixed(include_str!("prelude.egg"))];
        let mut used = BTreeSet::new();
        for r in &rewrites {
            r.rhs.instructions(&mut used);
        }
        for ins in &catalog.instructions {
            let name = instruction_constructor(&ins.name);
            if used.contains(name.as_str()) {
                commands.push(Command::Instruction {
                    name,
                    operands: ins.operands.len(),
                    cost: (ins.cost * COST_SCALE).round() as u64 + 1,
                });
            }
        }
        commands.push(Command::Fixed(include_str!("analysis.egg")));
        commands.extend(
            named
                .iter()
                .filter(|t| t.elem.is_int() && t.elem.bits() <= 64)
                .map(|t| Command::Range(*t)),
        );
        commands.extend(
            named
                .iter()
                .filter(|t| t.bits() >= target.min_split_bits)
                .map(|t| Command::RegisterPart(*t)),
        );
        commands.push(Command::Fixed(include_str!("bounds.egg")));
        if target.lane_layout {
            commands.extend(layout::rules(&types));
        }
        let count = rewrites.len();
        commands.extend(rewrites.into_iter().map(Command::Rewrite));
        for (k, (input, root)) in inputs.iter().zip(roots).enumerate() {
            commands.push(Command::Root(k, root));
            if target.lane_layout {
                commands.extend(layout::facts(input, target.register_bits)?);
            }
            commands.extend(doubling[k].clone());
        }
        commands.extend(narrow_parts);
        commands.extend(form_unions);
        commands.extend(
            part_halves
                .into_iter()
                .map(|(ty, whole, halves)| Command::Union(whole, op("Concat", ty, halves))),
        );
        for (ty, n, lo, hi) in split_terms {
            let parts = Term::Op {
                name: "Concat",
                ty,
                params: vec![],
                args: vec![lo, hi],
            };
            commands.push(Command::Union(n, parts));
        }
        commands.push(Command::Fixed(include_str!("schedule.egg")));
        commands.extend((0..inputs.len()).map(Command::Extract));
        Ok(Program {
            commands,
            rewrites: count,
            skipped,
            look_aheads: look_aheads(target),
        })
    }

    /// The rules, in phase order, whose left sides can meet the operators in `names` by
    /// [`reach`] (lowerings to a fixpoint, stored rules for a few rounds): an untyped first
    /// cut, so that only these are instantiated at every type and lane count.
    fn rules_in_reach<'c>(
        &mut self,
        catalog: &'c Catalog,
        lowered: &[Rc<Headed>],
        mut names: Names,
        lanes: &BTreeSet<u32>,
    ) -> Vec<(&'c Rule, Ruleset)> {
        let phases = [
            (&catalog.lift_rules, Ruleset::Lift),
            (&catalog.simplify_rules, Ruleset::Simplify),
            (&catalog.lower_rules, Ruleset::Lower),
        ];
        let mut rules: Vec<(&Rule, Ruleset, Option<Rc<Headed>>)> = Vec::new();
        for (list, ruleset) in phases {
            for rule in list {
                let shape = self.shape(rule, ruleset, catalog, lanes);
                rules.push((rule, ruleset, shape));
            }
        }
        let nothing = Names::new();
        let steps: Vec<Step<&'static str>> =
            lowered
                .iter()
                .map(|h| (true, false, Some(h)))
                .chain(rules.iter().map(|(_, ruleset, shape)| {
                    (false, *ruleset == Ruleset::Simplify, shape.as_ref())
                }))
                .map(|(lowering, simplify, shape)| Step {
                    lowering,
                    simplify,
                    needs: shape.map_or(&nothing, |h| &h.needs_names),
                    makes: shape.map_or(&nothing, |h| &h.makes_names),
                })
                .collect();
        let reached = reach(&steps, &mut names, |_| {});
        rules
            .iter()
            .zip(reached.into_iter().skip(lowered.len()))
            .filter(|(_, r)| *r)
            .map(|((rule, ruleset, _), _)| (*rule, *ruleset))
            .collect()
    }

    /// The rule's first instance at a type it covers and a lane count in play, whose heads are
    /// what it needs and makes at any; without one there it needs nothing (it is then always
    /// instantiated, so its reason to be skipped is reported).
    fn shape(
        &mut self,
        rule: &Rule,
        ruleset: Ruleset,
        catalog: &Catalog,
        lanes: &BTreeSet<u32>,
    ) -> Option<Rc<Headed>> {
        let key = (ruleset, rule.name.clone());
        if let Some(shape) = self.shapes.get(&key) {
            return shape.clone();
        }
        let shape = rule_types(rule).into_iter().find_map(|t| {
            lanes
                .iter()
                .find_map(|&l| self.rule_at(rule, t, l, catalog, ruleset).ok().flatten())
        });
        self.shapes.insert(key, shape.clone());
        shape
    }

    /// The rule's rewrite at one element type and lane count, built once.
    fn rule_at(
        &mut self,
        rule: &Rule,
        t: Option<Elem>,
        l: u32,
        catalog: &Catalog,
        ruleset: Ruleset,
    ) -> Built {
        self.rules
            .entry((ruleset, rule.name.clone(), t, l))
            .or_insert_with(|| {
                rule_rewrite(rule, t, l, catalog, ruleset).map(|r| r.map(Headed::new))
            })
            .clone()
    }

    /// The rule's rewrites at every element type it covers and every lane count in play.
    fn rule_rewrites(
        &mut self,
        rule: &Rule,
        lanes: &BTreeSet<u32>,
        catalog: &Catalog,
        ruleset: Ruleset,
        out: &mut Vec<Rc<Headed>>,
        skipped: &mut Vec<String>,
    ) {
        for t in rule_types(rule) {
            for &l in lanes {
                match self.rule_at(rule, t, l, catalog, ruleset) {
                    Ok(Some(r)) => out.push(r),
                    Ok(None) => {}
                    Err(why) => skipped.push(format!("rule {}: {why}", rule.name)),
                }
            }
        }
    }

    /// The rewrites of lowering `i` at each choice of values of its scalar operands among
    /// `constants` ([`scalar_choices`]), each built once; a choice not built leaves the others.
    fn lowering(&mut self, i: usize, catalog: &Catalog, constants: &BTreeSet<i64>) -> Vec<Chosen> {
        let l = &catalog.lowerings[i];
        let ins = &catalog.instructions[l.instruction];
        scalar_choices(l, catalog, constants)
            .into_iter()
            .map(|values| {
                let key = (i, values.iter().map(|(_, v)| v.clone()).collect());
                let built = self.lowerings.entry(key).or_insert_with(|| {
                    let rewrites = choice_rewrites(l, ins, &values);
                    rewrites.map(|rs| rs.into_iter().map(Headed::new).collect())
                });
                built.clone()
            })
            .collect()
    }
}
