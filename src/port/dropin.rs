//! `port X --emit c`: the port as a drop-in C function with X's own signature in the target's
//! types, as a translation header would ship it (`static inline int32x4_t
//! isadb__mm_madd_epi16(int16x8_t a, int16x8_t b)` on NEON). Each value takes the target's
//! register type when one holds it, the scalar type of a one-lane value, an unsigned integer
//! with bit i for bool lane i (an x86 mask or movemask's result), else a struct of its lanes.
//! The function hands its operands' lanes to the selection's function over arrays, which the
//! compiler inlines. `port --run` calls the drop-in itself beside X ([`super::native`]).

use crate::error::{Error, Result};
use crate::ir::{Elem, VecType};
use crate::select::catalog::{identifier, Catalog};
use crate::select::check::{Entry, Inputs};
use crate::select::emit_c::{c_name, function, parameters, result_type, scalar_type};
use crate::select::Compiled;
use crate::spec::Instruction;
use crate::toolchain::ctype::c_type;
use crate::toolchain::Toolchain;
use std::fmt::Write;

/// How a value's lanes become its C object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Carry {
    /// The lanes' bytes are the object's (registers and lane structs).
    Bytes,
    /// One lane in a scalar.
    Scalar,
    /// Bool lanes as the bits of an unsigned integer.
    Bits,
}

/// A value's C type in the drop-in.
struct ValueType {
    name: String,
    /// The struct's definition, for a value no register type holds.
    typedef: Option<String>,
    carry: Carry,
}

fn value_type(toolchain: Toolchain, register_bits: u32, ty: VecType) -> Result<ValueType> {
    let plain = |name: String, carry| ValueType {
        name,
        typedef: None,
        carry,
    };
    if ty.elem == Elem::Bool {
        let bits = ty.lanes.next_power_of_two().max(8);
        if bits > 64 {
            return Err(Error::Usage(format!(
                "no drop-in C type for {ty}: more bool lanes than bits in an integer"
            )));
        }
        return Ok(plain(format!("uint{bits}_t"), Carry::Bits));
    }
    if ty.lanes == 1 {
        return Ok(plain(scalar_type(ty.elem)?.to_string(), Carry::Scalar));
    }
    // A register of the target (x86 only up to its own width: wider types need features it lacks).
    let fits = toolchain != Toolchain::X86 || ty.bits() <= register_bits;
    if let Some(c) = c_type(toolchain, ty, None).ok().filter(|_| fits) {
        return Ok(plain(c.name, Carry::Bytes));
    }
    let name = format!("isadb_{}x{}_t", ty.elem, ty.lanes);
    Ok(ValueType {
        typedef: Some(format!(
            "#ifndef {guard}\n#define {guard}\ntypedef struct {{ {} lane[{}]; }} {name};\n#endif\n",
            scalar_type(ty.elem)?,
            ty.lanes,
            guard = name.to_uppercase()
        )),
        name,
        carry: Carry::Bytes,
    })
}

/// The drop-in function of a port.
pub struct DropIn {
    /// Its name: `isadb_` and X's, then the immediates it was ported at.
    pub name: String,
    /// The definitions: struct types, the function over arrays, the drop-in.
    pub text: String,
    /// X's non-immediate operands: C name, IR type and C type.
    operands: Vec<(String, VecType, ValueType)>,
    result: ValueType,
    /// The lanes the port computes.
    lanes: u32,
    /// Whether it computes X's bool lanes packed into an integer (see `sources::goal`).
    packed: bool,
}

