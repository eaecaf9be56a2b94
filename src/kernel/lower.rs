//! Lowering a vector program to C: every distinct node computed once (the program is
//! hash-consed, which is Diospyros's local value numbering), lanes gathered from the inputs by
//! loads, broadcasts, permutes and blends (from zero-padded copies of the inputs, so every load
//! is in bounds), and each output vector stored. Intrinsics for x86 (AVX2, AVX-512) and NEON;
//! plain C over `float[4]` for the DSP dialect.

use super::read::Signature;
use super::target::{KernelTarget, Target};
use super::term::{Dag, Id, Op};
use super::term::{Leaf, Operand};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::fmt::Write;

mod dropin;
mod gather;

pub use dropin::{has_drop_in, parameters};

/// The C of a kernel and what it costs on the target.
pub struct Lowered {
    /// `void kernel(const float *A, ..., float *out)` with its helpers, and for a kernel lifted
    /// from C, a drop-in with the source function's own signature calling it (then the flat
    /// function is `NAME_isadb`).
    pub c: String,
    /// The flat function's name.
    pub function: String,
    /// The C function's parameters: input arrays (name, length), then `out`.
    pub inputs: Vec<(String, usize)>,
    pub outputs: usize,
    /// Statements in the function body.
    pub instructions: usize,
    /// The target's instruction costs over the distinct nodes.
    pub cost: f64,
}

/// Intrinsic spellings of one SIMD target.
struct Simd {
    ty: &'static str,
    load: &'static str,
    store: &'static str,
    splat: &'static str,
    add: &'static str,
    sub: &'static str,
    mul: &'static str,
    div: &'static str,
    sqrt: &'static str,
    /// `{a} + {b} * {c}`.
    fma: &'static str,
    neg: &'static str,
    sgn: &'static str,
}

const AVX2: Simd = Simd {
    ty: "__m256",
    load: "_mm256_loadu_ps({p})",
    store: "_mm256_storeu_ps({p}, {v})",
    splat: "_mm256_set1_ps({x})",
    add: "_mm256_add_ps({a}, {b})",
    sub: "_mm256_sub_ps({a}, {b})",
    mul: "_mm256_mul_ps({a}, {b})",
    div: "_mm256_div_ps({a}, {b})",
    sqrt: "_mm256_sqrt_ps({a})",
    fma: "_mm256_fmadd_ps({b}, {c}, {a})",
    neg: "_mm256_xor_ps({a}, _mm256_set1_ps(-0.0f))",
    sgn: "_mm256_sub_ps(_mm256_and_ps(_mm256_cmp_ps({a}, _mm256_setzero_ps(), _CMP_GT_OQ), _mm256_set1_ps(1.0f)), _mm256_and_ps(_mm256_cmp_ps({a}, _mm256_setzero_ps(), _CMP_LT_OQ), _mm256_set1_ps(1.0f)))",
};

const AVX512: Simd = Simd {
    ty: "__m512",
    load: "_mm512_loadu_ps({p})",
    store: "_mm512_storeu_ps({p}, {v})",
    splat: "_mm512_set1_ps({x})",
    add: "_mm512_add_ps({a}, {b})",
    sub: "_mm512_sub_ps({a}, {b})",
    mul: "_mm512_mul_ps({a}, {b})",
    div: "_mm512_div_ps({a}, {b})",
    sqrt: "_mm512_sqrt_ps({a})",
    fma: "_mm512_fmadd_ps({b}, {c}, {a})",
    neg: "_mm512_sub_ps(_mm512_setzero_ps(), {a})",
    sgn: "_mm512_sub_ps(_mm512_maskz_mov_ps(_mm512_cmp_ps_mask({a}, _mm512_setzero_ps(), _CMP_GT_OQ), _mm512_set1_ps(1.0f)), _mm512_maskz_mov_ps(_mm512_cmp_ps_mask({a}, _mm512_setzero_ps(), _CMP_LT_OQ), _mm512_set1_ps(1.0f)))",
};

const NEON: Simd = Simd {
    ty: "float32x4_t",
    load: "vld1q_f32({p})",
    store: "vst1q_f32({p}, {v})",
    splat: "vdupq_n_f32({x})",
    add: "vaddq_f32({a}, {b})",
    sub: "vsubq_f32({a}, {b})",
    mul: "vmulq_f32({a}, {b})",
    div: "vdivq_f32({a}, {b})",
    sqrt: "vsqrtq_f32({a})",
    fma: "vfmaq_f32({a}, {b}, {c})",
    neg: "vnegq_f32({a})",
    sgn: "vsubq_f32(vreinterpretq_f32_u32(vandq_u32(vcgtq_f32({a}, vdupq_n_f32(0.0f)), vreinterpretq_u32_f32(vdupq_n_f32(1.0f)))), vreinterpretq_f32_u32(vandq_u32(vcltq_f32({a}, vdupq_n_f32(0.0f)), vreinterpretq_u32_f32(vdupq_n_f32(1.0f)))))",
};

