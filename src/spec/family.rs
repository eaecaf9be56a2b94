//! Families: one spec entry whose parameters (width, element type, signedness, ...) expand into
//! many instructions. Re-instantiating with a smaller width gives the lane-scaled semantics.

use super::isa::Isa;
use super::template::fill;
use super::{hash_text, Instruction, Operand};
use crate::error::{Error, Result};
use crate::ir::meta::Meta;
use crate::ir::sexpr::{SExpr, SKind};
use crate::ir::{Macros, Scope};

/// A parsed `(family ...)` form, kept as clauses so it can be re-instantiated.
#[derive(Debug, Clone)]
pub struct Family {
    /// The family's name, unique within its ISA.
    pub name: String,
    /// The `(isa ...)` clause.
    pub isa: Isa,
    /// The whole form, re-read for every binding.
    pub form: SExpr,
    params: Vec<(String, Vec<SExpr>)>,
    /// `(scale PARAM MIN)`: the parameter that may shrink, and how far.
    pub scale: Option<(String, i128)>,
}

const CLAUSES: &[&str] = &[
    "isa",
    "param",
    "where",
    "let",
    "feature",
    "intrinsic",
    "name",
    "asm",
    "operands",
    "vector-registers",
    "result",
    "semantics",
    "cost",
    "scale",
];

impl Family {
    /// Reads a `(family NAME CLAUSE ...)` form; its clauses are checked here and evaluated for
    /// each binding by [`Family::instantiate`].
    pub fn parse(form: &SExpr) -> Result<Family> {
        let items = form.list().unwrap();
        let name = items
            .get(1)
            .and_then(SExpr::sym)
            .ok_or_else(|| form.err("family needs a name"))?;
        let (mut isa, mut params, mut scale) = (None, Vec::new(), None);
        let mut scale_clause = None;
        for clause in &items[2..] {
            let head = clause
                .head()
                .ok_or_else(|| clause.err("expected a clause such as (isa x86)"))?;
            let args = &clause.list().unwrap()[1..];
            match head {
                "isa" => {
                    let word = single_sym(clause, args)?;
                    isa = Some(word.parse().map_err(|e: String| args[0].err(e))?);
                }
                "param" => {
                    let pname = args
                        .first()
                        .and_then(SExpr::sym)
                        .ok_or_else(|| clause.err("param needs a name"))?;
                    if args.len() < 2 {
                        return Err(clause.err(format!("param {pname} needs at least one value")));
                    }
                    params.push((pname.to_string(), args[1..].to_vec()));
                }
                "scale" => match args {
                    [SExpr {
                        kind: SKind::Sym(p),
                        ..
                    }, SExpr {
                        kind: SKind::Int(min),
                        ..
                    }] => {
                        scale = Some((p.clone(), *min));
                        scale_clause = Some(&args[0]);
                    }
                    _ => return Err(clause.err("expected (scale PARAM MIN-BITS)")),
                },
                h if CLAUSES.contains(&h) => {}
                h => {
                    return Err(clause.err(format!(
                        "unknown clause '{h}'{}",
                        crate::words::did_you_mean(h, CLAUSES)
                    )))
                }
            }
        }
        if let (Some((p, _)), Some(at)) = (&scale, scale_clause) {
            if !params.iter().any(|(n, _)| n == p) {
                let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
                return Err(at.err(format!(
                    "scale names '{p}', which is not a (param ...) of family {name}{}",
                    crate::words::did_you_mean(p, &names)
                )));
            }
        }
        Ok(Family {
            name: name.to_string(),
            isa: isa.ok_or_else(|| form.err(format!("family {name} has no (isa ...)")))?,
            form: form.clone(),
            params,
            scale,
        })
    }

    /// Every combination of parameter values, in declaration order.
    fn bindings(&self, macros: &Macros) -> Result<Vec<Vec<(String, Meta)>>> {
        let mut out: Vec<Vec<(String, Meta)>> = vec![vec![]];
        let mut scope = Scope::new(macros);
        for (name, values) in &self.params {
            let vals = values
                .iter()
                .map(|v| scope.meta(v))
                .collect::<Result<Vec<_>>>()?;
            out = out
                .into_iter()
                .flat_map(|b| {
                    vals.iter().map(move |v| {
                        let mut b = b.clone();
                        b.push((name.clone(), v.clone()));
                        b
                    })
                })
                .collect();
        }
        Ok(out)
    }

