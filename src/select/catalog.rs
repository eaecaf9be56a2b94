//! What the database holds for one target: its instructions (semantics, cost, intrinsic), the
//! lowerings built from proven idiom facts and from instruction semantics, the proven rewrite
//! rules by phase, and a fingerprint of all of it (the key of the selection cache).

use super::encode::constructor;
use super::extract::LookAhead;
use super::fixed_operand::{
    fixed_operand_variants, immediate_mode_variants, zero_accumulator_variants,
};
use super::lowering::{
    bits_of_result_variant, commuted_variant, even_lanes_variants, fact_lowering,
    lane_type_variants, low_lanes_variant, result_register_variants, scalar_register_variants,
    semantics_lowering, signedness_variants, Lowering,
};
use super::permute::permutation_lowerings;
use super::ranged::ranged_variants;
use crate::database::{Database, Filter};
use crate::error::Result;
use crate::idioms::proven_facts;
use crate::ir::{Elem, Expr, Macros, Op, VecType};
use crate::project::Project;
use crate::rules::load::rule_macros;
use crate::rules::{stored_rules, Rule, RuleKind, RuleStatus};
use crate::spec::{hash_text, load_macros, Instruction, Isa, SpecSet, Target};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;
use std::rc::Rc;

/// Part of every fingerprint: bump it whenever program generation or term extraction changes,
/// so terms chosen by an older selector are not reused.
pub const SELECTOR_VERSION: &str = "selector-76";

/// Part of one target's fingerprint beside [`SELECTOR_VERSION`]: bump it instead when a change
/// reaches only that target's selections, so only its stored selections and port rows are made
/// again (NEON's widenings of inputs narrower than a D register, `narrow_input_widenings`,
/// neon-2 going through each doubled width; HVX's truncations of 64-bit lanes to their low
/// words, `word_pairs`, hvx-2 its extraction's shared look-ahead, hvx-3 the interleaved halves
/// of operations inside the input, `layout::facts`, hvx-4 the high word of unsigned products
/// of words from the signed one, `unsigned_high`, hvx-5 the interleaved halves of operations
/// inside an input padded to a register, `layout::doubling_facts`, and data movement of
/// inputs narrower than a register read into registers, `movement`, hvx-6 those reads as
/// narrower operands (a scalar `Rt`) and moves with a literal checked at their full cost,
/// `refine`, hvx-7 Halide's shifts by signed counts as `vasr` by counts from -width to the
/// width less one, `per_lane_shifts`; AVX2's avx2-1 the truncation of 64-bit lanes as their
/// even words and the clamp of saturating ones, `fallback::truncation_as_slice`, avx2-2 that
/// clamp not at one lane, `fallback::saturating_conversion`; x86's x86-1
/// lookups at any index by `pshufb` with a saturating carry, x86-2 lookups in tables of several
/// registers or of half of one, `lookups`, x86-3 sums of two products as `pmaddwd` and
/// `pmaddubsw` of interleaved factors, `pair_products`, x86-4 those factors interleaved into a
/// whole register by halves at once and products widened through a narrower type matched in
/// place).
fn target_revision(target: Target) -> &'static str {
    match target.isa {
        Isa::Neon => "neon-2",
        Isa::Hvx => "hvx-7",
        Isa::X86 if target.name == "x86-avx2" => "avx2-2 x86-4",
        Isa::X86 => "x86-4",
        Isa::Dsp => "",
    }
}

/// The look-aheads extraction tries on `target`, the cheapest term found standing. HVX
/// (hvx-2) and x86 (selector-57) add the shared one, which pays once for what two operands
/// read: HVX's pair instructions' results are read through two lane views (`vaddubh` and a
/// `vshuff`, 3 -> 2), x86's packs read both halves of one wider value (`x_u8 / 3` on AVX2: a
/// `vpmullw` of 16 lanes and a pack of its halves, not two of 8 lanes), NEON too (selector-76:
/// `_mm_maddubs_epi16`'s i16 products dealt by `uzp1` and `uzp2`, both reading both products,
/// then one `sqadd`, 18 -> 14; its corpus selects the same either way).
pub fn look_aheads(target: Target) -> &'static [LookAhead] {
    match target.isa {
        Isa::Hvx | Isa::X86 | Isa::Neon => &[LookAhead::PerOperand, LookAhead::Shared],
        Isa::Dsp => &[LookAhead::PerOperand],
    }
}

