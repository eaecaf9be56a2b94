//! What each command does, apart from argument parsing: open (and rebuild) the database, answer,
//! and render a table or JSON. Every function returns the exit outcome.

use crate::database::{Database, Layout, COMMITTED_TABLES};
use crate::error::{Error, Result};
use crate::ir::sexpr::read_one;
use crate::ir::{Expr, Macros, Scope};
use crate::semantics::{self, prove_equivalent, Env, Value, Verdict};
use crate::spec::{load_dir, load_macros, Operand};
use rusqlite::OptionalExtension;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

/// How a command ended: success, or a well-formed negative answer (exit 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success = 0,
    Negative = 1,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Table,
    Json,
}

/// Where the project lives and how to print.
pub struct Context {
    pub layout: Layout,
    pub output: Output,
}

impl Context {
    pub fn new(home: Option<PathBuf>, output: Output) -> Context {
        let home = home.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
        Context {
            layout: Layout::at(&home),
            output,
        }
    }

    pub fn db(&self) -> Result<Database> {
        self.layout.open()
    }

    fn print<T: Serialize>(&self, value: &T, table: impl FnOnce() -> String) {
        match self.output {
            Output::Json => println!(
                "{}",
                serde_json::to_string_pretty(value).unwrap_or_default()
            ),
            Output::Table => print!("{}", table()),
        }
    }
}

/// Left-aligned columns under a header.
pub fn render_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(headers.to_vec());
    for row in rows {
        out += &line(row.iter().map(String::as_str).collect());
    }
    out
}

pub fn db_build(ctx: &Context) -> Result<Outcome> {
    let start = Instant::now();
    let specs = load_dir(&ctx.layout.specs)?;
    let layout = Layout {
        match_idioms: true,
        ..ctx.layout.clone()
    };
    layout.build(&specs)?;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    #[derive(Serialize)]
    struct Built {
        instructions: usize,
        families: usize,
        idioms: usize,
        ms: f64,
        path: String,
    }
    let b = Built {
        instructions: specs.instructions.len(),
        families: specs.families.len(),
        idioms: specs.idioms.len(),
        ms,
        path: ctx.layout.db.display().to_string(),
    };
    ctx.print(&b, || {
        format!(
            "built {} ({} instructions from {} families, {} idioms) in {:.0} ms\n",
            b.path, b.instructions, b.families, b.idioms, b.ms
        )
    });
    Ok(Outcome::Success)
}

pub fn db_export(ctx: &Context, dir: Option<PathBuf>) -> Result<Outcome> {
    let dir = dir.unwrap_or_else(|| ctx.layout.tables.clone());
    ctx.db()?.export_tables(&dir, COMMITTED_TABLES)?;
    println!(
        "exported {} tables to {}",
        COMMITTED_TABLES.len(),
        dir.display()
    );
    Ok(Outcome::Success)
}

pub fn db_import(ctx: &Context, dir: Option<PathBuf>) -> Result<Outcome> {
    let dir = dir.unwrap_or_else(|| ctx.layout.tables.clone());
    let present: Vec<&str> = COMMITTED_TABLES
        .iter()
        .copied()
        .filter(|t| dir.join(format!("{t}.csv")).exists())
        .collect();
    ctx.db()?.import_tables(&dir, &present)?;
    println!("imported {} tables from {}", present.len(), dir.display());
    Ok(Outcome::Success)
}

