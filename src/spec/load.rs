//! Reads every `.spec` file under a directory: macros and idioms first, then families.

use super::{Family, Instruction, Isa};
use crate::error::{Error, Location, Result};
use crate::ir::sexpr::{read_all_but, SExpr, SKind};
use crate::ir::{Macro, Macros};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A named, target-independent idiom: a macro with the aliases people type.
#[derive(Debug, Clone)]
pub struct Idiom {
    pub name: String,
    pub params: Vec<String>,
    pub body: SExpr,
    pub aliases: Vec<String>,
    /// Parameters the matcher instantiates with listed values (types, k, shift amounts)
    /// instead of binding them to instruction operands.
    pub meta: Vec<(String, Vec<SExpr>)>,
    /// A meta condition on the instantiation (e.g. the result type is wider than the inputs).
    pub condition: Option<SExpr>,
    pub loc: Location,
}

impl Idiom {
    /// The parameters bound to instruction operands.
    pub fn operand_params(&self) -> Vec<&str> {
        self.params
            .iter()
            .map(String::as_str)
            .filter(|p| !self.meta.iter().any(|(m, _)| m == p))
            .collect()
    }
}

/// Everything read from `specs/`.
#[derive(Debug, Default)]
pub struct SpecSet {
    /// Every `define` and idiom, as macros.
    pub macros: Macros,
    /// The idioms.
    pub idioms: Vec<Idiom>,
    /// The families.
    pub families: Vec<Family>,
    /// Every instruction the families expand into.
    pub instructions: Vec<Instruction>,
    /// The files read, with their contents, for input hashing.
    pub files: Vec<(PathBuf, String)>,
    /// The directory the specs were read from, if any.
    pub dir: Option<PathBuf>,
}

impl SpecSet {
    /// The family `name` of `isa`.
    pub fn family(&self, isa: Isa, name: &str) -> Option<&Family> {
        self.families
            .iter()
            .find(|f| f.isa == isa && f.name == name)
    }

    /// The instruction `name`.
    pub fn instruction(&self, name: &str) -> Option<&Instruction> {
        self.instructions.iter().find(|i| i.name == name)
    }

    /// The instruction re-instantiated at its family's smallest scaled width (or as it is).
    pub fn scaled(&self, ins: &Instruction) -> Result<Instruction> {
        self.scaled_to(ins, 1)
    }

    /// The smallest scaled instance whose result still has at least `min_lanes` lanes (or the
    /// instruction as it is); widths that the semantics cannot take are skipped.
    pub fn scaled_to(&self, ins: &Instruction, min_lanes: u32) -> Result<Instruction> {
        let Some(fam) = self.family(ins.isa, &ins.family) else {
            return Ok(ins.clone());
        };
        let mut binding = fam.scaled_binding(&ins.binding);
        while let Some(b) = binding {
            if let Ok(Some(small)) = fam.instantiate(&self.macros, &b, true) {
                if small.result.lanes >= min_lanes.min(ins.result.lanes) {
                    return Ok(small);
                }
            }
            binding = fam.doubled_binding(&b, &ins.binding);
        }
        Ok(ins.clone())
    }
}

