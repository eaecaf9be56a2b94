//! Reading instructions back from the database: one query behind every reader (`show`, `list`,
//! `eval`, a target's catalog, validation), giving whole typed instructions with their
//! semantics parsed back into IR.

use super::Database;
use crate::error::{Error, Location, Result};
use crate::ir::meta::Meta;
use crate::ir::sexpr::read_one;
use crate::ir::{Macros, Scope, VecType};
use crate::spec::{Instruction, Isa, Operand};
use rusqlite::OptionalExtension;

/// Which instructions to read; the default reads all of them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter<'a> {
    /// Only instructions of this ISA.
    pub isa: Option<Isa>,
    /// Only instructions whose feature is one of these.
    pub features: Option<&'a [&'a str]>,
}

/// Every column an [`Instruction`] is read from, in the order [`instruction`] reads them.
const SELECT: &str = "SELECT i.name, i.intrinsic, i.asm, s.name, f.name, fam.name, i.params,
    i.operands, i.result_type, i.semantics, i.sem_hash, i.latency, i.throughput, i.cost,
    fam.spec_file, fam.spec_line
    FROM instructions i JOIN isas s ON s.id = i.isa_id JOIN features f ON f.id = i.feature_id
    JOIN families fam ON fam.id = i.family_id";

impl Database {
    /// The instructions the filter selects, in spec order.
    pub fn instructions(&self, filter: &Filter) -> Result<Vec<Instruction>> {
        let features = filter
            .features
            .map(|f| serde_json::to_string(f).expect("a list of strings is JSON"));
        let sql = format!(
            "{SELECT} WHERE (?1 IS NULL OR s.name = ?1)
             AND (?2 IS NULL OR f.name IN (SELECT value FROM json_each(?2))) ORDER BY i.id"
        );
        let mut stmt = self.conn().prepare(&sql)?;
        let rows = stmt.query_map(rusqlite::params![filter.isa, features], Row::read)?;
        let macros = Macros::default();
        rows.map(|row| row?.instruction(&macros)).collect()
    }

    /// The instruction with this name or intrinsic; an unknown one is a usage error with a
    /// suggestion.
    pub fn find_instruction(&self, name: &str) -> Result<Instruction> {
        let sql = format!("{SELECT} WHERE i.name = ?1 OR i.intrinsic = ?1 ORDER BY i.id LIMIT 1");
        if let Some(row) = self.conn().query_row(&sql, [name], Row::read).optional()? {
            return row.instruction(&Macros::default());
        }
        match self.by_mnemonic(name)?[..] {
            [] => {}
            [ref one] => return self.find_instruction(one),
            ref several => return Err(several_spelled(name, several)),
        }
        let rows = self.names("SELECT name FROM instructions")?;
        let known: Vec<&str> = rows.iter().map(String::as_str).collect();
        Err(Error::Usage(format!(
            "unknown instruction '{name}'{}",
            crate::words::did_you_mean(name, &known)
        )))
    }

    /// The instructions whose assembly an assembly mnemonic heads (`uqadd`, `paddusb`, HVX's
    /// `vdmpy`; x86's VEX forms with or without their `v`), in database order.
    pub fn by_mnemonic(&self, name: &str) -> Result<Vec<String>> {
        let rows = self.text_rows("SELECT name, asm FROM instructions ORDER BY id")?;
        Ok(rows
            .into_iter()
            .filter(|r| {
                let m = mnemonic(&r[1]);
                m.eq_ignore_ascii_case(name)
                    || m.len() == name.len() + 1
                        && m.starts_with('v')
                        && m[1..].eq_ignore_ascii_case(name)
            })
            .map(|mut r| r.swap_remove(0))
            .collect())
    }

    /// Nothing when some instruction needs `feature`; else a usage error naming the known ones.
    pub fn check_feature(&self, feature: &str) -> Result<()> {
        let known = self.names("SELECT name FROM features ORDER BY id")?;
        if known.iter().any(|k| k == feature) {
            return Ok(());
        }
        let refs: Vec<&str> = known.iter().map(String::as_str).collect();
        Err(Error::Usage(format!(
            "unknown feature '{feature}'{} (known: {})",
            crate::words::did_you_mean(feature, &refs),
            known.join(", ")
        )))
    }

    /// The one text column of every row of `sql`.
    pub fn names(&self, sql: &str) -> Result<Vec<String>> {
        let mut stmt = self.conn().prepare(sql)?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// A mnemonic heading several instructions' assembly, where one is wanted.
pub fn several_spelled(name: &str, instructions: &[String]) -> Error {
    Error::Usage(format!(
        "'{name}' is the mnemonic of {} instructions: {}; name one",
        instructions.len(),
        instructions.join(", ")
    ))
}

/// The mnemonic an instruction's assembly starts with: its first word (`uqadd Vd.16B`), or for
/// HVX's assignments the operation (`Vd.h=vdmpy(Vu.ub,Rt.b)` is `vdmpy`).
fn mnemonic(asm: &str) -> &str {
    let op = match asm.split_once('=') {
        Some((_, rhs)) => rhs.split('(').next().unwrap_or(rhs),
        None => asm,
    };
    op.split_whitespace().next().unwrap_or("")
}

/// The columns of one instruction as stored.
struct Row {
    name: String,
    intrinsic: Option<String>,
    asm: String,
    isa: Isa,
    feature: String,
    family: String,
    params: String,
    operands: String,
    result: String,
    semantics: String,
    sem_hash: String,
    latency: Option<f64>,
    throughput: Option<f64>,
    cost: f64,
    spec_file: String,
    spec_line: i64,
}

impl Row {
    fn read(r: &rusqlite::Row) -> rusqlite::Result<Row> {
        Ok(Row {
            name: r.get(0)?,
            intrinsic: r.get(1)?,
            asm: r.get(2)?,
            isa: r.get(3)?,
            feature: r.get(4)?,
            family: r.get(5)?,
            params: r.get(6)?,
            operands: r.get(7)?,
            result: r.get(8)?,
            semantics: r.get(9)?,
            sem_hash: r.get(10)?,
            latency: r.get(11)?,
            throughput: r.get(12)?,
            cost: r.get(13)?,
            spec_file: r.get(14)?,
            spec_line: r.get(15)?,
        })
    }

    /// The instruction, its operands, result type and semantics parsed back from their text.
    fn instruction(self, macros: &Macros) -> Result<Instruction> {
        let bad = |what: &str| Error::data("instructions", format!("{}: bad {what}", self.name));
        let operands: Vec<Operand> =
            serde_json::from_str(&self.operands).map_err(|_| bad("operands"))?;
        let result = VecType::parse(&self.result).ok_or_else(|| bad("result type"))?;
        let source = format!("semantics of {}", self.name);
        let semantics = Scope::new(macros).expr(&read_one(&self.semantics, &source)?)?;
        if semantics.ty != result {
            return Err(bad("semantics (its type is not the result type)"));
        }
        let binding = self
            .params
            .split_whitespace()
            .map(|kv| {
                let (k, v) = kv.split_once('=').ok_or_else(|| bad("params"))?;
                Ok((k.to_string(), Meta::from_text(v)))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Instruction {
            name: self.name,
            intrinsic: self.intrinsic,
            asm: self.asm,
            isa: self.isa,
            feature: self.feature,
            family: self.family,
            binding,
            operands,
            result,
            semantics,
            sem_text: self.semantics,
            sem_hash: self.sem_hash,
            latency: self.latency,
            throughput: self.throughput,
            cost: self.cost,
            loc: Location {
                file: self.spec_file,
                line: self.spec_line.max(0) as usize,
                col: 1,
            },
        })
    }
}