pub fn db_stats(ctx: &Context) -> Result<Outcome> {
    let stats = ctx.db()?.stats()?;
    ctx.print(&stats, || {
        let mut rows = Vec::new();
        for isa in &stats.isas {
            rows.push(vec![
                isa.name.clone(),
                "(all)".into(),
                isa.instructions.to_string(),
                isa.with_intrinsic.to_string(),
            ]);
            for f in &isa.features {
                rows.push(vec![
                    String::new(),
                    f.name.clone(),
                    f.instructions.to_string(),
                    f.with_intrinsic.to_string(),
                ]);
            }
        }
        let counts = |m: &std::collections::BTreeMap<String, u64>| {
            if m.is_empty() {
                "none".to_string()
            } else {
                m.iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        render_table(&["isa", "feature", "instructions", "with intrinsic"], &rows)
            + &format!(
                "idioms: {}\nclasses: {}\nrules: {}\nvalidation: {}\n",
                stats.idioms,
                stats.classes,
                counts(&stats.rules_by_status),
                counts(&stats.validation_by_status)
            )
    });
    Ok(Outcome::Success)
}

/// One instruction as stored.
#[derive(Debug, Serialize)]
pub struct InstructionRow {
    pub name: String,
    pub intrinsic: Option<String>,
    pub asm: String,
    pub isa: String,
    pub feature: String,
    pub family: String,
    pub params: String,
    pub operands: Vec<Operand>,
    pub result_type: String,
    pub semantics: String,
    pub sem_hash: String,
    pub latency: Option<f64>,
    pub throughput: Option<f64>,
    pub cost: f64,
}

const INSTRUCTION_QUERY: &str =
    "SELECT i.name, i.intrinsic, i.asm, s.name, f.name, fam.name, i.params, i.operands,
    i.result_type, i.semantics, i.sem_hash, i.latency, i.throughput, i.cost
    FROM instructions i JOIN isas s ON s.id = i.isa_id JOIN features f ON f.id = i.feature_id
    JOIN families fam ON fam.id = i.family_id";

fn instruction_row(r: &rusqlite::Row) -> rusqlite::Result<InstructionRow> {
    let operands: String = r.get(7)?;
    Ok(InstructionRow {
        name: r.get(0)?,
        intrinsic: r.get(1)?,
        asm: r.get(2)?,
        isa: r.get(3)?,
        feature: r.get(4)?,
        family: r.get(5)?,
        params: r.get(6)?,
        operands: serde_json::from_str(&operands).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(7, rusqlite::types::Type::Text, Box::new(e))
        })?,
        result_type: r.get(8)?,
        semantics: r.get(9)?,
        sem_hash: r.get(10)?,
        latency: r.get(11)?,
        throughput: r.get(12)?,
        cost: r.get(13)?,
    })
}

/// Looks an instruction up by name or intrinsic; unknown names get a suggestion.
pub fn find_instruction(db: &Database, name: &str) -> Result<InstructionRow> {
    let q = format!("{INSTRUCTION_QUERY} WHERE i.name = ?1 OR i.intrinsic = ?1 LIMIT 1");
    if let Some(row) = db
        .conn()
        .query_row(&q, [name], instruction_row)
        .optional()?
    {
        return Ok(row);
    }
    let names: Vec<String> = db
        .text_rows("SELECT name FROM instructions")?
        .into_iter()
        .flatten()
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    Err(Error::Usage(format!(
        "unknown instruction '{name}'{}",
        crate::ir::parse::did_you_mean(name, &refs)
    )))
}

impl InstructionRow {
    /// The stored semantics, parsed back into IR.
    pub fn semantics_expr(&self) -> Result<Rc<Expr>> {
        let macros = Macros::default();
        let mut scope = Scope::new(&macros);
        scope.expr(&read_one(
            &self.semantics,
            &format!("semantics of {}", self.name),
        )?)
    }
}

