//! `isadb show`, `list` and `eval`: one instruction (with its cross-ISA class), a list of them,
//! and an instruction run on lane values.

use super::classes::class_lines;
use super::{render_table, Context, Outcome};
use crate::classes::{class_of, ClassRow};
use crate::database::Filter;
use crate::error::{Error, Result};
use crate::ir::print::lane_text;
use crate::spec::Isa;
use serde::Serialize;

/// `show INSTR`: semantics, types, feature, cost, family and class.
pub fn show(ctx: &Context, name: &str) -> Result<Outcome> {
    let db = ctx.project.open()?;
    let ins = db.find_instruction(name)?;
    let class = class_of(&db, &ins.name)?;
    #[derive(Serialize)]
    struct Shown<'a> {
        #[serde(flatten)]
        instruction: &'a crate::spec::Instruction,
        class: Option<ClassRow>,
    }
    let shown = Shown {
        instruction: &ins,
        class,
    };
    ctx.print(&shown, || {
        let ops: Vec<String> = ins
            .operands
            .iter()
            .map(|o| match o.imm {
                Some((lo, hi)) => format!("{}: imm {} in [{lo}, {hi}]", o.name, o.ty),
                None => format!("{}: {}", o.name, o.ty),
            })
            .collect();
        let cost = match (ins.latency, ins.throughput) {
            (Some(l), Some(t)) => format!("latency {l}, throughput {t}"),
            _ => format!("{}", ins.cost),
        };
        let fields = [
            ("name", ins.name.clone()),
            (
                "intrinsic",
                ins.intrinsic.clone().unwrap_or_else(|| "-".into()),
            ),
            ("asm", ins.asm.clone()),
            ("isa", ins.isa.to_string()),
            ("feature", ins.feature.clone()),
            ("family", format!("{} [{}]", ins.family, ins.binding_text())),
            ("operands", ops.join(", ")),
            ("result", ins.result.to_string()),
            ("cost", cost),
            ("semantics", ins.sem_text.clone()),
        ];
        let text: String = fields
            .iter()
            .map(|(k, v)| format!("{k:<10} {v}\n"))
            .collect();
        text + &shown.class.as_ref().map(class_lines).unwrap_or_default()
    })?;
    Ok(Outcome::Success)
}

/// `list [--isa I] [--feature F] [--grep RE]`.
pub fn list(
    ctx: &Context,
    isa: Option<Isa>,
    feature: Option<&str>,
    grep: Option<&str>,
) -> Result<Outcome> {
    let db = ctx.project.open()?;
    let re = grep
        .map(|g| {
            regex::Regex::new(g)
                .map_err(|e| Error::Usage(format!("--grep: {}", crate::error::one_line(&e))))
        })
        .transpose()?;
    if let Some(f) = feature {
        db.check_feature(f)?;
    }
    let features = feature.map(|f| [f]);
    let rows: Vec<_> = db
        .instructions(&Filter {
            isa,
            features: features.as_ref().map(|f| &f[..]),
        })?
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
                    r.result.to_string(),
                    format!("{}", r.cost),
                ]
            })
            .collect();
        render_table(&["instruction", "asm", "feature", "result", "cost"], &table)
            + &format!("{} instructions\n", rows.len())
    })?;
    Ok(Outcome::negative_if(rows.is_empty()))
}

/// `eval INSTR V...`: the instruction's result on the given lane values.
pub fn eval(ctx: &Context, name: &str, values: &[String]) -> Result<Outcome> {
    let ins = ctx.project.open()?.find_instruction(name)?;
    let result = ins.eval_text(values)?;
    #[derive(Serialize)]
    struct Evaluated {
        instruction: String,
        #[serde(rename = "type")]
        ty: String,
        lanes: Vec<String>,
    }
    let out = Evaluated {
        instruction: ins.name.clone(),
        ty: result.ty.to_string(),
        lanes: result
            .lanes
            .iter()
            .map(|&l| lane_text(result.ty.elem, l))
            .collect(),
    };
    ctx.print(&out, || format!("{} {}\n", out.ty, result))?;
    Ok(Outcome::Success)
}
