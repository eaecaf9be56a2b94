//! Symbolic evaluation of the C subset. Integers are concrete (loop indices, sizes); floats are
//! terms of the dialect, simplified as Rosette does (literals folded, `x + 0`, `x * 1`, `x * 0`,
//! sums and products flattened and rebuilt right-nested, `a - b` as `a + (neg b)`).
//!
//! One concept per file: this one holds the values, the storage of arrays and the scopes (the
//! environment) and lifts the kernel; [`stmt`] runs statements, [`expr`] evaluates expressions
//! and literals, [`call`] calls `sqrtf`/`sgn` and the helper functions, [`memory`] the C
//! library's allocation and copies, [`arith`] builds the simplified float terms and the checked
//! integer operations.
//!
//! A kernel parameter without a size (`float *A`, `float A[]`, as Diospyros's qr-decomp is
//! written) is as long as the elements the kernel touches: its storage grows to the highest one
//! read or written.

mod arith;
mod array;
mod call;
mod expr;
mod memory;
mod stmt;

use super::ast::{Func, Param, Ty, Unit};
use crate::error::{Error, Location, Result};
use crate::kernel::read::{Lifted, Signature, SourceParam};
use crate::kernel::term::{Dag, Id, Op};
use std::collections::HashMap;

/// Evaluation steps at most (an unrolled kernel larger than this is refused).
const STEP_LIMIT: usize = 2_000_000;
/// Elements of one array at most.
const ARRAY_LIMIT: usize = 1 << 20;
/// Operands of one flattened sum or product at most (each new operand rebuilds the sum).
const SPINE_LIMIT: usize = 4096;
/// Helper calls nested at most (deeper is taken for recursion and refused).
const CALL_DEPTH: usize = 64;

#[derive(Clone, Debug)]
struct ArrRef {
    store: usize,
    offset: usize,
    dims: Vec<usize>,
}

#[derive(Clone, Debug)]
enum Val {
    Int(i64),
    Float(Id),
    Arr(ArrRef),
}

struct Store {
    elems: Vec<Option<Id>>,
    /// The input array this storage starts as (reads of unwritten elements are `Get`s).
    input: Option<String>,
    written: bool,
    /// A kernel parameter without a size: `elems` grows to the highest element touched.
    growable: bool,
    /// `malloc`'d: reading an element never written is an error (C leaves it undefined).
    undefined: bool,
    /// An element was read before it was written (the input's value or zero).
    read_unwritten: bool,
}

enum Flow {
    Normal,
    Return(Option<Val>),
}

struct Eval<'a> {
    dag: Dag,
    funcs: &'a [Func],
    stores: Vec<Store>,
    scopes: Vec<HashMap<String, Val>>,
    /// The global constants, seen from every function where no local has the name.
    globals: HashMap<String, Val>,
    steps: usize,
    depth: usize,
}

fn err(loc: &Location, msg: impl Into<String>) -> Error {
    Error::parse(loc, msg)
}

/// The elements of an array of `dims` (array `name`, declared at `loc`), at most
/// [`ARRAY_LIMIT`].
fn elements(dims: &[usize], name: &str, loc: &Location) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|&n| n <= ARRAY_LIMIT)
        .ok_or_else(|| {
            err(
                loc,
                format!("array '{name}' has more than {ARRAY_LIMIT} elements (isadb's limit)"),
            )
        })
}

/// What a kernel's output arrays (the array parameters it writes) hold before it writes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outputs {
    /// The caller's values, as C passes arrays: an element read before it is written is an
    /// input (`o[i] += ...` adds to what `o` held).
    Caller,
    /// Zeros, as Diospyros's lifting allocates its outputs (the paper's 2d-conv accumulates
    /// with `o[r][c] += ...` into an output it never clears).
    Zero,
}

/// Lifts the kernel (the last `void` function with a body).
pub fn lift(unit: &Unit, file: &str, outputs: Outputs) -> Result<Lifted> {
    let kernel = unit
        .funcs
        .iter()
        .rev()
        .find(|f| f.ret == Ty::Void && f.defined())
        .ok_or_else(|| {
            err(
                &Location {
                    file: file.into(),
                    line: 1,
                    col: 1,
                },
                "no kernel: the last void function with a body is the kernel",
            )
        })?;
    if let Some((loc, msg)) = &kernel.unparsed {
        return Err(err(loc, msg.clone()));
    }
    let (ev, arrays) = evaluate(unit, kernel, &[])?;
    // Written arrays whose elements were read before being written.
    let inherited: Vec<String> = arrays
        .iter()
        .filter(|(_, s)| ev.stores[*s].written && ev.stores[*s].read_unwritten)
        .map(|(name, _)| name.clone())
        .collect();
    if inherited.is_empty() {
        return listed(ev, &arrays, kernel, &[]);
    }
    match outputs {
        Outputs::Caller => {
            crate::error::note(&format!(
                "isadb: note: {file}: kernel '{}' reads {} before writing {}: its outputs start \
                 from the caller's values (--zero-outputs starts them at zero, as Diospyros does)",
                kernel.name,
                inherited.join(", "),
                if inherited.len() == 1 { "it" } else { "them" }
            ));
            listed(ev, &arrays, kernel, &[])
        }
        Outputs::Zero => {
            let (ev, arrays) = evaluate(unit, kernel, &inherited)?;
            listed(ev, &arrays, kernel, &inherited)
        }
    }
}