fn fill(template: &str, pairs: &[(&str, &str)]) -> String {
    let mut s = template.to_string();
    for (k, v) in pairs {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    s
}

/// Names an input array cannot have in the emitted C: keywords and the names of the emitted
/// code and its harness (which also use `h_...`, and `t<N>`, `v<N>` for values).
const RESERVED: [&str; 31] = [
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "int", "long", "register", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "void", "while", "kernel", "spec", "main",
];

/// The flat function's output parameter: `out`, named apart from the input arrays and their
/// padded copies (a C kernel's output read before written is an input named as the source
/// names it, often `out`).
pub fn output_parameter(inputs: &[(String, usize)]) -> String {
    let mut out = "out".to_string();
    while inputs
        .iter()
        .any(|(n, _)| *n == out || format!("{n}_") == out)
    {
        out.push('_');
    }
    out
}

/// The C literal of an integer.
pub fn literal(n: i64) -> String {
    format!("{n}.0f")
}

/// The length of each input array: one past the largest element read.
pub fn input_lengths(dag: &Dag, roots: &[Id]) -> Vec<(String, usize)> {
    let mut len = vec![0usize; dag.arrays().len()];
    for id in dag.reachable(roots) {
        if let Op::Get(a, i) = dag.op(id) {
            len[a as usize] = len[a as usize].max(i as usize + 1);
        }
    }
    dag.arrays().iter().cloned().zip(len).collect()
}

/// C identifier for an input array.
fn c_name(dag: &Dag, a: u32) -> String {
    dag.arrays()[a as usize].clone()
}

/// Which lanes of each vector node some output depends on: the chunks' lanes below the number
/// of outputs, passed down through lane-wise operations to their operands.
fn live_lanes(dag: &Dag, program: Id, outputs: usize, width: usize) -> HashMap<Id, u32> {
    let mut live: HashMap<Id, u32> = HashMap::new();
    let mut at = program;
    let mut first = 0;
    loop {
        let (chunk, rest) = if dag.op(at) == Op::Concat {
            (dag.args(at)[0], Some(dag.args(at)[1]))
        } else {
            (at, None)
        };
        let n = outputs.saturating_sub(first).min(width);
        *live.entry(chunk).or_default() |= ((1u64 << n) - 1) as u32;
        first += width;
        match rest {
            Some(r) => at = r,
            None => break,
        }
    }
    for id in dag.reachable(&[program]).into_iter().rev() {
        let op = dag.op(id);
        if !op.is_vector() || matches!(op, Op::Vec | Op::Concat | Op::List) {
            continue;
        }
        let mask = live.get(&id).copied().unwrap_or(0);
        for &a in dag.args(id) {
            *live.entry(a).or_default() |= mask;
        }
    }
    live
}

/// The target's cost of the program, each distinct node once.
pub fn dag_cost(dag: &Dag, root: Id, target: &Target) -> f64 {
    dag.reachable(&[root])
        .into_iter()
        .map(|id| {
            let args: Vec<Operand> = dag
                .args(id)
                .iter()
                .map(|&a| Operand {
                    cost: 0.0,
                    leaf: Leaf::of(dag.op(a)),
                })
                .collect();
            target.op_cost(dag.op(id), &args)
        })
        .sum()
}

struct Emitter<'a> {
    dag: &'a Dag,
    target: &'a Target,
    /// Each input's length, and whether some load reads past it (then it is read from a
    /// zero-padded copy).
    lengths: Vec<usize>,
    overrun: Vec<bool>,
    /// The lanes of each vector that some output depends on (a bit per lane).
    live: HashMap<Id, u32>,
    body: String,
    statements: usize,
    names: HashMap<Id, String>,
    /// AVX2's masked loads bound so far (each is read once and permuted as often as needed).
    masked_loads: HashMap<String, String>,
}