/// Everything selection on one target reads.
pub struct Catalog {
    /// The target.
    pub target: Target,
    /// The spec macros and idioms.
    pub specs: SpecSet,
    /// The macros rules are elaborated with.
    pub rule_macros: Macros,
    /// The target's instructions, by name.
    pub instructions: Vec<Instruction>,
    /// Its instructions that emit nothing (NEON's vreinterpret, x86's register casts), never
    /// selected (the selector's own reinterpretations and lane views are them), read only in
    /// sequences written by hand (`port --check`).
    pub free: Vec<Instruction>,
    /// What each instruction computes, as patterns.
    pub lowerings: Vec<Lowering>,
    /// Proven rules of kind lift (the lift phase), simplify (with the lift rules) and lower (this
    /// target's, the lower phase).
    pub lift_rules: Vec<Rule>,
    pub simplify_rules: Vec<Rule>,
    pub lower_rules: Vec<Rule>,
    /// Hash of everything selection reads from this catalog, the key of the selection cache.
    pub fingerprint: String,
    /// Where what later searches find from this catalog (its table lookups) is kept for the
    /// next process, as the fingerprint is; None where nothing can be kept.
    pub keeper: Option<Keeper>,
}

/// Values derived from a catalog kept in the database's `meta` table under the catalog's
/// target, each with what it was computed from ([`fingerprint_inputs`]): a value computed by
/// another selector, from other specs or tables, or by another isadb executable is not read.
/// The keys start `catalog_fingerprint `, so the triggers that forget fingerprints when
/// instructions, rules or facts change (schema 0014) forget these too.
pub struct Keeper {
    /// The database file.
    path: std::path::PathBuf,
    target: Target,
    /// [`fingerprint_inputs`] when the catalog was read.
    inputs: String,
    /// The values kept then, by name.
    kept: HashMap<String, String>,
}

impl Keeper {
    /// The value kept under `name` when the catalog was read, if it is still valid.
    pub fn kept(&self, name: &str) -> Option<&str> {
        self.kept.get(name).map(String::as_str)
    }

    /// Keeps `value` under `name` for the next process (a busy or vanished database just goes
    /// without).
    pub fn keep(&self, name: &str, value: &str) {
        if let Ok(db) = Database::open(&self.path) {
            keep(&db, self.target, name, &self.inputs, value);
        }
    }
}

impl Catalog {
    /// Reads the catalog of `target` from the project's database (rebuilt first if stale).
    pub fn load(project: &Project, target: Target) -> Result<Catalog> {
        let db = project.open()?;
        let specs = load_macros(&project.specs)?;
        let rule_macros = rule_macros(&specs.macros)?;
        let (free, mut instructions): (Vec<Instruction>, Vec<Instruction>) = db
            .instructions(&Filter {
                isa: Some(target.isa),
                features: Some(target.features),
            })?
            .into_iter()
            .partition(|ins| ins.cost == 0.0);
        instructions.sort_by(|a, b| a.name.cmp(&b.name));
        let by_name: HashMap<&str, usize> = instructions
            .iter()
            .enumerate()
            .map(|(i, ins)| (ins.name.as_str(), i))
            .collect();
        let mut lowerings = Vec::new();
        for fact in proven_facts(&db)? {
            let Some(&i) = by_name.get(fact.instruction.as_str()) else {
                continue;
            };
            if let Some(l) = fact_lowering(&specs, &instructions[i], i, &fact) {
                lowerings.push(l);
            }
        }
        // Where concatenations at other lane types are (kept only at lane types no
        // instruction concatenates at already: NEON's `vcombine` has every one).
        let mut retyped_concatenations = BTreeSet::new();
        for (i, ins) in instructions.iter().enumerate() {
            if let Some(l) = semantics_lowering(ins, i, target.register_bits) {
                let mut variants = lane_type_variants(&l);
                let concatenations = variants.iter().enumerate();
                let concatenations = concatenations.filter(|(_, v)| joins_two_values(v));
                retyped_concatenations.extend(concatenations.map(|(k, _)| lowerings.len() + k));
                variants.extend(signedness_variants(&l));
                let ranged = ranged_variants(&l);
                variants.extend(ranged.iter().flat_map(signedness_variants));
                variants.extend(ranged);
                variants.extend(fixed_operand_variants(&l, ins));
                // A mode's result read at its value's type (`_mm256_cmp_ps` at a predicate).
                let modes = immediate_mode_variants(&l, ins);
                variants.extend(modes.iter().filter_map(bits_of_result_variant));
                variants.extend(modes);
                variants.extend(scalar_register_variants(&l, ins));
                variants.extend(even_lanes_variants(&l));
                variants.extend(result_register_variants(&l, target.register_bits));
                variants.extend(low_lanes_variant(&l));
                variants.extend(bits_of_result_variant(&l));
                variants.push(l);
                let commuted: Vec<Lowering> =
                    variants.iter().filter_map(commuted_variant).collect();
                lowerings.extend(variants);
                lowerings.extend(commuted);
            }
            lowerings.extend(permutation_lowerings(ins, i));
        }
        let concatenated: BTreeSet<VecType> = (lowerings.iter().enumerate())
            .filter(|(k, l)| joins_two_values(l) && !retyped_concatenations.contains(k))
            .map(|(_, l)| l.pattern.ty)
            .collect();
        let mut position = 0;
        lowerings.retain(|l| {
            position += 1;
            !retyped_concatenations.contains(&(position - 1))
                || !concatenated.contains(&l.pattern.ty)
        });
        let zero_accumulator = zero_accumulator_variants(&lowerings);
        lowerings.extend(zero_accumulator.iter().flat_map(even_lanes_variants));
        lowerings.extend(zero_accumulator);
        let [lift_rules, simplify_rules, lower_rules] = proven_rules(&db, target)?;
        // A read-only database may be older than `specs/` (it is answered from as it is), so
        // its input hash does not vouch for the macros: nothing is kept there.
        let inputs = (!db.is_read_only())
            .then(|| fingerprint_inputs(&db))
            .flatten();
        let kept_value = |name: &str| inputs.as_ref().and_then(|i| kept(&db, target, name, i));
        let fingerprint = kept_value(FINGERPRINT).unwrap_or_else(|| {
            let computed = fingerprint(
                target,
                &instructions,
                &lowerings,
                &[&lift_rules, &simplify_rules, &lower_rules],
                &rule_macros,
            );
            if let Some(i) = &inputs {
                keep(&db, target, FINGERPRINT, i, &computed);
            }
            computed
        });
        let keeper = inputs.as_ref().map(|i| Keeper {
            path: project.db.clone(),
            target,
            inputs: i.clone(),
            kept: KEPT
                .iter()
                .filter_map(|&name| Some((name.to_string(), kept_value(name)?)))
                .collect(),
        });
        Ok(Catalog {
            target,
            specs,
            rule_macros,
            instructions,
            free,
            lowerings,
            lift_rules,
            simplify_rules,
            lower_rules,
            fingerprint,
            keeper,
        })
    }