    /// All instructions of the family.
    pub fn expand(&self, macros: &Macros) -> Result<Vec<Instruction>> {
        let mut out = Vec::new();
        for binding in self.bindings(macros)? {
            if let Some(i) = self.instantiate(macros, &binding, false)? {
                out.push(i);
            }
        }
        Ok(out)
    }

    /// The instruction for one binding; `None` when a `where` clause rejects it. When `scaled`,
    /// only the semantics matter: metadata clauses are skipped and failing lets are left unbound.
    pub fn instantiate(
        &self,
        macros: &Macros,
        binding: &[(String, Meta)],
        scaled: bool,
    ) -> Result<Option<Instruction>> {
        let label = binding
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        self.instantiate_inner(macros, binding, scaled)
            .map_err(|e| match e {
                Error::Parse { loc, msg } => Error::Parse {
                    loc,
                    msg: format!("family {} [{label}]: {msg}", self.name),
                },
                Error::Type { loc, msg } => Error::Type {
                    loc,
                    msg: format!("family {} [{label}]: {msg}", self.name),
                },
                other => other,
            })
    }

    fn instantiate_inner(
        &self,
        macros: &Macros,
        binding: &[(String, Meta)],
        scaled: bool,
    ) -> Result<Option<Instruction>> {
        let mut scope = Scope::new(macros);
        scope.meta.extend(binding.iter().cloned());
        let mut meta = Clauses::default();
        let mut sem_form = None;
        for clause in &self.form.list().unwrap()[2..] {
            let args = &clause.list().unwrap()[1..];
            match clause.head().unwrap() {
                "let" => {
                    let [SExpr {
                        kind: SKind::Sym(n),
                        ..
                    }, value] = args
                    else {
                        return Err(clause.err("expected (let NAME VALUE)"));
                    };
                    match scope.meta(value) {
                        Ok(v) => {
                            scope.meta.insert(n.clone(), v);
                        }
                        Err(e) if !scaled => return Err(e),
                        Err(_) => {}
                    }
                }
                "where" if !scaled => {
                    let [cond] = args else {
                        return Err(clause.err("expected (where CONDITION)"));
                    };
                    match scope.meta(cond)? {
                        Meta::Bool(true) => {}
                        Meta::Bool(false) => return Ok(None),
                        other => {
                            return Err(cond.err(format!("where needs true or false, got {other}")))
                        }
                    }
                }
                "feature" if !scaled => {
                    let at = single(clause, args)?;
                    meta.feature = scope.meta(at)?.to_string();
                    let known = self.isa.features();
                    if !known.contains(&meta.feature.as_str()) {
                        return Err(at.err(format!(
                            "unknown feature '{}' for {}{}; features: {}",
                            meta.feature,
                            self.isa,
                            crate::words::did_you_mean(&meta.feature, known),
                            known.join(" ")
                        )));
                    }
                }
                "intrinsic" if !scaled => {
                    meta.intrinsic = Some(fill(string(clause, args)?, &mut scope, clause)?)
                }
                "name" if !scaled => meta.name = fill(string(clause, args)?, &mut scope, clause)?,
                "asm" if !scaled => meta.asm = fill(string(clause, args)?, &mut scope, clause)?,
                "cost" if !scaled => {
                    let nums = args
                        .iter()
                        .map(|a| number(&mut scope, a))
                        .collect::<Result<Vec<_>>>()?;
                    if let Some(n) = nums.iter().find(|n| !(**n >= 0.0 && n.is_finite())) {
                        return Err(clause.err(format!("a cost is a number of cycles, not {n}")));
                    }
                    match nums[..] {
                        [c] => meta.cost = Some(c),
                        [lat, tput] => {
                            (meta.latency, meta.throughput, meta.cost) =
                                (Some(lat), Some(tput), Some(lat));
                        }
                        _ => return Err(clause.err("expected (cost LATENCY [THROUGHPUT])")),
                    }
                }
                "operands" => {
                    for op in args {
                        meta.operands.extend(operands(&mut scope, op)?);
                    }
                }
                "vector-registers" if !scaled => {
                    let at = single(clause, args)?;
                    meta.vector_registers = match scope.meta(at)? {
                        Meta::Bool(b) => b,
                        other => {
                            return Err(at
                                .err(format!("vector-registers needs true or false, got {other}")))
                        }
                    }
                }
                "result" => meta.result = Some(scope.vec_type(single(clause, args)?)?),
                "semantics" => sem_form = Some(single(clause, args)?.clone()),
                _ => {}
            }
        }
        let sem_form = sem_form.ok_or_else(|| {
            self.form
                .err(format!("family {} has no (semantics ...)", self.name))
        })?;
        for o in &meta.operands {
            scope.bind_var(&o.name, o.ty);
        }
        let sem = scope.expr(&sem_form)?;
        if let Some(result) = meta.result.filter(|r| *r != sem.ty) {
            return Err(sem_form.err(format!(
                "the semantics has type {}, but (result ...) says {result}",
                sem.ty
            )));
        }
        if !scaled {
            if meta.name.is_empty() {
                meta.name = meta.intrinsic.clone().ok_or_else(|| {
                    self.form.err(format!(
                        "family {} needs (intrinsic ...) or (name ...)",
                        self.name
                    ))
                })?;
            }
            if meta.feature.is_empty() {
                return Err(self
                    .form
                    .err(format!("family {} has no (feature ...)", self.name)));
            }
        }
        if meta.vector_registers {
            for o in meta.operands.iter_mut() {
                if o.ty.lanes == 1 && o.imm.is_none() && o.c_type.is_none() {
                    o.c_type = Some(self.isa.one_lane_vector_c_type(o.ty).ok_or_else(|| {
                        self.form.err(format!(
                            "operand {} ({}) is in a vector register (vector-registers), which has no C type for it on {}",
                            o.name, o.ty, self.isa
                        ))
                    })?);
                }
            }
        }
        let sem_text = sem.to_string();
        Ok(Some(Instruction {
            name: meta.name,
            intrinsic: meta.intrinsic,
            asm: meta.asm,
            isa: self.isa,
            feature: meta.feature,
            family: self.name.clone(),
            binding: binding.to_vec(),
            operands: meta.operands,
            result: sem.ty,
            semantics: sem,
            sem_hash: hash_text(&sem_text),
            sem_text,
            latency: meta.latency,
            throughput: meta.throughput,
            cost: meta.cost.unwrap_or(1.0),
            loc: self.form.loc.clone(),
        }))
    }