/// All `.spec` files below `dir`, sorted so builds are deterministic.
pub fn spec_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    // Each directory is read once: a symbolic link back to one already read (a loop) is an error.
    let mut seen = std::collections::BTreeSet::new();
    while let Some(d) = stack.pop() {
        let real = d.canonicalize().map_err(|e| Error::io(&d, e))?;
        if !seen.insert(real.clone()) {
            return Err(Error::data(
                d.display().to_string(),
                format!(
                    "a symbolic link to {}, a directory already read (a loop)",
                    real.display()
                ),
            ));
        }
        for entry in std::fs::read_dir(&d).map_err(|e| Error::io(&d, e))? {
            let path = entry.map_err(|e| Error::io(&d, e))?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "spec") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Parses and expands every spec under `dir`.
pub fn load_dir(dir: &Path) -> Result<SpecSet> {
    load(dir, true)
}

/// Only the macros and idioms under `dir`, for commands that elaborate user expressions.
pub fn load_macros(dir: &Path) -> Result<SpecSet> {
    load(dir, false)
}

fn load(dir: &Path, with_families: bool) -> Result<SpecSet> {
    let mut set = SpecSet {
        dir: Some(dir.to_path_buf()),
        ..SpecSet::default()
    };
    let mut forms = Vec::new();
    for path in spec_files(dir)? {
        let text = crate::error::read_text(&path)?;
        let shown = path
            .strip_prefix(dir.parent().unwrap_or(dir))
            .unwrap_or(&path)
            .display()
            .to_string();
        let skipped = (!with_families).then_some("family");
        forms.extend(read_all_but(&text, &shown, skipped)?);
        set.files.push((path, text));
    }
    load_forms(&mut set, &forms)?;
    Ok(set)
}

/// Loads top-level forms (used by `load_dir` and by tests on inline text).
pub fn load_forms(set: &mut SpecSet, forms: &[SExpr]) -> Result<()> {
    let mut families = Vec::new();
    for form in forms {
        match form.head() {
            Some("define") => set.macros.insert(define(form)?, &form.loc)?,
            Some("idiom") => {
                let idiom = idiom(form)?;
                let m = Macro {
                    name: idiom.name.clone(),
                    params: idiom.params.clone(),
                    body: idiom.body.clone(),
                };
                set.macros.insert(m, &form.loc)?;
                set.idioms.push(idiom);
            }
            Some("family") => families.push(form),
            _ => return Err(form.err("expected (family ...), (define ...) or (idiom ...)")),
        }
    }
    let mut seen: HashMap<String, Location> = HashMap::new();
    for form in families {
        let fam = Family::parse(form)?;
        if set.family(fam.isa, &fam.name).is_some() {
            return Err(form.err(format!(
                "family {} is defined twice for {}",
                fam.name, fam.isa
            )));
        }
        for ins in fam.expand(&set.macros)? {
            if let Some(prev) = seen.insert(ins.name.clone(), ins.loc.clone()) {
                return Err(form.err(format!(
                    "instruction {} is also defined at {prev}",
                    ins.name
                )));
            }
            set.instructions.push(ins);
        }
        set.families.push(fam);
    }
    for idiom in &set.idioms {
        set.macros.check_operators(&idiom.body)?;
    }
    Ok(())
}

/// `(define (NAME PARAM ...) BODY)`
fn define(form: &SExpr) -> Result<Macro> {
    let items = form.list().unwrap();
    let [_, sig, body] = items else {
        return Err(form.err("expected (define (NAME PARAM ...) BODY)"));
    };
    let names = sig
        .list()
        .ok_or_else(|| sig.err("expected (NAME PARAM ...)"))?;
    let names = names
        .iter()
        .map(|n| {
            n.sym()
                .map(str::to_string)
                .ok_or_else(|| n.err("expected a name"))
        })
        .collect::<Result<Vec<_>>>()?;
    let (name, params) = names
        .split_first()
        .ok_or_else(|| sig.err("expected a macro name"))?;
    Ok(Macro {
        name: name.clone(),
        params: params.to_vec(),
        body: body.clone(),
    })
}

/// `(idiom NAME (PARAM ...) BODY (aliases "text" ...) (meta (PARAM VALUE ...) ...) (where COND))`
fn idiom(form: &SExpr) -> Result<Idiom> {
    let items = form.list().unwrap();
    let (Some(name), Some(params), Some(body)) = (
        items.get(1).and_then(SExpr::sym),
        items.get(2).and_then(SExpr::list),
        items.get(3),
    ) else {
        return Err(form.err("expected (idiom NAME (PARAM ...) BODY [(aliases \"...\" ...)])"));
    };
    let params = params
        .iter()
        .map(|p| {
            p.sym()
                .map(str::to_string)
                .ok_or_else(|| p.err("expected a parameter name"))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut idiom = Idiom {
        name: name.to_string(),
        params,
        body: body.clone(),
        aliases: vec![],
        meta: vec![],
        condition: None,
        loc: form.loc.clone(),
    };
    for extra in &items[4..] {
        let list = extra.list().unwrap_or_default();
        match extra.head() {
            Some("aliases") => {
                for a in &list[1..] {
                    match &a.kind {
                        SKind::Str(s) => idiom.aliases.push(s.clone()),
                        _ => return Err(a.err("expected an alias string")),
                    }
                }
            }
            Some("meta") => {
                for m in &list[1..] {
                    let values = m
                        .list()
                        .filter(|v| v.len() >= 2)
                        .ok_or_else(|| m.err("expected (PARAM VALUE ...)"))?;
                    let p = values[0]
                        .sym()
                        .filter(|p| idiom.params.iter().any(|q| q == p));
                    let p =
                        p.ok_or_else(|| values[0].err("expected one of the idiom's parameters"))?;
                    idiom.meta.push((p.to_string(), values[1..].to_vec()));
                }
            }
            Some("where") if list.len() == 2 => idiom.condition = Some(list[1].clone()),
            _ => return Err(extra.err(
                "expected (aliases \"...\" ...), (meta (PARAM VALUE ...) ...) or (where CONDITION)",
            )),
        }
    }
    Ok(idiom)
}