pub fn show(ctx: &Context, name: &str) -> Result<Outcome> {
    let row = find_instruction(&ctx.db()?, name)?;
    ctx.print(&row, || {
        let ops: Vec<String> = row
            .operands
            .iter()
            .map(|o| match o.imm {
                Some((lo, hi)) => format!("{}: imm {} in [{lo}, {hi}]", o.name, o.ty),
                None => format!("{}: {}", o.name, o.ty),
            })
            .collect();
        let cost = match (row.latency, row.throughput) {
            (Some(l), Some(t)) => format!("latency {l}, throughput {t}"),
            _ => format!("{}", row.cost),
        };
        let fields = [
            ("name", row.name.clone()),
            (
                "intrinsic",
                row.intrinsic.clone().unwrap_or_else(|| "-".into()),
            ),
            ("asm", row.asm.clone()),
            ("isa", row.isa.clone()),
            ("feature", row.feature.clone()),
            ("family", format!("{} [{}]", row.family, row.params)),
            ("operands", ops.join(", ")),
            ("result", row.result_type.clone()),
            ("cost", cost),
            ("semantics", row.semantics.clone()),
        ];
        fields
            .iter()
            .map(|(k, v)| format!("{k:<10} {v}\n"))
            .collect()
    });
    Ok(Outcome::Success)
}

pub fn list(
    ctx: &Context,
    isa: Option<&str>,
    feature: Option<&str>,
    grep: Option<&str>,
) -> Result<Outcome> {
    let db = ctx.db()?;
    let re = grep
        .map(|g| regex::Regex::new(g).map_err(|e| Error::Usage(format!("--grep: {e}"))))
        .transpose()?;
    for (what, table, value) in [("ISA", "isas", isa), ("feature", "features", feature)] {
        if let Some(v) = value {
            let known: Vec<String> = db
                .text_rows(&format!("SELECT name FROM {table}"))?
                .into_iter()
                .flatten()
                .collect();
            if !known.iter().any(|k| k == v) {
                let refs: Vec<&str> = known.iter().map(String::as_str).collect();
                return Err(Error::Usage(format!(
                    "unknown {what} '{v}'{} (known: {})",
                    crate::ir::parse::did_you_mean(v, &refs),
                    known.join(", ")
                )));
            }
        }
    }
    let q = format!("{INSTRUCTION_QUERY} WHERE (?1 IS NULL OR s.name = ?1) AND (?2 IS NULL OR f.name = ?2) ORDER BY i.id");
    let mut stmt = db.conn().prepare(&q)?;
    let rows: Vec<InstructionRow> = stmt
        .query_map(rusqlite::params![isa, feature], instruction_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?
        .into_iter()
        .filter(|r| {
            re.as_ref().is_none_or(|re| {
                re.is_match(&r.name)
                    || re.is_match(&r.asm)
                    || r.intrinsic.as_ref().is_some_and(|i| re.is_match(i))
            })
        })
        .collect();
    ctx.print(&rows, || {
        let table: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                vec![
                    r.name.clone(),
                    r.asm.clone(),
                    r.feature.clone(),
                    r.result_type.clone(),
                    format!("{}", r.cost),
                ]
            })
            .collect();
        render_table(&["instruction", "asm", "feature", "result", "cost"], &table)
            + &format!("{} instructions\n", rows.len())
    });
    Ok(Outcome::Success)
}

/// Parses one operand's lanes: a single value (splat) or one per lane, separated by commas or spaces.
fn operand_value(op: &Operand, text: &str) -> Result<Value> {
    let parts: Vec<&str> = text.split([',', ' ']).filter(|p| !p.is_empty()).collect();
    let n = op.ty.lanes as usize;
    if parts.len() != 1 && parts.len() != n {
        return Err(Error::Usage(format!(
            "operand {} ({}) needs 1 or {n} values, got {}",
            op.name,
            op.ty,
            parts.len()
        )));
    }
    let lane = |p: &str| -> Result<u128> {
        let s = read_one(p, &format!("operand {}", op.name))?;
        let macros = Macros::default();
        let mut scope = Scope::new(&macros);
        let c = scope.expr(&crate::ir::sexpr::SExpr {
            kind: crate::ir::sexpr::SKind::List(vec![
                crate::ir::sexpr::SExpr {
                    kind: crate::ir::sexpr::SKind::Sym("const".into()),
                    loc: s.loc.clone(),
                },
                crate::ir::sexpr::SExpr {
                    kind: crate::ir::sexpr::SKind::Sym(op.ty.elem.name().into()),
                    loc: s.loc.clone(),
                },
                s.clone(),
            ]),
            loc: s.loc.clone(),
        })?;
        match &c.op {
            crate::ir::Op::Const(v) => Ok(v[0]),
            _ => unreachable!("const elaborates to a constant"),
        }
    };
    let lanes = parts.iter().map(|p| lane(p)).collect::<Result<Vec<_>>>()?;
    let lanes = if lanes.len() == 1 {
        vec![lanes[0]; n]
    } else {
        lanes
    };
    Ok(Value::new(op.ty, lanes))
}

