//! Tests of the CSV round trip: export -> import -> export byte-exact, malformed files named by
//! file, line and column with nothing changed, foreign keys, missing files and unknown tables.

use super::*;
use crate::database::COMMITTED_TABLES;
use rusqlite::params;

/// A `rules.db` path (not yet created) inside a temporary directory that is removed when
/// the guard drops, pass or fail.
fn scratch_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::Builder::new()
        .prefix("isadb-csv-test-")
        .tempdir()
        .unwrap();
    let dir = tmp.path().join("rules.db");
    (tmp, dir)
}

/// The spec-built part that class_members refers to.
fn catalogue() -> Database {
    let db = Database::open_in_memory().unwrap();
    db.conn()
        .execute_batch(
            "INSERT INTO isas VALUES (1, 'x86');
             INSERT INTO features VALUES (1, 'avx2', 1);
             INSERT INTO families VALUES (1, 1, 'add', 'specs/x86.isa', 3);
             INSERT INTO instructions (id, name, intrinsic, asm, isa_id, feature_id, family_id, params, operands,
                 result_type, semantics, sem_hash, cost) VALUES
               (1, 'vpaddw', '_mm256_add_epi16', 'vpaddw', 1, 1, 1, 'W=256 T=i16', '[]', 'i16x16', '(+ a b)', 'h1', 1.0),
               (2, 'vpaddd', NULL, 'vpaddd', 1, 1, 1, 'W=256 T=i32', '[]', 'i32x8', '(+ a b)', 'h2', 0.5);",
        )
        .unwrap();
    db
}

/// The catalogue plus committed tables holding every awkward value the CSVs must carry.
fn populated() -> Database {
    let db = catalogue();
    let c = db.conn();
    let rule =
        "INSERT INTO rules (id, name, lhs, rhs, predicate, kind, phase, target, provenance, rule_hash, status,
        lanes_proven, types_proven, counterexample, solver_ms, verified_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";
    let none: Option<&str> = None;
    c.execute(
        rule,
        params![
            1,
            "add-comm",
            "(+ a b)",
            "(+ b a)",
            none,
            "simplify",
            none,
            none,
            "hand-written",
            "h1",
            "proven",
            "4,8,16",
            "i8 i16",
            none,
            12.5,
            "2024-05-01T10:00:00Z"
        ],
    )
    .unwrap();
    c.execute(
        rule,
        params![
            2,
            "lower, \"quoted\"",
            "line1\nline2",
            "",
            "",
            "lower",
            3,
            "x86",
            "synthesized",
            "h2",
            "refuted",
            none,
            none,
            "a=0x7f,\r\nb=\"1\"",
            0.1,
            none
        ],
    )
    .unwrap();
    c.execute(
        rule,
        params![
            7,
            "ünïcødé ✓",
            "x",
            "y",
            none,
            "lift",
            -1,
            "",
            "imported",
            "h3",
            "unknown",
            "",
            "",
            none,
            3.0,
            none
        ],
    )
    .unwrap();
    c.execute_batch(
        "INSERT INTO classes VALUES (1, 'add', 'lane-wise add'), (2, 'empty', '');
         INSERT INTO class_members VALUES (1, 2, 'T=i32'), (1, 1, 'T=i16');
         INSERT INTO validation_results VALUES ('h1', 'vpaddw', 'x86', 1000, 'validated', '', '2024-05-01'),
             ('h2', 'vpaddd', 'x86', 0, 'skipped', 'no CPU, \"avx2\"', '2024-05-02');
         INSERT INTO verification_runs VALUES (1, 't0', 't1', 'isadb verify --all', 2, 1, 1, 1e-7);
         INSERT INTO synthesis_runs VALUES (1, 't0', 't1', 'x86', 'W=256', 4, 123456789.125);",
    )
    .unwrap();
    db
}

fn read_all(dir: &Path) -> Vec<(String, String)> {
    COMMITTED_TABLES
        .iter()
        .map(|t| (t.to_string(), fs::read_to_string(csv_path(dir, t)).unwrap()))
        .collect()
}