    /// The scaled parameter doubled, while it stays below its value in `full`.
    pub fn doubled_binding(
        &self,
        binding: &[(String, Meta)],
        full: &[(String, Meta)],
    ) -> Option<Vec<(String, Meta)>> {
        let (param, _) = self.scale.as_ref()?;
        let limit = full.iter().find(|(k, _)| k == param)?;
        let mut b = binding.to_vec();
        let slot = b.iter_mut().find(|(k, _)| k == param)?;
        match (&slot.1, &limit.1) {
            (Meta::Int(v), Meta::Int(max)) if v * 2 < *max => slot.1 = Meta::Int(v * 2),
            _ => return None,
        }
        Some(b)
    }

    /// The binding with the scaled parameter set to its minimum, if the family scales.
    pub fn scaled_binding(&self, binding: &[(String, Meta)]) -> Option<Vec<(String, Meta)>> {
        let (param, min) = self.scale.as_ref()?;
        let mut b = binding.to_vec();
        let slot = b.iter_mut().find(|(k, _)| k == param)?;
        match slot.1 {
            Meta::Int(v) if v > *min => slot.1 = Meta::Int(*min),
            _ => return None,
        }
        Some(b)
    }
}

fn single<'a>(clause: &SExpr, args: &'a [SExpr]) -> Result<&'a SExpr> {
    match args {
        [a] => Ok(a),
        _ => Err(clause.err(format!(
            "({} ...) takes one value",
            clause.head().unwrap_or("")
        ))),
    }
}