pub fn eval(ctx: &Context, name: &str, values: &[String]) -> Result<Outcome> {
    let row = find_instruction(&ctx.db()?, name)?;
    if values.len() != row.operands.len() {
        let names: Vec<String> = row
            .operands
            .iter()
            .map(|o| format!("{}: {}", o.name, o.ty))
            .collect();
        return Err(Error::Usage(format!(
            "{} takes {} operands ({}), got {}",
            row.name,
            row.operands.len(),
            names.join(", "),
            values.len()
        )));
    }
    let mut env = Env::new();
    for (op, text) in row.operands.iter().zip(values) {
        env.insert(op.name.clone(), operand_value(op, text)?);
    }
    let result = semantics::eval(&*row.semantics_expr()?, &env)?;
    #[derive(Serialize)]
    struct Evaluated {
        instruction: String,
        #[serde(rename = "type")]
        ty: String,
        lanes: Vec<String>,
    }
    let out = Evaluated {
        instruction: row.name.clone(),
        ty: result.ty.to_string(),
        lanes: result
            .lanes
            .iter()
            .map(|&l| crate::ir::print::lane_text(result.ty.elem, l))
            .collect(),
    };
    ctx.print(&out, || format!("{} {}\n", out.ty, result));
    Ok(Outcome::Success)
}

pub fn prove(ctx: &Context, lhs: &str, rhs: &str, lanes: u32, timeout_ms: u32) -> Result<Outcome> {
    let specs = load_macros(&ctx.layout.specs)?;
    let mut scope = Scope::new(&specs.macros);
    scope.implicit_lanes = Some(lanes);
    let l = scope.expr(&read_one(lhs, "lhs")?)?;
    let r = scope.expr(&read_one(rhs, "rhs")?)?;
    let verdict = prove_equivalent(&l, &r, None, timeout_ms)?;
    ctx.print(&verdict, || match &verdict {
        Verdict::Proven { ty, ms, .. } => format!("proven: equivalent at {ty} ({ms:.1} ms)\n"),
        Verdict::Counterexample {
            inputs, lhs, rhs, ..
        } => {
            let ins: String = inputs
                .iter()
                .map(|(n, v)| format!("  {n} = {v}\n"))
                .collect();
            format!("not equivalent; counterexample:\n{ins}  lhs = {lhs}\n  rhs = {rhs}\n")
        }
        Verdict::Unknown { reason, ms } => format!("unknown after {ms:.0} ms: {reason}\n"),
    });
    Ok(match verdict {
        Verdict::Proven { .. } => Outcome::Success,
        _ => Outcome::Negative,
    })
}

/// The flags of `isadb compile` besides the expression and the target.
pub struct CompileOptions<'a> {
    pub lanes: Option<u32>,
    pub vars: &'a [String],
    pub emit: Option<&'a str>,
    pub run: Option<usize>,
    /// Reuse and record selections in the selection cache (`--emit egglog` bypasses it, since
    /// it prints the program that ran).
    pub cache: bool,
}

