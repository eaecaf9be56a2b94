//! `isadb query "<text>"`: the text is matched against the named queries in `queries/` (each
//! file's first line is `-- query: PATTERN` or `% query: PATTERN`), placeholders are resolved
//! against the database, and the query runs as SQL or as Datalog on datafrog.
//! `what implements <expression> on <target>` is answered by the idiom matcher directly.

use super::datalog::{Facts, Program};
use super::vocabulary::{compile_target_features, compile_targets, plain, Vocabulary};
use crate::database::Database;
use crate::error::{one_line, read_text, Error, Location, Result};
use crate::ir::sexpr::{SExpr, SKind};
use crate::ir::Macro;
use crate::project::Project;
use crate::spec::load::Idiom;
use regex::Regex;
use serde::Serialize;
use std::path::Path;
use std::sync::LazyLock;

/// One row of an answer.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    pub instruction: String,
    pub intrinsic: Option<String>,
    pub asm: String,
    pub isa: String,
    pub feature: String,
    pub idiom: String,
    pub binding: String,
    pub cost: f64,
}

/// A named query read from `queries/`.
#[derive(Debug, Clone)]
pub struct NamedQuery {
    /// The file, as errors name it (`queries/NAME.sql`).
    pub file: String,
    pub pattern: String,
    /// The pattern as an anchored regex with one group per hole.
    regex: Regex,
    pub body: String,
    pub datalog: bool,
}

/// The holes a query pattern may have, each at most once.
const HOLES: [&str; 3] = ["idiom", "target", "instruction"];

/// The input relations of the Datalog queries, with their arities (see `queries/relations.dl`).
const INPUT_RELATIONS: [(&str, usize); 6] = [
    ("implements", 3),
    ("isa", 2),
    ("feature", 2),
    ("target", 2),
    ("member", 2),
    ("lowers_to", 2),
];

