//! The selected sequence as a C function with intrinsics that computes the expression over
//! arrays: `void NAME(const T *x, ..., R *out, long n)` with `n` a multiple of the result lanes.

use super::catalog::Catalog;
use super::compile::Compiled;
use super::node::{flatten_parts, input_types, Node};
use super::scalar_c::{self, lane_type, literal, HELPERS, TYPES};
use super::term::lane_bits;
use crate::error::{Error, Result};
use crate::ir::{Elem, VecType};
use crate::toolchain::ctype::{c_type, Repr};
use crate::toolchain::Toolchain;
use std::collections::HashMap;
use std::fmt::Write;
use std::rc::Rc;

/// The C scalar type of an element's lanes in the arrays the function reads.
pub fn scalar_type(e: Elem) -> Result<&'static str> {
    match e {
        Elem::Bool => Err(Error::Usage(format!("no C array type for {e} lanes"))),
        _ => lane_type(e),
    }
}

/// The C type of the result's lanes in the array the function writes: a bool lane is a byte
/// holding 0 or 1.
pub fn result_type(e: Elem) -> Result<&'static str> {
    lane_type(e)
}

/// Bytes of one result lane in the array the function writes.
pub fn result_lane_bytes(e: Elem) -> usize {
    (e.bits() as usize).div_ceil(8)
}

/// The function's parameters in order: the inputs (sorted by name), then `out`.
pub fn parameters(compiled: &Compiled) -> Vec<(String, VecType)> {
    let mut vars: Vec<(String, VecType)> = input_types(&compiled.input).into_iter().collect();
    vars.sort();
    vars
}

/// An input's name in C: itself, unless it is a name the function uses itself (the loop
/// counter `i`, the length `n`, `out`, a temporary `v1`; a drop-in's result `r` and its
/// caller's counter `it`) or a C keyword, then with `_` after.
pub fn c_name(var: &str) -> String {
    const TAKEN: [&str; 24] = [
        "i", "n", "out", "r", "it", "auto", "break", "case", "char", "const", "do", "double",
        "else", "float", "for", "if", "int", "long", "return", "short", "signed", "unsigned",
        "void", "while",
    ];
    let temporary = var
        .strip_prefix('v')
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    if TAKEN.contains(&var) || temporary {
        format!("{var}_")
    } else {
        var.to_string()
    }
}

/// The C function (without headers) computing `compiled` over arrays.
pub fn function(compiled: &Compiled, catalog: &Catalog, name: &str) -> Result<String> {
    let lanes = compiled.input.ty.lanes;
    let mut params = Vec::new();
    for (v, ty) in parameters(compiled) {
        params.push(format!("const {} *{}", scalar_type(ty.elem)?, c_name(&v)));
    }
    params.push(format!("{} *out", result_type(compiled.input.ty.elem)?));
    params.push("long n".into());
    let mut body = String::new();
    let mut emitter = Emitter {
        catalog,
        compiled,
        lines: &mut body,
        temps: HashMap::new(),
        count: 0,
    };
    let mut parts = Vec::new();
    flatten_parts(&compiled.root, &mut parts);
    let mut lane = 0;
    let mut stores = Vec::new();
    for p in &parts {
        let ty = p.ty(catalog);
        if ty.elem == Elem::Bool {
            // Bool lanes as bytes of 0 or 1, from the target's mask form.
            let lanes = emitter.lane_array(p)?;
            stores.push(format!(
                "    memcpy(out + i + {lane}, {lanes}, {});\n",
                ty.lanes
            ));
        } else {
            let (value, at) = emitter.place(p)?;
            stores.push(format!(
                "    memcpy(out + i + {lane}, (const char *)&{value} + {at}, {});\n",
                ty.bits() / 8
            ));
        }
        lane += ty.lanes;
    }
    let mut out = String::from(TYPES);
    // Scalarized lanes call the helpers, and so does any f32 literal (`isadb_f32(bits)`): a
    // selection that is only a constant, such as `_mm_dp_ps` at mask 0 on HVX, scalarizes
    // nothing.
    if !compiled.root.scalarized().is_empty() || body.contains("isadb_f32(") {
        out.push_str(HELPERS);
    }
    writeln!(
        out,
        "/* {} on {}: {} lanes per iteration */",
        compiled.source, catalog.target.name, lanes
    )
    .expect("string write");
    writeln!(out, "void {name}({}) {{", params.join(", ")).expect("string write");
    writeln!(out, "  for (long i = 0; i < n; i += {lanes}) {{").expect("string write");
    out.push_str(&body);
    for s in stores {
        out.push_str(&s);
    }
    out.push_str("  }\n}\n");
    Ok(out)
}