/// `isadb compile`: selects, validates and prints the instruction sequence.
pub fn compile(
    ctx: &Context,
    expr: &str,
    target: &str,
    options: CompileOptions,
) -> Result<Outcome> {
    let CompileOptions {
        lanes,
        vars,
        emit,
        run,
        cache,
    } = options;
    let target = crate::select::Target::parse(target)?;
    if let Some(e) = emit.filter(|e| !["egglog", "c"].contains(e)) {
        return Err(Error::Usage(format!("--emit {e}: expected egglog or c")));
    }
    let mut declared = HashMap::new();
    for v in vars {
        let (name, ty) = v
            .split_once(':')
            .ok_or_else(|| Error::Usage(format!("--var {v}: expected NAME:TYPE, e.g. z:u16")))?;
        let elem = crate::ir::Elem::parse(ty)
            .ok_or_else(|| Error::Usage(format!("--var {v}: unknown element type '{ty}'")))?;
        declared.insert(name.to_string(), elem);
    }
    let catalog = crate::select::Catalog::load(&ctx.layout, target)?;
    let mut db = if cache && emit != Some("egglog") {
        Some(ctx.db()?)
    } else {
        None
    };
    let compiled = match crate::select::compile(&catalog, expr, lanes, &declared, db.as_mut()) {
        Ok(c) => c,
        Err(e) => {
            // The program that failed is what one needs to see to find out why.
            if emit == Some("egglog") {
                if let Ok((_, p)) = crate::select::prepare(&catalog, expr, lanes, &declared) {
                    print!("{}", p.text);
                }
            }
            return Err(e);
        }
    };
    let (steps, outputs) = crate::select::steps(&compiled, &catalog);
    let report = CompileReport {
        expression: expr.to_string(),
        target: target.name.to_string(),
        result: compiled.input.ty.to_string(),
        steps: steps
            .iter()
            .map(|s| StepReport {
                temp: s.temp.clone(),
                call: s.call.clone(),
                asm: s.asm.clone(),
                cost: s.cost,
            })
            .collect(),
        outputs: outputs
            .iter()
            .map(|(t, from, to)| format!("out[{from}..{to}] = {t}"))
            .collect(),
        cost: compiled.cost,
        select_ms: compiled.select_ms,
        validate_ms: compiled.validate_ms,
        run: match run {
            Some(iterations) => {
                let dir = std::env::temp_dir().join("isadb-compile");
                let check = crate::select::check::run_c(&compiled, &catalog, iterations, 1, &dir)?;
                Some(match check.mismatch {
                    None => format!(
                        "ran the C on {}: {} lanes equal the interpreter's",
                        target.name, check.lanes
                    ),
                    Some(m) => format!("MISMATCH running the C on {}: {m}", target.name),
                })
            }
            None => None,
        },
        cached: compiled.cached,
        rewrites: compiled.program.as_ref().map(|p| p.rewrites),
        egglog: compiled
            .program
            .as_ref()
            .filter(|_| emit == Some("egglog"))
            .map(|program| {
                let skipped: String = program
                    .skipped
                    .iter()
                    .map(|s| format!("; not in the e-graph: {s}\n"))
                    .collect();
                format!("{skipped}{}", program.text)
            }),
        c: match emit {
            Some("c") => Some(crate::select::emit_c::function(
                &compiled, &catalog, "kernel",
            )?),
            _ => None,
        },
    };
    ctx.print(&report, || {
        let mut out = format!(
            "{} on {} ({}):
",
            report.expression, report.target, report.result
        );
        for s in &report.steps {
            out += &format!(
                "  {} = {:<48} {:<40} cost {}
",
                s.temp, s.call, s.asm, s.cost
            );
        }
        for o in &report.outputs {
            out += &format!(
                "  {o}
"
            );
        }
        let proof = if report.cached {
            "from the selection cache (proven equivalent by z3 when stored)".to_string()
        } else {
            format!("proven equivalent by z3 in {:.1} ms", report.validate_ms)
        };
        out += &format!(
            "cost {} ({} instructions); selected in {:.1} ms, {proof}
",
            report.cost,
            report.steps.len(),
            report.select_ms,
        );
        if let Some(r) = &report.run {
            out += &format!("{r}\n");
        }
        if let Some(p) = &report.egglog {
            out += &format!("\n{p}");
        }
        if let Some(c) = &report.c {
            out += &format!("\n{c}");
        }
        out
    });
    Ok(match &report.run {
        Some(r) if r.starts_with("MISMATCH") => Outcome::Negative,
        _ => Outcome::Success,
    })
}