impl Emitter<'_> {
    fn simd(&self) -> Option<&'static Simd> {
        match self.target.kind {
            KernelTarget::Avx2 => Some(&AVX2),
            KernelTarget::Avx512 => Some(&AVX512),
            KernelTarget::Neon => Some(&NEON),
            KernelTarget::Dsp => None,
        }
    }

    fn stmt(&mut self, text: String) {
        self.body.push_str("  ");
        self.body.push_str(&text);
        self.body.push('\n');
        self.statements += 1;
    }

    /// A scalar operand's C expression.
    fn scalar(&self, id: Id) -> String {
        match self.dag.op(id) {
            Op::Num(n) => literal(n),
            Op::Get(a, i) => format!("{}[{i}]", c_name(self.dag, a)),
            _ => self.names[&id].clone(),
        }
    }

    fn emit(&mut self, id: Id) -> Result<()> {
        let op = self.dag.op(id);
        let args: Vec<Id> = self.dag.args(id).to_vec();
        let name = format!("{}{id}", if op.is_vector() { "v" } else { "t" });
        match op {
            Op::Num(_) | Op::Get(..) | Op::Concat | Op::List => return Ok(()),
            Op::Add | Op::Sub | Op::Mul | Op::Div => {
                let sym = match op {
                    Op::Add => "+",
                    Op::Sub => "-",
                    Op::Mul => "*",
                    _ => "/",
                };
                let (a, b) = (self.scalar(args[0]), self.scalar(args[1]));
                self.stmt(format!("const float {name} = {a} {sym} {b};"));
            }
            Op::Neg => {
                let a = self.scalar(args[0]);
                self.stmt(format!("const float {name} = -{a};"));
            }
            Op::Sqrt => {
                let a = self.scalar(args[0]);
                self.stmt(format!("const float {name} = sqrtf({a});"));
            }
            Op::Sgn => {
                let a = self.scalar(args[0]);
                self.stmt(format!(
                    "const float {name} = (float)(({a} > 0.0f) - ({a} < 0.0f));"
                ));
            }
            Op::Vec => {
                if let Some(expr) = self.gather(&name, id, &args) {
                    // A plain load or broadcast is written where it is used: a value kept
                    // from one chunk to the next would hold a register through the kernel.
                    self.names.insert(id, expr);
                    return Ok(());
                }
            }
            vop => {
                let a: Vec<String> = args.iter().map(|x| self.names[x].clone()).collect();
                match self.simd() {
                    Some(s) => {
                        let t = match vop {
                            Op::VecAdd => s.add,
                            Op::VecMinus => s.sub,
                            Op::VecMul => s.mul,
                            Op::VecDiv => s.div,
                            Op::VecMAC => s.fma,
                            Op::VecNeg => s.neg,
                            Op::VecSqrt => s.sqrt,
                            Op::VecSgn => s.sgn,
                            other => {
                                return Err(Error::data(
                                    "lowering",
                                    format!("no lowering of {}", other.name()),
                                ))
                            }
                        };
                        let keys = ["a", "b", "c"];
                        let pairs: Vec<(&str, &str)> =
                            keys.iter().zip(&a).map(|(k, v)| (*k, v.as_str())).collect();
                        self.stmt(format!("const {} {name} = {};", s.ty, fill(t, &pairs)));
                    }
                    None => {
                        let w = self.target.width;
                        self.stmt(format!("float {name}[{w}];"));
                        for k in 0..w {
                            let l: Vec<String> = a.iter().map(|x| format!("{x}[{k}]")).collect();
                            let e = match vop {
                                Op::VecAdd => format!("{} + {}", l[0], l[1]),
                                Op::VecMinus => format!("{} - {}", l[0], l[1]),
                                Op::VecMul => format!("{} * {}", l[0], l[1]),
                                Op::VecDiv => format!("{} / {}", l[0], l[1]),
                                Op::VecMAC => format!("{} + {} * {}", l[0], l[1], l[2]),
                                Op::VecNeg => format!("-{}", l[0]),
                                Op::VecSqrt => format!("sqrtf({})", l[0]),
                                _ => format!("(float)(({0} > 0.0f) - ({0} < 0.0f))", l[0]),
                            };
                            self.stmt(format!("{name}[{k}] = {e};"));
                        }
                    }
                }
            }
        }
        self.names.insert(id, name);
        Ok(())
    }
}