/// The node whose lanes a node is, and the first of them: the node itself, or what a
/// [`Node::Lanes`] reads.
fn lanes_of(n: &Rc<Node>) -> (&Rc<Node>, u32) {
    match &**n {
        Node::Lanes { offset, arg, .. } => {
            let (base, first) = lanes_of(arg);
            (base, first + offset)
        }
        _ => (n, 0),
    }
}

/// The mask whose lanes a node's bool lanes are where they are not zero, and the first of
/// those lanes: a [`Node::Nonzero`], or lanes of one.
fn mask_lanes(n: &Rc<Node>) -> Option<(&Rc<Node>, u32)> {
    let (base, first) = lanes_of(n);
    match &**base {
        Node::Nonzero { arg, .. } => Some((arg, first)),
        _ => None,
    }
}

/// Whether `n`'s lanes are computed in a lane array (scalarized, or flags of a mask, or those
/// spread) rather than in a register.
fn in_lane_array(n: &Rc<Node>) -> bool {
    match &**n {
        Node::Scalar { .. } => true,
        Node::Spread { arg, .. } => in_lane_array(arg),
        _ => mask_lanes(n).is_some(),
    }
}

struct Emitter<'a> {
    catalog: &'a Catalog,
    compiled: &'a Compiled,
    lines: &'a mut String,
    temps: HashMap<String, String>,
    count: usize,
}