#[derive(Serialize)]
struct StepReport {
    temp: String,
    call: String,
    asm: String,
    cost: f64,
}

#[derive(Serialize)]
struct CompileReport {
    expression: String,
    target: String,
    result: String,
    steps: Vec<StepReport>,
    outputs: Vec<String>,
    cost: f64,
    select_ms: f64,
    validate_ms: f64,
    /// Whether the selection came from the selection cache (no egglog, no z3 this time).
    cached: bool,
    /// Rewrites in the egglog program; `None` for a cached selection.
    rewrites: Option<usize>,
    run: Option<String>,
    egglog: Option<String>,
    c: Option<String>,
}

/// `isadb validate`: runs the validation and prints per-ISA counts, skips and mismatches.
pub fn validate(
    ctx: &Context,
    isa: Option<String>,
    instrs: Vec<String>,
    inputs: usize,
    seed: u64,
    force: bool,
) -> Result<Outcome> {
    use std::io::IsTerminal;
    let opts = crate::validate::Options {
        isa,
        instrs,
        inputs,
        seed,
        force,
        require_tools: std::env::var("ISADB_REQUIRE_TOOLS")
            .is_ok_and(|v| !v.is_empty() && v != "0"),
        progress: std::io::stderr().is_terminal(),
        ..crate::validate::Options::default()
    };
    let report = crate::validate::validate(&ctx.layout, &opts)?;
    ctx.print(&report, || validate_text(&report));
    Ok(if report.mismatched() > 0 {
        Outcome::Negative
    } else {
        Outcome::Success
    })
}

/// The human-readable validation report.
fn validate_text(report: &crate::validate::Report) -> String {
    let rows: Vec<Vec<String>> = report
        .isas
        .iter()
        .map(|s| {
            vec![
                s.isa.clone(),
                s.with_intrinsic.to_string(),
                s.validated.to_string(),
                s.mismatched.to_string(),
                s.skipped.to_string(),
                s.ran.to_string(),
                s.cached.to_string(),
                format!("{:.1}", s.wall_ms / 1000.0),
            ]
        })
        .collect();
    let mut out = render_table(
        &[
            "isa",
            "with intrinsic",
            "validated",
            "mismatched",
            "skipped",
            "ran",
            "cached",
            "seconds",
        ],
        &rows,
    );
    out += &format!(
        "{} inputs per instruction, seed {}, {:.1} s\n",
        report.inputs,
        report.seed,
        report.wall_ms / 1000.0
    );
    for w in &report.warnings {
        out += &format!("warning: {w}\n");
    }
    let skipped: Vec<&crate::validate::InstrResult> = report
        .results
        .iter()
        .filter(|r| r.status == "skipped")
        .collect();
    if !skipped.is_empty() {
        out += "skipped:\n";
        for r in skipped.iter().take(40) {
            out += &format!("  {} ({}): {}\n", r.name, r.isa, r.detail);
        }
        if skipped.len() > 40 {
            out += &format!("  ... and {} more (see --json)\n", skipped.len() - 40);
        }
    }
    for r in report.results.iter().filter(|r| r.status == "mismatch") {
        if r.mismatches.is_empty() {
            out += &format!(
                "MISMATCH {} ({}, recorded earlier): {}\n",
                r.name, r.isa, r.detail
            );
            continue;
        }
        out += &format!(
            "MISMATCH {} ({}): {} of {} inputs differ\n",
            r.name, r.isa, r.mismatched_inputs, r.inputs
        );
        for m in &r.mismatches {
            out += &format!("  input {}:\n", m.input);
            for (name, lanes) in &m.operands {
                out += &format!("    {name:<8} = {lanes}\n");
            }
            out += &format!(
                "    expected = {}\n    actual   = {}\n    differing lanes: {}\n",
                m.expected,
                m.actual,
                lane_list(&m.lanes)
            );
        }
    }
    out
}