fn single_sym<'a>(clause: &SExpr, args: &'a [SExpr]) -> Result<&'a str> {
    single(clause, args)?
        .sym()
        .ok_or_else(|| clause.err("expected a name"))
}

fn string<'a>(clause: &SExpr, args: &'a [SExpr]) -> Result<&'a str> {
    match single(clause, args)? {
        SExpr {
            kind: SKind::Str(s),
            ..
        } => Ok(s),
        other => Err(other.err("expected a string template")),
    }
}

fn number(scope: &mut Scope, s: &SExpr) -> Result<f64> {
    match scope.meta(s)? {
        Meta::Int(i) => Ok(i as f64),
        Meta::Float(x) => Ok(x),
        other => Err(s.err(format!("expected a number, got {other}"))),
    }
}

/// One operand, or `(when CONDITION OPERAND ...)`: operands that exist only for some bindings.
fn operands(scope: &mut Scope, s: &SExpr) -> Result<Vec<Operand>> {
    if s.head() != Some("when") {
        return Ok(vec![operand(scope, s)?]);
    }
    let items = &s.list().unwrap()[1..];
    let (cond, ops) = items
        .split_first()
        .ok_or_else(|| s.err("expected (when CONDITION OPERAND ...)"))?;
    match scope.meta(cond)? {
        Meta::Bool(true) => ops.iter().map(|o| operand(scope, o)).collect(),
        Meta::Bool(false) => Ok(vec![]),
        other => Err(cond.err(format!("when needs true or false, got {other}"))),
    }
}

/// `(NAME TYPE [(c "C type")])` or `(NAME (imm ELEM LO HI))`.
fn operand(scope: &mut Scope, s: &SExpr) -> Result<Operand> {
    let items = s.list().ok_or_else(|| s.err("expected (NAME TYPE)"))?;
    let name = items
        .first()
        .and_then(SExpr::sym)
        .ok_or_else(|| s.err("expected an operand name"))?;
    let ty_form = items
        .get(1)
        .ok_or_else(|| s.err(format!("operand {name} needs a type")))?;
    let (ty, imm) = if ty_form.head() == Some("imm") {
        let parts = ty_form.list().unwrap();
        let [_, elem, lo, hi] = parts else {
            return Err(ty_form.err("expected (imm ELEM LO HI)"));
        };
        let elem = scope.elem(elem)?;
        let (lo_value, hi_value) = (scope.meta_int(lo)?, scope.meta_int(hi)?);
        if lo_value > hi_value {
            return Err(lo.err(format!(
                "immediate range {lo_value}..={hi_value} of operand {name} is empty (LO > HI)"
            )));
        }
        for (v, at) in [(lo_value, lo), (hi_value, hi)] {
            if !(elem.min_value()..=elem.max_value()).contains(&v) {
                return Err(at.err(format!(
                    "immediate bound {v} of operand {name} is not a {elem} value"
                )));
            }
        }
        (crate::ir::VecType::new(1, elem), Some((lo_value, hi_value)))
    } else {
        (scope.vec_type(ty_form)?, None)
    };
    let mut op = Operand {
        name: name.to_string(),
        ty,
        c_type: None,
        imm,
    };
    for extra in &items[2..] {
        match (extra.head(), extra.list().map(|l| &l[1..])) {
            (
                Some("c"),
                Some(
                    [SExpr {
                        kind: SKind::Str(c),
                        ..
                    }],
                ),
            ) => op.c_type = Some(c.clone()),
            _ => return Err(extra.err("expected (c \"C type\")")),
        }
    }
    Ok(op)
}

/// The metadata clauses of one instantiation, gathered before the semantics are elaborated.
#[derive(Default)]
struct Clauses {
    name: String,
    intrinsic: Option<String>,
    asm: String,
    feature: String,
    /// `(cost ...)`: 1 when not given; 0 for what takes no instruction (NEON's vreinterpret).
    cost: Option<f64>,
    latency: Option<f64>,
    throughput: Option<f64>,
    operands: Vec<Operand>,
    /// `(vector-registers META)`: one-lane operands are vectors of one lane (NEON's `int64x1_t`
    /// of a D register), not scalars.
    vector_registers: bool,
    result: Option<crate::ir::VecType>,
}