impl Emitter<'_> {
    fn fresh(&mut self) -> String {
        self.count += 1;
        format!("v{}", self.count)
    }

    fn toolchain(&self) -> Result<Toolchain> {
        Toolchain::of(self.catalog.target.isa)
            .ok_or_else(|| Error::Usage(format!("no C toolchain for {}", self.catalog.target.name)))
    }

    fn c_type(&self, ty: VecType, c_override: Option<&str>) -> Result<String> {
        c_type(self.toolchain()?, ty, c_override)
            .map(|c| c.name)
            .map_err(Error::Usage)
    }

    /// A variable and a byte offset into it where the node's lanes are: lanes of a computed
    /// value (half an HVX register has no C type of its own) are read in place.
    fn place(&mut self, n: &Rc<Node>) -> Result<(String, u32)> {
        match &**n {
            Node::Lanes { ty, offset, arg } => {
                let (v, at) = self.place(arg)?;
                Ok((v, at + offset * ty.elem.bits() / 8))
            }
            // The same bytes (a slice reinterpreted may have no C type of its own).
            Node::Reinterpret { ty, arg }
                if ty.elem != Elem::Bool && arg.ty(self.catalog).elem != Elem::Bool =>
            {
                self.place(arg)
            }
            // A constant or an input part with no register type of its width (six lanes of a
            // result), or a scalar constant (a literal has no address): its lanes in an array.
            Node::Const { ty, .. } if ty.lanes == 1 || self.c_type(*ty, None).is_err() => {
                Ok((self.lane_array(n)?, 0))
            }
            Node::Input { ty, .. } if ty.lanes > 1 && self.c_type(*ty, None).is_err() => {
                Ok((self.lane_array(n)?, 0))
            }
            _ => Ok((self.value(n)?, 0)),
        }
    }

    /// A new variable of vector type `ty` holding `values`, one per lane, from a static array
    /// (f32 lanes as their bit patterns).
    fn vector_constant(&mut self, ty: VecType, values: &[i64]) -> Result<String> {
        let t = self.fresh();
        let cty = self.c_type(ty, None)?;
        let elem = match ty.elem {
            Elem::F32 => "uint32_t",
            e => scalar_type(e)?,
        };
        let lanes = values
            .iter()
            .map(|v| match ty.elem {
                Elem::F32 => Ok(format!("{:#x}u", lane_bits(ty.elem, *v))),
                e if e.is_int() => literal(e, lane_bits(e, *v)),
                _ => Ok(v.to_string()),
            })
            .collect::<Result<Vec<_>>>()?;
        writeln!(
            self.lines,
            "    static const {elem} {t}_lanes[{}] = {{{}}};\n    {cty} {t}; memcpy(&{t}, {t}_lanes, sizeof {t});",
            ty.lanes,
            lanes.join(", ")
        )
        .expect("string write");
        Ok(t)
    }

    /// A C expression (a variable, or a literal for scalars) holding the node's value.
    fn value(&mut self, n: &Rc<Node>) -> Result<String> {
        let key = format!("{n:?}");
        if let Some(t) = self.temps.get(&key) {
            return Ok(t.clone());
        }
        let v = match &**n {
            Node::Input { name, ty, offset } => {
                let t = self.fresh();
                let cty = self.c_type(*ty, None)?;
                let copy = self.input_bytes(name, *ty, *offset, &t)?;
                writeln!(self.lines, "    {cty} {t}; {copy}").expect("string write");
                t
            }
            Node::Const { ty, value } if ty.lanes == 1 && ty.elem == Elem::F32 => {
                literal(ty.elem, lane_bits(ty.elem, *value))?
            }
            Node::Const { ty, value } if ty.lanes == 1 => value.to_string(),
            Node::Const { ty, value } => {
                self.vector_constant(*ty, &vec![*value; ty.lanes as usize])?
            }
            Node::Literal { ty, values } => self.vector_constant(*ty, values)?,
            Node::Instr { index, args } => {
                let ins = &self.catalog.instructions[*index];
                let intrinsic = ins.intrinsic.as_deref().ok_or_else(|| {
                    Error::Usage(format!("{} has no intrinsic to emit", ins.name))
                })?;
                let mut texts = Vec::new();
                for (a, op) in args.iter().zip(&ins.operands) {
                    texts.push(match (a.scalar(), op.c_type.as_deref()) {
                        // A constant in a register of its own C type (NEON's `int64x1_t`).
                        (Some(value), Some(c)) if op.ty.lanes == 1 && op.imm.is_none() => {
                            format!("({c})({}){value}", scalar_type(op.ty.elem)?)
                        }
                        (Some(value), _) if op.ty.lanes == 1 => value.to_string(),
                        (Some(value), Some(c)) => format!("({c}){value}"),
                        (None, Some(c)) => format!("({c}){}", self.register(a, op.ty, Some(c))?),
                        (_, None) => self.register(a, op.ty, None)?,
                    });
                }
                let t = self.fresh();
                writeln!(
                    self.lines,
                    "    __auto_type {t} = {intrinsic}({}); /* {} */",
                    texts.join(", "),
                    ins.asm
                )
                .expect("string write");
                t
            }
            // Only read lane by lane (`lane_array`), and passed to instructions as such.
            Node::Nonzero { arg, .. } => self.value(arg)?,
            // The predicate register holds a flag per byte already.
            Node::Spread { arg, .. } => self.value(arg)?,
            Node::Reinterpret { ty, arg } => self.copy_of(*ty, arg)?,
            Node::Parts(parts) => {
                let t = self.fresh();
                // Parts wider than any register (lanes a scalarized operator reads) are bytes.
                let ty = n.ty(self.catalog);
                let declaration = match self.c_type(ty, None) {
                    Ok(cty) => format!("{cty} {t}"),
                    Err(_) if ty.elem != Elem::Bool => {
                        format!("unsigned char {t}[{}]", ty.bits() / 8)
                    }
                    Err(e) => return Err(e),
                };
                writeln!(self.lines, "    {declaration};").expect("string write");
                let mut at = 0;
                for p in parts {
                    let (v, from) = self.place(p)?;
                    let bytes = p.ty(self.catalog).bits() / 8;
                    writeln!(
                        self.lines,
                        "    memcpy((char *)&{t} + {at}, (const char *)&{v} + {from}, {bytes});"
                    )
                    .expect("string write");
                    at += bytes;
                }
                t
            }
            Node::Scalar { op, ty, args } => {
                let mut operands = Vec::new();
                for a in args {
                    operands.push((self.lane_array(a)?, a.ty(self.catalog)));
                }
                let t = self.fresh();
                self.lines
                    .push_str(&scalar_c::lanes(op, *ty, &operands, &t)?);
                t
            }
            Node::Lanes { ty, .. } => self.copy_of(*ty, n)?,
        };
        self.temps.insert(key, v.clone());
        Ok(v)
    }

    /// A new variable of type `ty` holding the bytes where `n`'s lanes are: a reinterpretation
    /// or a slice, read in place (a slice may have no C type of its own).
    fn copy_of(&mut self, ty: VecType, n: &Rc<Node>) -> Result<String> {
        let (v, at) = self.place(n)?;
        let t = self.fresh();
        let cty = self.c_type(ty, None)?;
        writeln!(
            self.lines,
            "    {cty} {t}; memcpy(&{t}, (const char *)&{v} + {at}, sizeof {t});"
        )
        .expect("string write");
        Ok(t)
    }

    /// The address of lane `offset` of input `name` in iteration `i / result lanes` (an input
    /// may have more lanes per iteration than the result, as under a reduction, or fewer, as
    /// under a broadcast).
    /// C statements filling `dest` (an lvalue of `ty`) with lanes `offset..` of input `name`;
    /// lanes past the input's own are zero (a narrow input padded to a whole register, whose
    /// upper lanes no output reads).
    fn input_bytes(&self, name: &str, ty: VecType, offset: u32, dest: &str) -> Result<String> {
        let at = self.input_at(name, offset);
        let full = input_types(&self.compiled.input)[name];
        let available = full.lanes.saturating_sub(offset).min(ty.lanes);
        if available == ty.lanes {
            return Ok(format!("memcpy(&{dest}, {at}, sizeof {dest});"));
        }
        let elem = scalar_type(ty.elem)?;
        Ok(format!(
            "memset(&{dest}, 0, sizeof {dest}); memcpy(&{dest}, {at}, {available} * sizeof({elem}));"
        ))
    }

    fn input_at(&self, name: &str, offset: u32) -> String {
        let full = input_types(&self.compiled.input)[name];
        let result_lanes = self.compiled.input.ty.lanes;
        let name = c_name(name);
        format!("{name} + i / {result_lanes} * {} + {offset}", full.lanes)
    }

    fn line(&mut self, text: String) {
        writeln!(self.lines, "{text}").expect("string write");
    }

    /// The node's value where an instruction takes an operand of type `ty` (C type
    /// `c_override`, else the default): a scalarized node's lane array is loaded into a
    /// register, bool lanes in the C type's mask form.
    fn register(&mut self, n: &Rc<Node>, ty: VecType, c_override: Option<&str>) -> Result<String> {
        if !in_lane_array(n) {
            return self.value(n);
        }
        let lanes = self.lane_array(n)?;
        let c = c_type(self.toolchain()?, ty, c_override).map_err(Error::Usage)?;
        let t = self.fresh();
        let name = &c.name;
        let count = ty.lanes;
        match (ty.elem, c.repr) {
            (Elem::Bool, _) if c.hvx_pred => {
                let Repr::Expanded { lane_bytes } = c.repr else {
                    return Err(Error::Usage(format!("HVX predicate {name} without lane bytes")));
                };
                self.line(format!(
                    "    HVX_Vector {t}_v; for (int l = 0; l < {count}; l++) memset((char *)&{t}_v + l * {lane_bytes}, {lanes}[l] ? 0xff : 0, {lane_bytes});
    HVX_VectorPred {t} = Q6_Q_vand_VR({t}_v, -1);"
                ));
            }
            (Elem::Bool, Repr::Bits) => self.line(format!(
                "    {name} {t} = 0; for (int l = 0; l < {count}; l++) {t} |= ({name})((unsigned long long){lanes}[l] << l);"
            )),
            (Elem::Bool, Repr::Expanded { lane_bytes }) => self.line(format!(
                "    {name} {t}; for (int l = 0; l < {count}; l++) memset((char *)&{t} + l * {lane_bytes}, {lanes}[l] ? 0xff : 0, {lane_bytes});"
            )),
            (_, Repr::Bytes) => {
                self.line(format!("    {name} {t}; memcpy(&{t}, {lanes}, sizeof {t});"))
            }
            _ => {
                return Err(Error::Usage(format!(
                    "cannot pass scalarized lanes of {ty} as {name}"
                )))
            }
        }
        Ok(t)
    }

    /// The node's lanes in an array of their C lane type (what scalarized code reads).
    fn lane_array(&mut self, n: &Rc<Node>) -> Result<String> {
        let ty = n.ty(self.catalog);
        let elem = lane_type(ty.elem)?;
        let count = ty.lanes;
        match &**n {
            Node::Scalar { .. } => return self.value(n),
            // A flag per lane of the spread value, repeated.
            Node::Spread { arg, .. } if in_lane_array(arg) => {
                let flags = self.lane_array(arg)?;
                let repeat = count / arg.ty(self.catalog).lanes.max(1);
                let t = self.fresh();
                self.line(format!(
                    "    {elem} {t}[{count}]; for (int l = 0; l < {count}; l++) {t}[l] = {flags}[l / {repeat}];"
                ));
                return Ok(t);
            }
            _ if mask_lanes(n).is_some() => {
                // A lane is true where any byte of the mask's lane is not zero.
                let (mask, first) = mask_lanes(n).expect("matched");
                let lane_bytes = mask.ty(self.catalog).elem.bits() / 8;
                let (v, at) = self.place(mask)?;
                let at = at + first * lane_bytes;
                let t = self.fresh();
                self.line(format!(
                    "    uint8_t {t}[{count}]; for (int l = 0; l < {count}; l++) {{ uint8_t any = 0; for (int b = 0; b < {lane_bytes}; b++) any |= ((const uint8_t *)&{v})[{at} + l * {lane_bytes} + b]; {t}[l] = any != 0; }}"
                ));
                return Ok(t);
            }
            Node::Const { value, .. } => {
                let t = self.fresh();
                let lit = literal(ty.elem, lane_bits(ty.elem, *value))?;
                self.line(format!(
                    "    {elem} {t}[{count}]; for (int l = 0; l < {count}; l++) {t}[l] = {lit};"
                ));
                return Ok(t);
            }
            Node::Input { name, offset, .. } => {
                let t = self.fresh();
                let copy = self.input_bytes(name, ty, *offset, &t)?;
                self.line(format!("    {elem} {t}[{count}]; {copy}"));
                return Ok(t);
            }
            _ => {}
        }
        let t = self.fresh();
        if ty.elem != Elem::Bool {
            let (v, at) = self.place(n)?;
            self.line(format!(
                "    {elem} {t}[{count}]; memcpy({t}, (const char *)&{v} + {at}, sizeof {t});"
            ));
            return Ok(t);
        }
        // Bool lanes of an instruction's result, or lanes of one, in the mask form of the
        // result's C type.
        let (base, first) = lanes_of(n);
        let base_ty = base.ty(self.catalog);
        let v = self.value(base)?;
        let c = c_type(self.toolchain()?, base_ty, None).map_err(Error::Usage)?;
        let lane = format!("({first} + l)");
        let read = match c.repr {
            Repr::Expanded { lane_bytes } if c.hvx_pred => {
                self.line(format!("    HVX_Vector {t}_v = Q6_V_vand_QR({v}, -1);"));
                format!("((const uint8_t *)&{t}_v)[{lane} * {lane_bytes}] != 0")
            }
            Repr::Expanded { lane_bytes } => {
                format!("((const uint8_t *)&{v})[{lane} * {lane_bytes}] != 0")
            }
            Repr::Bits => format!("((unsigned long long){v} >> {lane}) & 1"),
            _ => {
                return Err(Error::Usage(format!(
                    "cannot read bool lanes of {base_ty} from {}",
                    c.name
                )))
            }
        };
        self.line(format!(
            "    uint8_t {t}[{count}]; for (int l = 0; l < {count}; l++) {t}[l] = {read};"
        ));
        Ok(t)
    }
}
