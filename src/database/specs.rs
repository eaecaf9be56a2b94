//! Storing what the spec files define: ISAs, features, families, instructions and idioms, the
//! rows every other table refers to.

use super::Database;
use crate::error::{Error, Result};
use crate::spec::{Isa, SpecSet};
use rusqlite::params;
use std::collections::HashMap;

impl Database {
    /// Inserts the ISAs, features, families, instructions and idioms of `specs` into an empty
    /// database, in one transaction.
    pub fn insert_specs(&mut self, specs: &SpecSet) -> Result<()> {
        self.transaction(|tx| insert(tx, specs))
    }
}

fn insert(tx: &rusqlite::Transaction, specs: &SpecSet) -> Result<()> {
    let mut isa_ids: HashMap<Isa, i64> = HashMap::new();
    let mut feature_ids: HashMap<&str, i64> = HashMap::new();
    let mut family_ids: HashMap<(Isa, &str), i64> = HashMap::new();
    for fam in &specs.families {
        let isa = *isa_ids.entry(fam.isa).or_insert_with(|| {
            tx.execute("INSERT INTO isas(name) VALUES (?1)", [fam.isa])
                .map(|_| tx.last_insert_rowid())
                .unwrap_or(-1)
        });
        tx.execute(
            "INSERT INTO families(isa_id, name, spec_file, spec_line) VALUES (?1, ?2, ?3, ?4)",
            params![isa, fam.name, fam.form.loc.file, fam.form.loc.line as i64],
        )?;
        family_ids.insert((fam.isa, &fam.name), tx.last_insert_rowid());
    }
    if isa_ids.values().any(|&id| id < 0) {
        return Err(Error::data("isas", "could not insert an ISA"));
    }
    let mut insert = tx.prepare(
        "INSERT INTO instructions(name, intrinsic, asm, isa_id, feature_id, family_id, params, operands,
         result_type, semantics, sem_hash, latency, throughput, cost)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?;
    for ins in &specs.instructions {
        let isa = isa_ids[&ins.isa];
        let feature = match feature_ids.get(ins.feature.as_str()) {
            Some(&id) => id,
            None => {
                tx.execute(
                    "INSERT INTO features(name, isa_id) VALUES (?1, ?2)",
                    params![ins.feature, isa],
                )
                .map_err(|e| {
                    Error::data(ins.loc.to_string(), format!("feature {}: {e}", ins.feature))
                })?;
                let id = tx.last_insert_rowid();
                feature_ids.insert(&ins.feature, id);
                id
            }
        };
        let operands = serde_json::to_string(&ins.operands)
            .map_err(|e| Error::data("instructions", e.to_string()))?;
        insert
            .execute(params![
                ins.name,
                ins.intrinsic,
                ins.asm,
                isa,
                feature,
                family_ids[&(ins.isa, ins.family.as_str())],
                ins.binding_text(),
                operands,
                ins.result.to_string(),
                ins.sem_text,
                ins.sem_hash,
                ins.latency,
                ins.throughput,
                ins.cost
            ])
            .map_err(|e| {
                Error::data(
                    ins.loc.to_string(),
                    format!("instruction {}: {e}", ins.name),
                )
            })?;
    }
    let mut idiom = tx.prepare(
        "INSERT INTO idioms(name, params, template, aliases, spec_file, spec_line) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for i in &specs.idioms {
        idiom.execute(params![
            i.name,
            i.params.join(" "),
            i.body.to_string(),
            i.aliases.join("|"),
            i.loc.file,
            i.loc.line as i64
        ])?;
    }
    Ok(())
}