impl DropIn {
    /// The drop-in for `compiled`, the port of `source` at the immediates `imms`.
    pub fn new(
        source: &Instruction,
        imms: &[String],
        compiled: &Compiled,
        catalog: &Catalog,
    ) -> Result<DropIn> {
        let toolchain = Toolchain::of(catalog.target.isa).ok_or_else(|| {
            Error::Usage(format!("no C toolchain compiles {}", catalog.target.name))
        })?;
        let bits = catalog.target.register_bits;
        let mut name = format!("isadb_{}", identifier(&source.name));
        for imm in imms {
            write!(name, "_{}", identifier(&imm.replace('-', "m"))).expect("string write");
        }
        let operands = source
            .operands
            .iter()
            .filter(|o| o.imm.is_none())
            .map(|o| Ok((c_name(&o.name), o.ty, value_type(toolchain, bits, o.ty)?)))
            .collect::<Result<Vec<_>>>()?;
        let result_ty = compiled.input.ty;
        // Bool lanes the port computes packed into an integer already (see `sources::goal`).
        let packed = source.result.elem == Elem::Bool && result_ty.elem != Elem::Bool;
        let result = value_type(toolchain, bits, source.result)?;
        let lanes_fn = format!("{name}_lanes");
        let mut text = String::new();
        for t in operands.iter().map(|o| &o.2).chain([&result]) {
            if let Some(def) = &t.typedef {
                if !text.contains(def.as_str()) {
                    text.push_str(def);
                }
            }
        }
        let imm_note = if imms.is_empty() {
            String::new()
        } else {
            format!(" at immediates {}", imms.join(", "))
        };
        writeln!(
            text,
            "/* {}{imm_note} on {}: a drop-in with its own signature, proven equal to its semantics */",
            source.name, catalog.target.name
        )
        .expect("string write");
        text.push_str(&function(compiled, catalog, &lanes_fn)?.replacen(
            &format!("void {lanes_fn}("),
            &format!("static inline void {lanes_fn}("),
            1,
        ));
        let params: Vec<String> = operands
            .iter()
            .map(|(n, _, t)| format!("{} {n}", t.name))
            .collect();
        writeln!(
            text,
            "static inline {} {name}({}) {{",
            result.name,
            if params.is_empty() {
                "void".to_string()
            } else {
                params.join(", ")
            }
        )
        .expect("string write");
        let read: Vec<String> = parameters(compiled).into_iter().map(|(v, _)| v).collect();
        let mut args = Vec::new();
        for (n, ty, t) in &operands {
            let var = source
                .operands
                .iter()
                .find(|o| c_name(&o.name) == *n)
                .map(|o| o.name.clone())
                .unwrap_or_default();
            if !read.contains(&var) {
                writeln!(text, "  (void){n};").expect("string write");
                continue;
            }
            let lane = scalar_type(ty.elem)?;
            match t.carry {
                Carry::Scalar => {
                    writeln!(text, "  {lane} {n}_lanes[1] = {{{n}}};").expect("string write")
                }
                _ => writeln!(
                    text,
                    "  {lane} {n}_lanes[{}];\n  memcpy({n}_lanes, &{n}, sizeof {n}_lanes);",
                    ty.lanes
                )
                .expect("string write"),
            }
        }
        for v in &read {
            args.push(format!("{}_lanes", c_name(v)));
        }
        let lanes = result_ty.lanes;
        writeln!(
            text,
            "  {} out_lanes[{lanes}];\n  {lanes_fn}({}out_lanes, {lanes});",
            result_type(result_ty.elem)?,
            args.iter().map(|a| format!("{a}, ")).collect::<String>()
        )
        .expect("string write");
        let r = &result.name;
        match result.carry {
            Carry::Bytes => {
                writeln!(text, "  {r} r;\n  memcpy(&r, out_lanes, sizeof r);\n  return r;")
            }
            Carry::Scalar => writeln!(text, "  return out_lanes[0];"),
            Carry::Bits if packed => writeln!(text, "  return ({r})out_lanes[0];"),
            Carry::Bits => writeln!(
                text,
                "  {r} r = 0;\n  for (int l = 0; l < {lanes}; l++)\n    r |= ({r})(out_lanes[l] & 1) << l;\n  return r;"
            ),
        }
        .expect("string write");
        text.push_str("}\n");
        Ok(DropIn {
            name,
            text,
            operands,
            result,
            lanes: result_ty.lanes,
            packed,
        })
    }

    /// Whether the port computes X's bool lanes packed into an integer (see `sources::goal`).
    pub fn packed(&self) -> bool {
        self.packed
    }

    /// The drop-in called once per iteration on the harness's inputs, its result written back
    /// as lanes: what `port --run` runs beside X.
    pub fn entry(&self, inputs: &Inputs) -> Result<Entry> {
        let mut call = format!("  for (long it = 0; it < {}; it++) {{\n", inputs.iterations);
        let mut args = Vec::new();
        for (n, ty, t) in &self.operands {
            let given = inputs.values.iter().any(|(v, _, _)| c_name(v) == *n);
            let lanes = ty.lanes;
            let line = match (given, t.carry) {
                (false, _) => format!("    static {} {n};\n", t.name),
                (true, Carry::Scalar) => format!("    {} {n} = {n}_in[it];\n", t.name),
                (true, _) => format!(
                    "    {} {n};\n    memcpy(&{n}, {n}_in + it * {lanes}, sizeof {n});\n",
                    t.name
                ),
            };
            call.push_str(&line);
            args.push(n.clone());
        }
        let lanes = self.lanes;
        writeln!(
            call,
            "    {} r = {}({});",
            self.result.name,
            self.name,
            args.join(", ")
        )
        .expect("string write");
        let store = match self.result.carry {
            Carry::Bytes => format!("    memcpy(out + it * {lanes}, &r, sizeof r);\n"),
            Carry::Scalar => "    out[it] = r;\n".to_string(),
            Carry::Bits if self.packed => "    out[it] = r;\n".to_string(),
            Carry::Bits => format!(
                "    for (int l = 0; l < {lanes}; l++)\n      out[it * {lanes} + l] = (r >> l) & 1;\n"
            ),
        };
        call.push_str(&store);
        call.push_str("  }\n");
        Ok(Entry {
            functions: self.text.clone(),
            call,
        })
    }
}