    /// The lowerings (with their indices) a program for `inputs` holds: those of one-lane
    /// instructions only where an input has one lane ([`Lowering::one_lane`]).
    pub fn lowerings_for<'a>(
        &'a self,
        inputs: &[Rc<Expr>],
    ) -> impl Iterator<Item = (usize, &'a Lowering)> + 'a {
        let one_lane = inputs.iter().any(|i| i.ty.lanes == 1);
        let wanted = move |l: &Lowering| one_lane || !l.one_lane;
        self.lowerings
            .iter()
            .enumerate()
            .filter(move |(_, l)| wanted(l))
    }

    /// The widenings (from element type, to element bits) some instruction computes of the low
    /// lanes of a register itself (x86's `pmovzxbw` of an xmm's low half).
    pub fn low_lane_widenings(&self) -> BTreeSet<(Elem, u32)> {
        self.lowerings
            .iter()
            .filter_map(|l| match (&l.pattern.op, &l.pattern.args[..]) {
                (Op::Cast(_), [a]) if matches!(a.op, Op::Slice { start: 0, .. }) => {
                    Some((a.ty.elem, l.pattern.ty.elem.bits()))
                }
                _ => None,
            })
            .collect()
    }

    /// The index of each instruction by its e-graph constructor name.
    pub fn instruction_index(&self) -> HashMap<String, usize> {
        self.instructions
            .iter()
            .enumerate()
            .map(|(i, ins)| (instruction_constructor(&ins.name), i))
            .collect()
    }
}

/// The e-graph constructor of an instruction.
pub fn instruction_constructor(name: &str) -> String {
    format!("I_{}", identifier(name))
}

/// `text` with every character other than ASCII letters and digits replaced by `_`: a name
/// in egglog and in C.
pub fn identifier(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Proven rules by phase: lift, simplify, and lower (generic or for this ISA).
fn proven_rules(db: &Database, target: Target) -> Result<[Vec<Rule>; 3]> {
    let [mut lift, mut simplify, mut lower] = [Vec::new(), Vec::new(), Vec::new()];
    for rule in stored_rules(db, RuleStatus::Proven)? {
        match rule.kind {
            RuleKind::Lift => lift.push(rule),
            RuleKind::Simplify => simplify.push(rule),
            RuleKind::Lower if rule.target.is_none_or(|t| t == target.isa) => lower.push(rule),
            _ => {}
        }
    }
    Ok([lift, simplify, lower])
}

/// What a fingerprint kept in the database's meta table was computed from: the selector, the
/// database's inputs (`specs/` and the committed tables, from which its instructions, facts and
/// rules are built) and this isadb executable (whose code builds the lowerings). None where
/// one of them cannot be told (an in-memory database, an executable that cannot be read).
fn fingerprint_inputs(db: &Database) -> Option<String> {
    let inputs = db.meta("input_hash").ok().flatten()?;
    let exe = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
    let built = exe
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!(
        "{SELECTOR_VERSION} {inputs} {} {}",
        exe.len(),
        built.as_nanos()
    ))
}