/// The kernel evaluated, its array parameters `zeroed` starting as zeros: the evaluation and
/// each array parameter's storage.
fn evaluate<'u>(
    unit: &'u Unit,
    kernel: &Func,
    zeroed: &[String],
) -> Result<(Eval<'u>, Vec<(String, usize)>)> {
    let mut ev = Eval {
        dag: Dag::new(),
        funcs: &unit.funcs,
        stores: Vec::new(),
        scopes: vec![HashMap::new()],
        globals: HashMap::new(),
        steps: 0,
        depth: 0,
    };
    for g in &unit.globals {
        let v = match g.ty {
            Ty::Int => Val::Int(ev.int(&g.init, "a global int constant")?),
            _ => Val::Float(ev.float(&g.init)?),
        };
        if ev.globals.insert(g.name.clone(), v).is_some() {
            return Err(err(&g.loc, format!("global '{}' is defined twice", g.name)));
        }
    }
    let mut arrays = Vec::new();
    for p in &kernel.params {
        let v = ev.kernel_param(p)?;
        if let Val::Arr(a) = &v {
            if zeroed.contains(&p.name) {
                ev.stores[a.store].input = None;
            }
            arrays.push((p.name.clone(), a.store));
        }
        ev.scopes[0].insert(p.name.clone(), v);
    }
    let body = kernel.body.as_ref().expect("the kernel has a body");
    ev.block(body)?;
    Ok((ev, arrays))
}

/// The List of the written arrays' elements, in parameter order, and the kernel's signature
/// (`zeroed`: the written arrays taken to start at zero).
fn listed(
    mut ev: Eval,
    arrays: &[(String, usize)],
    kernel: &Func,
    zeroed: &[String],
) -> Result<Lifted> {
    // Each array's elements read from its input, whether or not an output depends on them.
    let mut read = HashMap::new();
    for id in 0..ev.dag.len() as Id {
        if let Op::Get(a, k) = ev.dag.op(id) {
            let end = read.entry(ev.dag.arrays()[a as usize].clone()).or_insert(0);
            *end = (*end).max(k as usize + 1);
        }
    }
    let mut outputs = Vec::new();
    let mut params = Vec::new();
    for p in &kernel.params {
        let store = arrays.iter().find(|(name, _)| *name == p.name).map(|a| a.1);
        let written = store.filter(|&s| ev.stores[s].written);
        params.push(SourceParam {
            name: p.name.clone(),
            declaration: declaration(p),
            scalar: store.is_none(),
            len: store.map_or(1, |s| {
                let touched = read.get(&p.name).copied().unwrap_or(0);
                ev.stores[s].elems.len().max(touched).max(1)
            }),
            output: written.map(|s| outputs.len()..outputs.len() + ev.stores[s].elems.len()),
            zeroed: written.is_some() && zeroed.contains(&p.name),
        });
        let Some(s) = written else {
            continue;
        };
        for k in 0..ev.stores[s].elems.len() {
            let v = match (ev.stores[s].elems[k], ev.stores[s].input.clone()) {
                (Some(v), _) => v,
                (None, Some(name)) => ev.dag.get(&name, k as u32),
                (None, None) => ev.dag.num(0),
            };
            outputs.push(v);
        }
    }
    if outputs.is_empty() {
        return Err(err(
            &kernel.loc,
            format!(
                "kernel '{}' writes no array parameter: it has no outputs",
                kernel.name
            ),
        ));
    }
    let root = ev.dag.add(Op::List, &outputs);
    Ok(Lifted {
        dag: ev.dag,
        root,
        signature: Some(Signature {
            name: kernel.name.clone(),
            params,
            source: String::new(),
            path: Default::default(),
        }),
    })
}

/// A parameter's declaration in C, as the source declares it up to spelling: `const float
/// a[2][2]`, `float *A`, `float A[][3]`, `float x`.
fn declaration(p: &Param) -> String {
    let constant = if p.constant { "const " } else { "" };
    let dims: String = p
        .dims
        .iter()
        .map(|d| d.map_or("[]".to_string(), |n| format!("[{n}]")))
        .collect();
    match p.dims[..] {
        [None] => format!("{constant}float *{}", p.name),
        _ => format!("{constant}float {}{dims}", p.name),
    }
}

