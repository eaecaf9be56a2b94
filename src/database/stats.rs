//! Summary counts of the database contents, for `isadb stats` (as a table or JSON).

use std::collections::BTreeMap;

use serde::Serialize;

use super::Database;
use crate::error::Result;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Per ISA (by name), with its features.
    pub isas: Vec<IsaStats>,
    pub idioms: u64,
    pub classes: u64,
    /// Rule count per verification status (only statuses that occur).
    pub rules_by_status: BTreeMap<String, u64>,
    /// Validation result count per status (only statuses that occur).
    pub validation_by_status: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IsaStats {
    pub name: String,
    pub instructions: u64,
    pub with_intrinsic: u64,
    /// Per feature (by name); their counts sum to the ISA's.
    pub features: Vec<FeatureStats>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FeatureStats {
    pub name: String,
    pub instructions: u64,
    pub with_intrinsic: u64,
}

impl Database {
    /// Counts per ISA and feature, and of the other tables.
    pub fn stats(&self) -> Result<Stats> {
        let conn = self.conn();
        let mut isas: Vec<IsaStats> = Vec::new();
        let mut stmt = conn.prepare(
            "SELECT i.name, f.name, count(n.id), count(n.intrinsic) FROM isas i
             LEFT JOIN features f ON f.isa_id = i.id LEFT JOIN instructions n ON n.feature_id = f.id
             GROUP BY i.id, f.id ORDER BY i.name, f.name",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let isa: String = row.get(0)?;
            if isas.last().is_none_or(|s| s.name != isa) {
                isas.push(IsaStats {
                    name: isa,
                    ..IsaStats::default()
                });
            }
            let entry = isas.last_mut().expect("pushed above");
            if let Some(name) = row.get::<_, Option<String>>(1)? {
                let feature = FeatureStats {
                    name,
                    instructions: row.get(2)?,
                    with_intrinsic: row.get(3)?,
                };
                entry.instructions += feature.instructions;
                entry.with_intrinsic += feature.with_intrinsic;
                entry.features.push(feature);
            }
        }
        let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, u64>(0));
        let by_status = |table: &str| -> Result<BTreeMap<String, u64>> {
            let mut stmt = conn.prepare(&format!(
                "SELECT status, count(*) FROM {table} GROUP BY status"
            ))?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        Ok(Stats {
            isas,
            idioms: count("SELECT count(*) FROM idioms")?,
            classes: count("SELECT count(*) FROM classes")?,
            rules_by_status: by_status("rules")?,
            validation_by_status: by_status("validation_results")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_isa_feature_and_status() {
        let db = Database::open_in_memory().unwrap();
        db.conn()
            .execute_batch(
                "INSERT INTO isas VALUES (1, 'x86'), (2, 'rvv'), (3, 'neon');
                 INSERT INTO features VALUES (1, 'avx2', 1), (2, 'sse2', 1), (3, 'v', 2);
                 INSERT INTO families VALUES (1, 1, 'add', 'specs/x86.isa', 3), (2, 2, 'vadd', 'specs/rvv.isa', 9);
                 INSERT INTO instructions (id, name, intrinsic, asm, isa_id, feature_id, family_id, params, operands,
                     result_type, semantics, sem_hash, cost) VALUES
                   (1, 'vpaddw', '_mm256_add_epi16', 'vpaddw', 1, 1, 1, 'W=256 T=i16', '[]', 'i16x16', '(+ a b)', 'h1', 1.0),
                   (2, 'vpaddd', NULL, 'vpaddd', 1, 1, 1, 'W=256 T=i32', '[]', 'i32x8', '(+ a b)', 'h2', 1.0),
                   (3, 'vadd.vv', '__riscv_vadd', 'vadd.vv', 2, 3, 2, 'T=i8', '[]', 'i8xN', '(+ a b)', 'h3', 1.0);
                 INSERT INTO classes VALUES (1, 'add', '');
                 INSERT INTO rules (name, lhs, rhs, kind, provenance, rule_hash, status) VALUES
                   ('r1', 'a', 'b', 'lift', 'hand-written', 'h', 'proven'),
                   ('r2', 'a', 'b', 'lift', 'hand-written', 'h', 'proven'),
                   ('r3', 'a', 'b', 'lower', 'synthesized', 'h', 'unverified');",
            )
            .unwrap();
        let s = db.stats().unwrap();
        let feature = |name: &str, instructions, with_intrinsic| FeatureStats {
            name: name.into(),
            instructions,
            with_intrinsic,
        };
        assert_eq!(
            s.isas,
            vec![
                IsaStats {
                    name: "neon".into(),
                    instructions: 0,
                    with_intrinsic: 0,
                    features: vec![]
                },
                IsaStats {
                    name: "rvv".into(),
                    instructions: 1,
                    with_intrinsic: 1,
                    features: vec![feature("v", 1, 1)]
                },
                IsaStats {
                    name: "x86".into(),
                    instructions: 2,
                    with_intrinsic: 1,
                    features: vec![feature("avx2", 2, 1), feature("sse2", 0, 0)]
                },
            ]
        );
        assert_eq!((s.idioms, s.classes), (0, 1));
        assert_eq!(
            s.rules_by_status,
            BTreeMap::from([("proven".into(), 2), ("unverified".into(), 1)])
        );
        assert!(s.validation_by_status.is_empty());
    }
}