/// Reads every `.sql` and `.dl` query; files without a `query:` line, such as the shared
/// Datalog relations, are libraries, parsed here under their own names.
pub fn load_queries(dir: &Path) -> Result<(Vec<NamedQuery>, Program)> {
    let mut queries = Vec::new();
    let mut library = Program::default();
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    for path in paths {
        let datalog = match path.extension().and_then(|x| x.to_str()) {
            Some("dl") => true,
            Some("sql") => false,
            _ => continue,
        };
        let file = format!(
            "queries/{}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        let body = read_text(&path)?;
        let first = body.lines().next().unwrap_or("");
        let pattern = first
            .trim_start_matches(['-', '%', ' '])
            .strip_prefix("query:")
            .map(|p| p.trim().to_string());
        match pattern {
            Some(pattern) => queries.push(NamedQuery {
                regex: pattern_regex(&pattern, &file)?,
                file,
                pattern,
                body,
                datalog,
            }),
            None if datalog => library = library.then(Program::parse(&body, &file)?),
            None => {}
        }
    }
    // The most specific patterns (most literal text) are tried first.
    queries.sort_by_cached_key(|q| std::cmp::Reverse(literal_len(&q.pattern)));
    Ok((queries, library))
}

/// `{hole}` in a pattern.
static HOLE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\{(\w+)\}").expect("a valid regex"));

/// The length of a pattern without its holes.
fn literal_len(pattern: &str) -> usize {
    HOLE.replace_all(pattern, "").len()
}

/// The pattern (line 1 of `file`) as an anchored, case-insensitive regex with one named group
/// per hole; a hole other than [`HOLES`], or one used twice, is an error naming its column.
fn pattern_regex(pattern: &str, file: &str) -> Result<Regex> {
    // Literal text matches ASCII case-insensitively (Unicode case tables made compiling the
    // patterns most of a query process); holes take any text.
    let literal = |text: &str| format!("(?i-u:{})", regex::escape(text).replace(' ', "\\s+"));
    let mut re = String::from("^\\s*");
    let mut last = 0;
    let mut seen = Vec::new();
    for m in HOLE.captures_iter(pattern) {
        let whole = m.get(0).unwrap();
        let hole = m.get(1).map_or("", |h| h.as_str());
        let at = |msg: String| {
            let loc = Location {
                file: file.to_string(),
                line: 1,
                col: 1,
            };
            Error::parse(&loc, format!("query pattern '{pattern}': {msg}"))
        };
        if !HOLES.contains(&hole) {
            return Err(at(format!(
                "unknown hole {{{hole}}}; the holes are {{{}}}",
                HOLES.join("}, {")
            )));
        }
        if seen.contains(&hole) {
            return Err(at(format!("hole {{{hole}}} appears twice")));
        }
        seen.push(hole);
        re.push_str(&literal(&pattern[last..whole.start()]));
        re.push_str(&format!("(?P<{hole}>.+?)"));
        last = whole.end();
    }
    re.push_str(&literal(&pattern[last..]));
    re.push_str("\\s*$");
    Regex::new(&re).map_err(|e| {
        let loc = Location {
            file: file.to_string(),
            line: 1,
            col: 1,
        };
        Error::parse(&loc, format!("query pattern '{pattern}': {}", one_line(&e)))
    })
}

/// Answers one query text.
pub fn ask(db: &Database, project: &Project, text: &str) -> Result<Vec<Row>> {
    let (queries, library) = load_queries(&project.queries)?;
    let vocab = Vocabulary::load(db)?;
    let text = plain(text);
    let what =
        Regex::new(r"(?is)^\s*what\s+implements\s+(?P<expr>.+)\s+on\s+(?P<target>[\w.]+)\s*$")
            .unwrap();
    if let Some(caps) = what.captures(text) {
        let target = vocab.target(&caps["target"])?;
        return what_implements(db, project, caps["expr"].trim(), &target);
    }
    for q in &queries {
        let Some(caps) = q.regex.captures(text) else {
            continue;
        };
        let get = |name: &str| caps.name(name).map(|m| m.as_str().trim().to_string());
        let idioms = get("idiom").map(|p| vocab.idioms(&p)).transpose()?;
        let target = get("target").map(|t| vocab.target(&t)).transpose()?;
        let instruction = get("instruction")
            .map(|i| vocab.instruction(&i))
            .transpose()?;
        return if q.datalog {
            run_datalog(db, &library, q, instruction.as_deref(), target.as_deref())
        } else {
            run_sql(db, q, idioms, target, instruction)
        };
    }
    let forms: Vec<&str> = queries.iter().map(|q| q.pattern.as_str()).collect();
    let first_word = text.split_whitespace().next().unwrap_or("");
    Err(Error::Usage(format!(
        "cannot read the query '{text}'{}; forms: {}, what implements {{expression}} on {{target}}",
        vocab.suggest(first_word),
        forms.join(", ")
    )))
}

/// Runs a SQL query file on the database made read-only for the time (`PRAGMA query_only`):
/// a query that would write (`DELETE ...`) is refused before it runs.
fn run_sql(
    db: &Database,
    query: &NamedQuery,
    idioms: Option<Vec<String>>,
    target: Option<String>,
    instruction: Option<String>,
) -> Result<Vec<Row>> {
    let conn = db.conn();
    conn.pragma_update(None, "query_only", true)?;
    let answer = read_sql(db, query, idioms, target, instruction);
    conn.pragma_update(None, "query_only", false)?;
    // SQLite's message quotes the statement over several lines; the file and line name it.
    answer.map_err(|e| match e {
        Error::Sql(rusqlite::Error::SqlInputError { msg, offset, .. }) => {
            let before = &query.body[..(offset.max(0) as usize).min(query.body.len())];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let loc = Location {
                file: query.file.clone(),
                line: before.matches('\n').count() + 1,
                col: before[line_start..].chars().count() + 1,
            };
            Error::parse(&loc, one_line(&msg))
        }
        Error::Sql(e) => Error::data(&query.file, one_line(&e)),
        e => e,
    })
}

fn read_sql(
    db: &Database,
    query: &NamedQuery,
    idioms: Option<Vec<String>>,
    target: Option<String>,
    instruction: Option<String>,
) -> Result<Vec<Row>> {
    let mut stmt = db.conn().prepare(&query.body)?;
    if !stmt.readonly() {
        return Err(Error::data(
            &query.file,
            "writes to the database; a query may only read it",
        ));
    }
    let idioms_json = serde_json::to_string(&idioms.unwrap_or_default()).unwrap_or_default();
    let features_json =
        serde_json::to_string(&compile_target_features(target.as_deref())).unwrap_or_default();
    let mut params: Vec<(&str, &dyn rusqlite::ToSql)> = Vec::new();
    for (name, value) in [
        (":idioms", Some(&idioms_json)),
        (":target", target.as_ref()),
        (":target_features", Some(&features_json)),
        (":instruction", instruction.as_ref()),
    ] {
        if let (Some(v), Ok(Some(_))) = (value, stmt.parameter_index(name)) {
            params.push((name, v as &dyn rusqlite::ToSql));
        }
    }
    let found = stmt.query_map(params.as_slice(), row)?;
    Ok(simplest_per_instruction(
        found.collect::<rusqlite::Result<Vec<_>>>()?,
    ))
}

/// Reads the eight columns every answer has: name, intrinsic, asm, isa, feature, idiom,
/// binding, cost.
fn row(r: &rusqlite::Row) -> rusqlite::Result<Row> {
    Ok(Row {
        instruction: r.get(0)?,
        intrinsic: r.get(1)?,
        asm: r.get(2)?,
        isa: r.get(3)?,
        feature: r.get(4)?,
        idiom: r.get(5)?,
        binding: r.get(6)?,
        cost: r.get(7)?,
    })
}

/// The answer row of one instruction, with the given binding text.
fn instruction_row(db: &Database, name: &str, binding: &str) -> Result<Row> {
    let sql = "SELECT name, intrinsic, asm, isa, feature, '', ?2, cost FROM instruction_rows WHERE name = ?1";
    Ok(db.conn().query_row(sql, [name, binding], row)?)
}

/// One row per instruction: the instantiation that fixes the fewest operands to constants.
fn simplest_per_instruction(rows: Vec<Row>) -> Vec<Row> {
    let fixed = |r: &Row| r.binding.matches('=').count();
    let mut out: Vec<Row> = Vec::new();
    for r in rows {
        match out.iter_mut().find(|o| o.instruction == r.instruction) {
            Some(o) if fixed(&r) < fixed(o) => *o = r,
            Some(_) => {}
            None => out.push(r),
        }
    }
    out
}

/// Loads the input relations, runs the program with the placeholders filled in, and reports
/// the instructions of `answer`.
fn run_datalog(
    db: &Database,
    library: &Program,
    query: &NamedQuery,
    instruction: Option<&str>,
    target: Option<&str>,
) -> Result<Vec<Row>> {
    let quoted = |v: Option<&str>| format!("\"{}\"", v.unwrap_or(""));
    let text = query
        .body
        .replace("{instruction}", &quoted(instruction))
        .replace("{target}", &quoted(target));
    let program = library.clone().then(Program::parse(&text, &query.file)?);
    program.check(&INPUT_RELATIONS)?;
    let program = program.unfold("answer");
    let mut facts = Facts::default();
    let implements =
        "SELECT d.name, i.name, m.binding FROM implements m JOIN idioms d ON d.id = m.idiom_id
         JOIN instructions i ON i.id = m.instruction_id WHERE m.status = 'proven'";
    for t in db.text_rows(implements)? {
        facts.add("implements", &[&t[0], &t[1], &t[2]]);
    }
    for t in db.text_rows("SELECT name, isa, feature FROM instruction_rows")? {
        facts.add("isa", &[&t[0], &t[1]]);
        facts.add("feature", &[&t[0], &t[2]]);
        facts.add("target", &[&t[0], &t[1]]);
        facts.add("target", &[&t[0], &t[2]]);
        for c in compile_targets()
            .filter(|c| c.isa.as_str() == t[1] && c.features.contains(&t[2].as_str()))
        {
            facts.add("target", &[&t[0], c.name]);
        }
    }
    // A member is in its class at its parameters other than lane counts (`N0=...`) and operand
    // names (`v0=a`): two members with the same are one computation at other lane counts, as
    // two instructions implementing an idiom at one binding are.
    let members =
        "SELECT i.name, c.name, m.binding FROM class_members m JOIN classes c ON c.id = m.class_id
         JOIN instructions i ON i.id = m.instruction_id";
    for t in db.text_rows(members)? {
        let params: Vec<&str> = t[2]
            .split_whitespace()
            .filter(|p| !p.starts_with('N') && !p.starts_with('v'))
            .collect();
        facts.add(
            "member",
            &[&t[0], &format!("{} {}", t[1], params.join(" "))],
        );
    }
    program.run(&mut facts);
    let shared = |j: &str| -> String {
        let of = |x: &str| -> Vec<(String, String)> {
            facts
                .tuples("implements")
                .into_iter()
                .filter(|t| t[1] == x)
                .map(|t| (t[0].to_string(), t[2].to_string()))
                .collect()
        };
        let mine = of(instruction.unwrap_or(""));
        of(j)
            .into_iter()
            .filter(|p| mine.contains(p))
            .map(|(d, b)| format!("{d}: {b}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut rows = Vec::new();
    for t in facts.tuples("answer") {
        rows.push(instruction_row(db, t[0], &shared(t[0]))?);
    }
    Ok(rows)
}

/// Instructions of `target` proven equal to an expression (IR s-expression, or Halide-style
/// infix), with its typed variables bound to their operands.
fn what_implements(db: &Database, project: &Project, expr: &str, target: &str) -> Result<Vec<Row>> {
    let (body, _) = crate::ir::forms::parse_expression(expr, "expression")?;
    let mut specs = crate::spec::load_dir(&project.specs)?;
    check_well_typed(expr, &specs.macros)?;
    let mut vars = Vec::new();
    typed_names(&body, &specs, &mut vars);
    if vars.is_empty() {
        return Err(Error::Usage(
            "the expression has no typed variables (name them like a_u8)".into(),
        ));
    }
    let at = |kind: SKind| SExpr {
        kind,
        loc: body.loc.clone(),
    };
    let sym = |s: &str| at(SKind::Sym(s.to_string()));
    let checks: Vec<SExpr> = vars
        .iter()
        .map(|(v, e)| {
            at(SKind::List(vec![
                sym("="),
                at(SKind::List(vec![sym("elem"), sym(v)])),
                sym(e),
            ]))
        })
        .collect();
    let name = "what-implements".to_string();
    let params: Vec<String> = vars.iter().map(|(v, _)| v.clone()).collect();
    specs.macros.insert(
        Macro {
            name: name.clone(),
            params: params.clone(),
            body: body.clone(),
        },
        &body.loc,
    )?;
    let idiom = Idiom {
        name,
        params,
        body: body.clone(),
        aliases: vec![],
        meta: vec![],
        condition: Some(at(SKind::List(
            std::iter::once(sym("&&")).chain(checks).collect(),
        ))),
        loc: body.loc.clone(),
    };
    let mut facts = Vec::new();
    let mut matcher = crate::idioms::Matcher::new(&specs);
    for ins in specs
        .instructions
        .iter()
        .filter(|i| i.isa.as_str() == target || i.feature == target)
    {
        if let Some(f) = matcher.fact(&idiom, ins)? {
            facts.push((f.instruction, f.binding));
        }
    }
    facts
        .iter()
        .map(|(name, binding)| instruction_row(db, name, binding))
        .collect::<Result<Vec<_>>>()
}

/// An input error unless `expr` elaborates at some lane count (an unknown operator, a type
/// error): the matcher would otherwise answer such an expression with nothing.
fn check_well_typed(expr: &str, macros: &crate::ir::Macros) -> Result<()> {
    let none = std::collections::HashMap::new();
    let mut first_error = None;
    for lanes in [4, 1, 2, 8, 16, 32, 64, 128, 256] {
        match crate::ir::forms::elaborate_expression(expr, "expression", macros, lanes, &none) {
            Ok(_) => return Ok(()),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.expect("at least one lane count was tried"))
}

/// Variables of an expression: names with a type suffix that are not macros, in first-use order.
fn typed_names(s: &SExpr, specs: &crate::spec::SpecSet, out: &mut Vec<(String, String)>) {
    match &s.kind {
        SKind::Sym(name) if !specs.macros.map.contains_key(name) => {
            if let Some((_, t)) = name
                .rsplit_once('_')
                .filter(|(_, t)| crate::ir::Elem::parse(t).is_some())
            {
                if !out.iter().any(|(n, _)| n == name) {
                    out.push((name.clone(), t.to_string()));
                }
            }
        }
        SKind::List(items) => items.iter().for_each(|i| typed_names(i, specs, out)),
        _ => {}
    }
}