/// The name the fingerprint is kept under.
const FINGERPRINT: &str = "fingerprint";
/// The table lookups found ([`super::table`]), kept under this name.
pub const TABLE_LOOKUPS: &str = "table_lookups";
/// Every name a [`Keeper`] reads when the catalog is read.
const KEPT: [&str; 1] = [TABLE_LOOKUPS];

/// The meta key of what is kept for `target` under `name`: the fingerprint's is
/// `catalog_fingerprint <target>`.
fn kept_key(target: Target, name: &str) -> String {
    match name {
        FINGERPRINT => format!("catalog_fingerprint {}", target.name),
        _ => format!("catalog_fingerprint {} {name}", target.name),
    }
}

/// The value kept for `target` under `name`, if it was computed from `inputs` (what the
/// catalog is now built from, [`fingerprint_inputs`]): hashing the whole catalog took about
/// 12 ms of every `compile` process, probing for table lookups 0.4-2 s of those that search
/// moves.
fn kept(db: &Database, target: Target, name: &str, inputs: &str) -> Option<String> {
    let kept = db.meta(&kept_key(target, name)).ok().flatten()?;
    let (from, value) = kept.split_once('\n')?;
    (from == inputs).then(|| value.to_string())
}

/// Keeps `value` for the next process, with the `inputs` it was computed from.
fn keep(db: &Database, target: Target, name: &str, inputs: &str, value: &str) {
    _ = db.set_meta(&kept_key(target, name), &format!("{inputs}\n{value}"));
}

/// Hex SHA-256 of everything selection on a catalog depends on: the target, its instructions
/// (name, semantics, cost, operands), the lowerings built from proven idiom facts and
/// semantics, the proven rules and the macros they are elaborated with.
fn fingerprint(
    target: Target,
    instructions: &[Instruction],
    lowerings: &[Lowering],
    rules: &[&[Rule]],
    macros: &Macros,
) -> String {
    let mut text = format!(
        "{SELECTOR_VERSION}{}\n{target:?}\n",
        target_revision(target)
    );
    for ins in instructions {
        writeln!(
            text,
            "instruction {} {} {} {} {:?}",
            ins.name, ins.sem_hash, ins.cost, ins.result, ins.operands
        )
        .expect("string write");
    }
    for l in lowerings {
        writeln!(
            text,
            "lowering {} {} {:?} {:?} {}",
            l.instruction, l.pattern, l.args, l.result_from, l.source
        )
        .expect("string write");
    }
    for rule in rules.iter().copied().flatten() {
        writeln!(text, "rule {rule:?}").expect("string write");
    }
    let mut names: Vec<&String> = macros.map.keys().collect();
    names.sort();
    for name in names {
        let m = &macros.map[name];
        writeln!(text, "macro {name} ({}) {}", m.params.join(" "), m.body).expect("string write");
    }
    hash_text(&text)
}

/// An operator (`Min`, `Cast`) from its first operand's element type to its result's.
pub type DirectOperator = (&'static str, Elem, Elem);

impl Catalog {
    /// The operators some instruction of the catalog computes of its operands themselves.
    pub fn direct_operators(&self) -> BTreeSet<DirectOperator> {
        self.lowerings
            .iter()
            .filter_map(|l| {
                let (name, _) = constructor(&l.pattern.op, l.pattern.args.len())?;
                // Only an operator on the operands themselves: `mulhi`'s cast of a product is not
                // a conversion, nor `movemask`'s sign test a comparison. A truncation of a
                // register pair of two operands is one (HVX's `vpacke`; x86's saturating packs
                // of two halves are not a conversion of one register, whose lanes they reorder).
                let operand = |a: &Expr| matches!(a.op, Op::Var(_));
                let pair = |a: &Expr| a.op == Op::Concat && a.args.iter().all(|x| operand(x));
                let truncation = name == "Cast";
                let from = l.pattern.args.first()?;
                l.pattern
                    .args
                    .iter()
                    .all(|a| operand(a) || truncation && pair(a))
                    .then_some((name, from.ty.elem, l.pattern.ty.elem))
            })
            .collect()
    }
}

/// Whether `l` concatenates two values (both operands variables).
fn joins_two_values(l: &Lowering) -> bool {
    let p = &l.pattern;
    p.op == Op::Concat && p.args.iter().all(|a| matches!(a.op, Op::Var(_)))
}