#[test]
fn export_import_export_is_byte_identical() {
    let ((_a, a), (_b, b)) = (scratch_dir(), scratch_dir());
    populated().export_tables(&a, COMMITTED_TABLES).unwrap();
    let mut db = catalogue();
    db.import_tables(&a, COMMITTED_TABLES).unwrap();
    db.export_tables(&b, COMMITTED_TABLES).unwrap();
    assert_eq!(read_all(&a), read_all(&b));

    let rules = fs::read_to_string(csv_path(&a, "rules")).unwrap();
    assert_eq!(
        rules.lines().next().unwrap(),
        "id,name,lhs,rhs,predicate,kind,phase,target,provenance,rule_hash,\
        status,lanes_proven,types_proven,counterexample,solver_ms,verified_at"
    );
    assert!(rules.contains(
        "\n1,add-comm,(+ a b),(+ b a),,simplify,,,hand-written,h1,proven,\"4,8,16\",i8 i16,,12.5,"
    ));
    assert!(rules.contains("\n7,ünïcødé ✓,x,y,,lift,-1,\"\",imported,h3,unknown,\"\",\"\",,3.0,\n"));
    let members = fs::read_to_string(csv_path(&a, "class_members")).unwrap();
    assert_eq!(
        members,
        "class_id,instruction_id,binding\n1,1,T=i16\n1,2,T=i32\n"
    );

    let row = |sql: &str| {
        db.conn()
            .query_row(sql, [], |r| r.get::<_, String>(0))
            .unwrap()
    };
    assert_eq!(
        row("SELECT typeof(predicate) || typeof(phase) || typeof(solver_ms) FROM rules WHERE id = 1"),
        "nullnullreal"
    );
    assert_eq!(
        row("SELECT quote(predicate) || quote(rhs) || typeof(phase) FROM rules WHERE id = 2"),
        "''''integer"
    );
    assert_eq!(
        row("SELECT counterexample FROM rules WHERE id = 2"),
        "a=0x7f,\r\nb=\"1\""
    );
    assert_eq!(row("SELECT name FROM rules WHERE id = 7"), "ünïcødé ✓");
    assert!(fs::read_to_string(csv_path(&a, "verification_runs"))
        .unwrap()
        .ends_with(",2,1,1,1e-7\n"));
    assert!(fs::read_to_string(csv_path(&a, "synthesis_runs"))
        .unwrap()
        .ends_with(",4,123456789.125\n"));
}

#[test]
fn malformed_csv_names_file_line_column_and_changes_nothing() {
    let (_tmp_good, good) = scratch_dir();
    populated().export_tables(&good, COMMITTED_TABLES).unwrap();
    let mut db = catalogue();
    db.import_tables(&good, COMMITTED_TABLES).unwrap();
    let file = |t: &str| csv_path(&good, t).display().to_string();
    let cases: Vec<(&str, &str, &str, String)> = vec![
        (
            "rules",
            ",simplify,,,",
            ",simplify,,",
            format!("{}: line 2: expected 16 fields, found 15", file("rules")),
        ),
        (
            "rules",
            "id,name",
            "id,nam",
            format!(
                "{}: line 1: unknown column 'nam' (table 'rules' has id, name, lhs,",
                file("rules")
            ),
        ),
        (
            "rules",
            ",lower,3,",
            ",lower,three,",
            format!(
                "{}: line 3: column 'phase': expected an integer, found \"three\"",
                file("rules")
            ),
        ),
        (
            "rules",
            ",12.5,",
            ",12.5.1,",
            format!(
                "{}: line 2: column 'solver_ms': expected a number, found \"12.5.1\"",
                file("rules")
            ),
        ),
        (
            "rules",
            ",proven,",
            ",maybe,",
            format!(
                "{}: line 2: CHECK constraint failed: status IN",
                file("rules")
            ),
        ),
        (
            "rules",
            "\n7,",
            "\n1,",
            format!(
                "{}: line 6: UNIQUE constraint failed: rules.id",
                file("rules")
            ),
        ),
        (
            "class_members",
            "\n1,2,",
            "\n9,2,",
            format!(
                "{}: line 3: column 'class_id': no 'classes' row with key 9",
                file("class_members")
            ),
        ),
        (
            "class_members",
            "\n1,2,",
            "\n1,5,",
            format!(
                "{}: line 3: column 'instruction_id': no 'instructions' row with key 5",
                file("class_members")
            ),
        ),
        (
            "validation_results",
            "1000",
            "\"1000\"x",
            format!(
                "{}: line 2: field 4: unexpected 'x' after the field",
                file("validation_results")
            ),
        ),
    ];
    for (table, from, to, want) in cases {
        let (_tmp_dir, dir) = scratch_dir();
        fs::create_dir_all(&dir).unwrap();
        for (t, text) in read_all(&good) {
            let text = if t == table {
                text.replacen(from, to, 1)
            } else {
                text
            };
            fs::write(csv_path(&dir, &t), text).unwrap();
        }
        let got = db
            .import_tables(&dir, COMMITTED_TABLES)
            .expect_err(&want)
            .to_string();
        let want = want.replace(&good.display().to_string(), &dir.display().to_string());
        assert!(
            got.starts_with(&want) && !got.contains('\n'),
            "got  {got}\nwant {want}"
        );
        let (_tmp_after, after) = scratch_dir();
        db.export_tables(&after, COMMITTED_TABLES).unwrap();
        assert_eq!(
            read_all(&after),
            read_all(&good),
            "database changed after: {want}"
        );
    }
}