/// `0, 3, 7` (at most 16, then a count).
fn lane_list(lanes: &[usize]) -> String {
    let mut s: Vec<String> = lanes.iter().take(16).map(|l| l.to_string()).collect();
    if lanes.len() > 16 {
        s.push(format!("... ({} lanes)", lanes.len()));
    }
    s.join(", ")
}

pub fn query(ctx: &Context, text: &str, csv_out: bool) -> Result<Outcome> {
    let db = ctx.db()?;
    let rows = crate::query::ask::ask(&db, &ctx.layout, text)?;
    if csv_out {
        let mut w = csv::Writer::from_writer(std::io::stdout());
        for r in &rows {
            w.serialize(r)
                .map_err(|e| Error::Tool(format!("writing CSV: {e}")))?;
        }
        w.flush().map_err(|e| Error::io("stdout", e))?;
        return Ok(Outcome::Success);
    }
    ctx.print(&rows, || {
        let table: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                let what = if r.idiom.is_empty() {
                    r.binding.clone()
                } else {
                    format!("{}: {}", r.idiom, r.binding)
                };
                vec![
                    r.instruction.clone(),
                    r.asm.clone(),
                    r.isa.clone(),
                    r.feature.clone(),
                    what,
                    format!("{}", r.cost),
                ]
            })
            .collect();
        render_table(
            &["instruction", "asm", "isa", "feature", "binding", "cost"],
            &table,
        ) + &format!("{} rows\n", rows.len())
    });
    Ok(if rows.is_empty() {
        Outcome::Negative
    } else {
        Outcome::Success
    })
}

pub fn bench(ctx: &Context, rounds: usize) -> Result<Outcome> {
    let f = crate::bench::run(ctx, rounds.max(1))?;
    ctx.print(&f, || {
        let mut out = format!(
            "db build (fresh, {} instructions): {:.0} ms\n",
            f.instructions, f.db_build_ms
        );
        for (q, ms) in &f.query_process_ms {
            out += &format!("query process {q:?}: {ms:.1} ms (median)\n");
        }
        out += &format!(
            "interpreter: {:.0} instruction evaluations/s\n",
            f.interpreter_evals_per_s
        );
        out += &format!(
            "prove halving_add u8 x 64: {:.1} ms\n",
            f.prove_halving_add_u8x64_ms
        );
        for (t, ms) in &f.compile_catalog_ms {
            out += &format!("compile: load the {t} catalog: {ms:.0} ms\n");
        }
        out += &format!(
            "compile: selection over {} expressions: cold median {:.1} ms, max {:.1} ms; cached median {:.1} ms, max {:.1} ms; z3 translation validation median {:.1} ms\n",
            f.compile_expressions,
            f.compile_cold_median_ms,
            f.compile_cold_max_ms,
            f.compile_cached_median_ms,
            f.compile_cached_max_ms,
            f.compile_validate_median_ms
        );
        out
    });
    Ok(Outcome::Success)
}

/// What `isadb kernel` was asked to do besides compiling.
pub struct KernelOptions<'a> {
    pub target: &'a str,
    pub cost_model: &'a str,
    pub timeout_s: f64,
    pub emit: Option<&'a str>,
    pub run: Option<usize>,
}