/// The kernel as C: `void kernel(const float *IN..., float *out)` storing `outputs` floats.
pub fn lower(
    dag: &Dag,
    program: Id,
    outputs: usize,
    target: &Target,
    signature: Option<&Signature>,
) -> Result<Lowered> {
    let inputs = input_lengths(dag, &[program]);
    for (name, _) in &inputs {
        let ident = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let temporary = name.len() > 1
            && name.starts_with(['t', 'v'])
            && name[1..].chars().all(|c| c.is_ascii_digit());
        if !ident || temporary || RESERVED.contains(&name.as_str()) || name.starts_with("h_") {
            return Err(Error::data(
                "lowering",
                format!("input array '{name}' cannot be named so in C (a C keyword, a name the emitted code uses, or not an identifier)"),
            ));
        }
    }
    let mut e = Emitter {
        dag,
        target,
        lengths: inputs.iter().map(|i| i.1).collect(),
        overrun: vec![false; inputs.len()],
        live: live_lanes(dag, program, outputs, target.width),
        body: String::new(),
        statements: 0,
        names: HashMap::new(),
        masked_loads: HashMap::new(),
    };
    let w = target.width;
    let out = output_parameter(&inputs);
    for id in dag.reachable(&[program]) {
        e.emit(id)?;
    }
    let body = std::mem::take(&mut e.body);
    for (k, (name, len)) in inputs.iter().enumerate() {
        if target.is_plain_c() {
            break;
        }
        if e.overrun[k] {
            let size = len + 2 * w;
            e.stmt(format!("float {name}_[{size}] = {{0}};"));
            e.stmt(format!(
                "memcpy({name}_ + 0, {}, sizeof(float) * {len});",
                c_name(dag, k as u32)
            ));
        }
    }
    e.body.push_str(&body);
    // The chunks of the Concat chain, in order.
    let mut chunks = Vec::new();
    let mut at = program;
    loop {
        if dag.op(at) == Op::Concat {
            chunks.push(dag.args(at)[0]);
            at = dag.args(at)[1];
        } else {
            chunks.push(at);
            break;
        }
    }
    for (k, &v) in chunks.iter().enumerate() {
        let first = k * w;
        if first >= outputs {
            break;
        }
        let n = (outputs - first).min(w);
        let name = e.names.get(&v).cloned().unwrap_or_else(|| e.scalar(v));
        match e.simd() {
            Some(s) if n == w => {
                let st = fill(s.store, &[("p", &format!("{out} + {first}")), ("v", &name)]);
                e.stmt(format!("{st};"));
            }
            Some(s) if s.ty == "__m512" => {
                e.stmt(format!(
                    "_mm512_mask_storeu_ps({out} + {first}, {:#x}, {name});",
                    (1u32 << n) - 1
                ));
            }
            // AVX2: each 128-bit block's four, two or one lanes stored as they are.
            Some(s) if s.ty == "__m256" && n != 3 && n != 7 => {
                let blocks = [
                    (0, format!("_mm256_castps256_ps128({name})"), n.min(4)),
                    (
                        4,
                        format!("_mm256_extractf128_ps({name}, 1)"),
                        n.saturating_sub(4),
                    ),
                ];
                for (offset, block, count) in blocks {
                    let at = first + offset;
                    match count {
                        4 => e.stmt(format!("_mm_storeu_ps({out} + {at}, {block});")),
                        2 => e.stmt(format!("_mm_storel_pi((__m64 *)({out} + {at}), {block});")),
                        1 => e.stmt(format!("_mm_store_ss({out} + {at}, {block});")),
                        _ => {}
                    }
                }
            }
            Some(s) => {
                e.stmt(format!(
                    "{{ float tail[{w}]; {}; memcpy({out} + {first}, tail, sizeof(float) * {n}); }}",
                    fill(s.store, &[("p", "tail"), ("v", &name)])
                ));
            }
            None => e.stmt(format!(
                "memcpy({out} + {first}, {name}, sizeof(float) * {n});"
            )),
        }
    }
    let params: Vec<String> = inputs
        .iter()
        .map(|(n, _)| format!("const float *restrict {n}"))
        .chain([format!("float *restrict {out}")])
        .collect();
    let function = dropin::flat_name(signature);
    let mut c = String::new();
    writeln!(c, "void {function}({}) {{", params.join(", ")).expect("string write");
    c.push_str(&e.body);
    c.push_str("}\n");
    if let Some(s) = signature.filter(|s| has_drop_in(s)) {
        c.push_str(&dropin::drop_in(s, &inputs, outputs));
    }
    Ok(Lowered {
        c,
        function,
        instructions: e.statements,
        inputs,
        outputs,
        cost: dag_cost(dag, program, target),
    })
}

/// The headers the C needs on `target`.
pub fn headers(target: &Target) -> &'static str {
    match target.kind {
        KernelTarget::Neon => "#include <arm_neon.h>\n#include <math.h>\n#include <string.h>\n",
        KernelTarget::Dsp => "#include <math.h>\n#include <string.h>\n",
        KernelTarget::Avx2 | KernelTarget::Avx512 => {
            "#include <immintrin.h>\n#include <math.h>\n#include <string.h>\n"
        }
    }
}