/// Writes `classes.csv` and imports it; the import's error.
fn import_classes(db: &mut Database, dir: &Path, text: &str) -> String {
    fs::write(csv_path(dir, "classes"), text).unwrap();
    db.import_tables(dir, &["classes"])
        .expect_err(text)
        .to_string()
}

#[test]
fn removing_a_parent_of_unimported_rows_fails() {
    let (_tmp_dir, dir) = scratch_dir();
    let mut db = populated();
    db.export_tables(&dir, &["classes"]).unwrap();
    let err = import_classes(&mut db, &dir, "id,name,description\n2,empty,\"\"\n");
    let want = format!(
        "{}: 'class_members' row 1 refers by 'class_id' to a 'classes' row with key 1, which is missing",
        csv_path(&dir, "classes").display()
    );
    assert_eq!(err, want);
    assert_eq!(db.stats().unwrap().classes, 2);
    // Columns missing from the header take their defaults (none here, so NOT NULL fails).
    let err = import_classes(&mut db, &dir, "id,name\n1,add2\n2,empty\n");
    assert!(
        err.ends_with("line 2: NOT NULL constraint failed: classes.description"),
        "{err}"
    );
    let err = import_classes(
        &mut db,
        &dir,
        "name,id,description\nadd2,1,\"\"\nempty,2,\n",
    );
    assert!(
        err.ends_with("line 3: NOT NULL constraint failed: classes.description"),
        "{err}"
    );
    // Same keys again, in any column order: children keep their parents, so it goes through.
    fs::write(
        csv_path(&dir, "classes"),
        "name,id,description\nadd2,1,\"\"\nempty,2,x\n",
    )
    .unwrap();
    db.import_tables(&dir, &["classes"]).unwrap();
    assert_eq!(
        db.conn()
            .query_row("SELECT name FROM classes WHERE id = 1", [], |r| r
                .get::<_, String>(0))
            .unwrap(),
        "add2"
    );
}

#[test]
fn missing_file_and_unknown_table() {
    let (_tmp_dir, dir) = scratch_dir();
    fs::create_dir_all(&dir).unwrap();
    let mut db = catalogue();
    let err = db.import_tables(&dir, &["rules"]).err().unwrap();
    assert!(
        matches!(err, Error::Io { .. }) && err.to_string().contains("rules.csv"),
        "{err}"
    );
    let err = db.export_tables(&dir, &["nope"]).err().unwrap().to_string();
    assert!(
        err.ends_with("nope.csv: no table 'nope' in the database"),
        "{err}"
    );
    fs::write(csv_path(&dir, "rules"), "").unwrap();
    let err = db
        .import_tables(&dir, &["rules"])
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.ends_with("rules.csv: line 1: empty file, expected a header row"),
        "{err}"
    );
}