impl Eval<'_> {
    fn kernel_param(&mut self, p: &Param) -> Result<Val> {
        match p.ty {
            Ty::Float if p.dims.is_empty() => Ok(Val::Float(self.dag.get(&p.name, 0))),
            Ty::Float => {
                let inner: Vec<usize> = p.dims[1..]
                    .iter()
                    .map(|d| {
                        d.ok_or_else(|| {
                            err(
                                &p.loc,
                                format!(
                                    "kernel parameter '{}': only its first dimension may be unsized",
                                    p.name
                                ),
                            )
                        })
                    })
                    .collect::<Result<_>>()?;
                match p.dims[0] {
                    Some(first) => {
                        let dims = std::iter::once(first).chain(inner).collect();
                        self.array(dims, Some(p.name.clone()), &p.name, &p.loc)
                    }
                    None => self.growable(inner, &p.name, &p.loc),
                }
            }
            _ => Err(err(
                &p.loc,
                format!(
                    "kernel parameter '{}' must be a float array or a float",
                    p.name
                ),
            )),
        }
    }

    /// The array of a kernel parameter without a size (`float *A`), rows of `inner`: as many as
    /// the kernel touches.
    fn growable(&mut self, inner: Vec<usize>, name: &str, loc: &Location) -> Result<Val> {
        let row = elements(&inner, name, loc)?;
        Ok(Val::Arr(ArrRef {
            store: self.store(0, Some(name.to_string()), true),
            offset: 0,
            dims: std::iter::once(ARRAY_LIMIT / row).chain(inner).collect(),
        }))
    }

    /// A new store of `len` unwritten elements (reading as `input`'s or as zero): its index.
    fn store(&mut self, len: usize, input: Option<String>, growable: bool) -> usize {
        self.stores.push(Store {
            elems: vec![None; len],
            input,
            written: false,
            growable,
            undefined: false,
            read_unwritten: false,
        });
        self.stores.len() - 1
    }

    /// How many elements store `s` holds (a growable one: as many as it may grow to).
    fn capacity(&self, s: usize) -> usize {
        if self.stores[s].growable {
            ARRAY_LIMIT
        } else {
            self.stores[s].elems.len()
        }
    }

    /// A new array `name` of `dims`, unwritten: its elements read as `input`'s or as zero. At
    /// most [`ARRAY_LIMIT`] elements.
    fn array(
        &mut self,
        dims: Vec<usize>,
        input: Option<String>,
        name: &str,
        loc: &Location,
    ) -> Result<Val> {
        let len = elements(&dims, name, loc)?;
        Ok(Val::Arr(ArrRef {
            store: self.store(len, input, false),
            offset: 0,
            dims,
        }))
    }

    fn step(&mut self, loc: &Location) -> Result<()> {
        self.steps_of(1, loc)
    }

    /// Counts `n` evaluation steps (a copy of `n` elements is `n`), at most [`STEP_LIMIT`] in all.
    fn steps_of(&mut self, n: usize, loc: &Location) -> Result<()> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > STEP_LIMIT {
            return Err(err(
                loc,
                format!("the kernel unrolls to more than {STEP_LIMIT} steps"),
            ));
        }
        Ok(())
    }

    fn lookup(&self, name: &str, loc: &Location) -> Result<Val> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name).cloned())
            .or_else(|| self.globals.get(name).cloned())
            .ok_or_else(|| err(loc, format!("'{name}' is not declared")))
    }

    /// Sets the variable `name`, declared already; a global constant cannot be set.
    fn set(&mut self, name: &str, v: Val, loc: &Location) -> Result<()> {
        for s in self.scopes.iter_mut().rev() {
            if let Some(slot) = s.get_mut(name) {
                *slot = v;
                return Ok(());
            }
        }
        Err(err(
            loc,
            format!("'{name}' is a global constant: it cannot be assigned"),
        ))
    }

    /// Element `k` of store `s`: as written, else the input's `Get`, else zero.
    fn read(&mut self, s: usize, k: usize, loc: &Location) -> Result<Id> {
        match self.stores[s].elems.get(k).copied().flatten() {
            Some(v) => Ok(v),
            None if self.stores[s].undefined => Err(err(
                loc,
                format!("element {k} of a malloc'd array is read before it is written"),
            )),
            None => {
                self.stores[s].read_unwritten = true;
                Ok(match self.stores[s].input.clone() {
                    Some(name) => self.dag.get(&name, k as u32),
                    None => self.dag.num(0),
                })
            }
        }
    }

    /// Writes element `k` of store `s` (a growable store grows to hold it).
    fn write(&mut self, s: usize, k: usize, v: Id) {
        let store = &mut self.stores[s];
        if k >= store.elems.len() {
            store.elems.resize(k + 1, None);
        }
        store.elems[k] = Some(v);
        store.written = true;
    }
}