/// `isadb kernel FILE`: compile, prove, print the report (and the C or egglog asked for).
pub fn kernel(ctx: &Context, file: &std::path::Path, o: &KernelOptions) -> Result<Outcome> {
    use crate::kernel::cost::Model;
    let model = Model::parse(o.cost_model).ok_or_else(|| {
        Error::Usage(format!(
            "unknown cost model '{}' (models: {})",
            o.cost_model,
            Model::NAMES.join(", ")
        ))
    })?;
    if !(o.timeout_s > 0.0 && o.timeout_s <= 86_400.0) {
        return Err(Error::Usage(format!(
            "--timeout {} is not in (0, 86400] seconds",
            o.timeout_s
        )));
    }
    if let Some(e) = o.emit.filter(|e| !["c", "egglog"].contains(e)) {
        return Err(Error::Usage(format!("--emit {e}: emit c or egglog")));
    }
    let opts = crate::kernel::Options {
        model,
        timeout: std::time::Duration::from_secs_f64(o.timeout_s),
        seed: true,
        run: o.run,
        keep_egglog: o.emit == Some("egglog"),
    };
    let report = crate::kernel::compile_file(&ctx.layout, file, o.target, &opts)?;
    match o.emit {
        Some("c") => print!("{}", report.c),
        Some("egglog") => print!("{}", report.egglog.as_deref().unwrap_or("")),
        _ => {}
    }
    ctx.print(&report, || report.to_string());
    Ok(match &report.run {
        Some(r) if !r.passed => Outcome::Negative,
        _ => Outcome::Success,
    })
}

/// `isadb kernel --tune`.
pub fn kernel_tune(ctx: &Context) -> Result<Outcome> {
    let t = crate::kernel::tune::tune(&ctx.layout)?;
    ctx.print(&t, || {
        format!(
            "alpha {} beta {} ({} candidate pairs on {}): total diospyros cost {:.3}, {:.1} s\n",
            t.alpha,
            t.beta,
            t.candidates,
            t.kernels.join(", "),
            t.score,
            t.ms / 1000.0
        )
    });
    Ok(Outcome::Success)
}

/// The kernel rules' part of `isadb verify-rules`.
pub fn verify_kernel_rules(ctx: &Context, only: Option<&str>, force: bool) -> Result<Outcome> {
    let v = crate::kernel::verify::verify_rules(&ctx.layout, only, force)?;
    ctx.print(&v, || {
        let mut out = String::new();
        for r in v.rules.iter().filter(|r| r.status != "proven") {
            out += &format!(
                "{} {}: {}\n",
                r.name,
                r.status,
                r.counterexample.as_deref().unwrap_or("")
            );
        }
        out + &format!(
            "kernel rules: {} proven, {} refuted, {} already proven (skipped)\n",
            v.proven, v.refuted, v.skipped
        )
    });
    Ok(if v.refuted > 0 {
        Outcome::Negative
    } else {
        Outcome::Success
    })
}

/// `isadb verify-rules`: the rules of `specs/rules/` and the kernel rules of `specs/dsp/`
/// (`--rule` picks the set its rule is in).
pub fn verify_rules(
    ctx: &Context,
    only: Option<&str>,
    jobs: usize,
    force: bool,
) -> Result<Outcome> {
    let kernel_rules = crate::kernel::rule::load(&ctx.layout.specs)?;
    let is_kernel = only.is_some_and(|n| kernel_rules.iter().any(|r| r.name == n));
    let mut outcome = Outcome::Success;
    if !is_kernel {
        outcome = crate::rules::verify::verify_rules(
            &ctx.layout,
            only,
            jobs,
            force,
            ctx.output == Output::Json,
        )?;
    }
    if (only.is_none() || is_kernel) && verify_kernel_rules(ctx, only, force)? == Outcome::Negative
    {
        outcome = Outcome::Negative;
    }
    Ok(outcome)
}

/// `isadb bench kernels`.
pub fn bench_kernels(ctx: &Context, only: Option<&str>) -> Result<Outcome> {
    let b = crate::kernel::bench::run(&ctx.layout, only)?;
    ctx.print(&b, || b.to_string());
    Ok(Outcome::Success)
}
