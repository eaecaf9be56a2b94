//! The C harness for a batch of instructions, and the byte protocol it speaks.
//!
//! No input data is compiled in: the program reads its inputs from stdin and writes results to
//! stdout, so one source serves any number of inputs and a batch compiles once.
//!
//! stdin:  `u32 MAGIC_IN, u32 jobs`, then per job `u32 n` and `n` fixed-size records. A record holds
//!         a `u32` immediate selector at offset 0 (only if the instruction has immediates), then
//!         each non-immediate operand at an offset aligned for its C type ([`CType::align`]).
//! stdout: `u32 MAGIC_OUT`, then per job `u32 (MARK_JOB + k)` and `n` result records, then
//!         `u32 MARK_END`. The per-job marker tells which instruction was running if the program dies.
//!
//! Each instruction gets a function that reads its records in chunks into a static, 256-byte
//! aligned buffer, loads every operand (memcpy on x86/NEON; an aligned load on HVX, where a
//! predicate is built from a vector with `Q6_Q_vand_VR(v, -1)`), calls the intrinsic and stores
//! the result. Immediates must be compile-time constants, so the selector picks one of the
//! instruction's immediate combinations in a `switch` with one call site per combination.
//! On x86 an instruction's feature flags (`-mavx512bw`) become its own function's
//! `target("...")` attribute, so an instruction the CPU lacks cannot change the code of its
//! neighbours (with `-mavx512bw` for the whole file gcc may encode them with EVEX).
//! All integers in the protocol are little-endian (every target is).

use super::inputs::InputSet;
use crate::ir::{Elem, VecType};
use crate::spec::Instruction;
use crate::toolchain::ctype::{self, CType, Repr};
use crate::toolchain::{self, Toolchain};
use std::fmt::Write;

/// The first word of stdin.
pub const MAGIC_IN: u32 = 0x15AD_0001;
/// The first word of stdout.
pub const MAGIC_OUT: u32 = 0x15AD_0002;
/// Job k's marker on stdout is `MARK_JOB + k`.
pub const MARK_JOB: u32 = 0x15AE_0000;
/// The last word of stdout.
pub const MARK_END: u32 = 0x15AE_FFFF;
/// Bytes of the static input and output chunk buffers (grown if one record is larger).
const CHUNK_BYTES: usize = 64 * 1024;

/// Where one value sits in a stream record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// Operand name (`r` for the result).
    pub name: String,
    /// Its IR type.
    pub ty: VecType,
    /// Its C type.
    pub ctype: CType,
    /// Its byte offset in the record.
    pub offset: usize,
}

/// One argument of the intrinsic call, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// The value in `slots[i]`.
    Value(usize),
    /// The i-th immediate of the selected combination.
    Imm(usize),
}

/// How one instruction is called from C and how its values are laid out in the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Harness {
    /// The instruction.
    pub name: String,
    /// The intrinsic called.
    pub intrinsic: String,
    /// Its arguments, in order.
    pub args: Vec<Arg>,
    /// Non-immediate operands, in operand order.
    pub slots: Vec<Slot>,
    /// The IR element type of each immediate.
    pub imm_elems: Vec<Elem>,
    /// Where the result goes in the output record.
    pub result: Slot,
    /// Bytes per input record (multiple of its alignment) and per output record.
    pub record: usize,
    #[allow(missing_docs)]
    pub out_record: usize,
}

fn round_up(x: usize, a: usize) -> usize {
    x.div_ceil(a) * a
}

impl Harness {
    /// The harness description of an instruction; Err says why it cannot be called from C.
    pub fn new(target: Toolchain, ins: &Instruction) -> Result<Harness, String> {
        let intrinsic = ins
            .intrinsic
            .clone()
            .ok_or_else(|| "no intrinsic".to_string())?;
        let mut args = Vec::new();
        let mut slots = Vec::new();
        let mut imm_elems = Vec::new();
        let has_imm = ins.operands.iter().any(|o| o.imm.is_some());
        let mut offset = if has_imm { 4 } else { 0 };
        let mut align = if has_imm { 4 } else { 1 };
        for op in &ins.operands {
            if op.imm.is_some() {
                args.push(Arg::Imm(imm_elems.len()));
                imm_elems.push(op.ty.elem);
                continue;
            }
            let c = ctype::c_type(target, op.ty, op.c_type.as_deref())
                .map_err(|e| format!("operand {}: {e}", op.name))?;
            offset = round_up(offset, c.align);
            align = align.max(c.align);
            args.push(Arg::Value(slots.len()));
            let size = c.size;
            slots.push(Slot {
                name: op.name.clone(),
                ty: op.ty,
                ctype: c,
                offset,
            });
            offset += size;
        }
        // The harness declares the result with the intrinsic's own type (`__typeof__`), so a result
        // without a default C type only needs whole bytes.
        let rc = match ctype::c_type(target, ins.result, None) {
            Ok(c) => c,
            Err(_)
                if ins.result.elem != Elem::Bool
                    && ins.result.bits().is_multiple_of(8)
                    && ins.result.elem.bits().is_multiple_of(8) =>
            {
                CType::auto(ins.result.bits() as usize / 8)
            }
            Err(e) => return Err(format!("result: {e}")),
        };
        // Scalar and mask results may come back in a wider C type (int for an i16); room for 8 bytes.
        let min_out = if ins.result.lanes == 1 || rc.repr == Repr::Bits {
            8
        } else {
            1
        };
        let out_record = round_up(
            rc.size.max(min_out),
            rc.align.max(if min_out == 8 { 8 } else { 1 }),
        );
        let result = Slot {
            name: "r".into(),
            ty: ins.result,
            ctype: rc,
            offset: 0,
        };
        Ok(Harness {
            name: ins.name.clone(),
            intrinsic,
            args,
            slots,
            imm_elems,
            result,
            record: round_up(offset.max(1), align),
            out_record,
        })
    }

    /// The harness with every default C type that has an alternative switched to it (same bytes),
    /// or None if there is none.
    pub fn with_alternatives(&self) -> Option<Harness> {
        let mut h = self.clone();
        let mut changed = false;
        for slot in h.slots.iter_mut() {
            if let Some(alt) = slot.ctype.alternative.take() {
                slot.ctype.name = alt;
                changed = true;
            }
        }
        changed.then_some(h)
    }

    /// The C prototype the harness assumes, e.g. `_mm_slli_epi16(__m128i a, imm #1) -> <8 x i16>`
    /// (the result takes the intrinsic's own C type).
    pub fn prototype(&self) -> String {
        let mut imm = 0;
        let args: Vec<String> = self
            .args
            .iter()
            .map(|a| match a {
                Arg::Value(i) => format!("{} {}", self.slots[*i].ctype.name, self.slots[*i].name),
                Arg::Imm(_) => {
                    imm += 1;
                    format!("imm #{imm}")
                }
            })
            .collect();
        format!(
            "{}({}) -> {}",
            self.intrinsic,
            args.join(", "),
            self.result.ty
        )
    }

    /// Whether records start with an immediate selector (the instruction has immediates).
    pub fn has_selector(&self) -> bool {
        !self.imm_elems.is_empty()
    }

    /// The input records for an input set (operand values; immediates as selectors).
    pub fn encode(&self, set: &InputSet) -> Vec<u8> {
        let mut out = vec![0u8; self.record * set.inputs.len()];
        for (i, input) in set.inputs.iter().enumerate() {
            let rec = &mut out[i * self.record..(i + 1) * self.record];
            if self.has_selector() {
                rec[..4].copy_from_slice(&(input.imm_case as u32).to_le_bytes());
            }
            let values = self
                .args
                .iter()
                .zip(&input.lanes)
                .filter_map(|(a, l)| match a {
                    Arg::Value(s) => Some((&self.slots[*s], l)),
                    Arg::Imm(_) => None,
                });
            for (slot, lanes) in values {
                let bytes = slot.ctype.encode(slot.ty, lanes);
                rec[slot.offset..slot.offset + bytes.len()].copy_from_slice(&bytes);
            }
        }
        out
    }

    /// The result lanes of each input from the output records.
    pub fn decode(&self, bytes: &[u8]) -> Vec<Vec<u128>> {
        bytes
            .chunks_exact(self.out_record)
            .map(|rec| self.result.ctype.decode(self.result.ty, rec))
            .collect()
    }
}

/// One instruction's share of a batch: how to call it, its immediate combinations, its inputs.
#[derive(Debug, Clone)]
pub struct Job {
    /// How to call the instruction.
    pub harness: Harness,
    /// Its immediate combinations, one `case` of the switch each.
    pub imm_cases: Vec<Vec<i128>>,
    /// Number of input records.
    pub count: usize,
    /// The encoded input records.
    pub records: Vec<u8>,
    /// Compiler flags the instruction needs: on x86 its function's target attribute, elsewhere
    /// merged over the batch.
    pub flags: Vec<String>,
}

impl Job {
    /// The job of running `harness` on `set`, compiled with `flags`.
    pub fn new(harness: Harness, set: &InputSet, flags: Vec<String>) -> Job {
        let records = harness.encode(set);
        Job {
            imm_cases: set.imm_cases.clone(),
            count: set.inputs.len(),
            records,
            flags,
            harness,
        }
    }
}

/// A generated program and the source lines of each job's function (1-based, inclusive).
#[derive(Debug, Clone)]
pub struct Source {
    /// The C program.
    pub text: String,
    /// The first and last line of each job's function.
    pub lines: Vec<(usize, usize)>,
}

impl Source {
    /// The job whose function contains source line `line`.
    pub fn job_at_line(&self, line: usize) -> Option<usize> {
        self.lines
            .iter()
            .position(|&(a, b)| (a..=b).contains(&line))
    }
}

/// A C literal for an immediate.
fn imm_literal(v: i128) -> String {
    if (i32::MIN as i128..=i32::MAX as i128).contains(&v) {
        if v < 0 {
            format!("({v})")
        } else {
            v.to_string()
        }
    } else if (0..=u32::MAX as i128).contains(&v) {
        format!("{v}u")
    } else if v < 0 {
        format!("({v}LL)")
    } else {
        format!("{v}ULL")
    }
}

/// Writes the statement loading `slot` into variable `var` from `p + offset`.
fn load(out: &mut String, slot: &Slot, var: &str) {
    let c = &slot.ctype;
    if c.hvx_pred {
        let _ = writeln!(
            out,
            "      HVX_VectorPred {var}; {{ HVX_Vector t_; ISADB_LOAD(HVX_Vector, t_, p + {}); {var} = Q6_Q_vand_VR(t_, -1); }}",
            slot.offset
        );
    } else {
        let _ = writeln!(
            out,
            "      {} {var}; ISADB_LOAD({}, {var}, p + {});",
            c.name, c.name, slot.offset
        );
    }
}

/// The complete program for a batch of jobs.
pub fn source(target: Toolchain, jobs: &[&Job]) -> Source {
    let mut s = String::with_capacity(8192 + jobs.len() * 2048);
    s.push_str(toolchain::prelude(target));
    s.push_str("\n/* ---- isadb validation harness ---- */\n");
    let buf = jobs
        .iter()
        .map(|j| j.harness.record.max(j.harness.out_record))
        .fold(CHUNK_BYTES, usize::max);
    let buf = round_up(buf, 256);
    match target {
        Toolchain::Hvx => s.push_str(
            "#define ISADB_LOAD(T, v, src) ((v) = *(const T *)(const void *)(src))\n\
             #define ISADB_STORE(T, dst, v) (*(T *)(void *)(dst) = (v))\n",
        ),
        _ => s.push_str(
            "#define ISADB_LOAD(T, v, src) memcpy(&(v), (src), sizeof(T))\n\
             #define ISADB_STORE(T, dst, v) memcpy((dst), &(v), sizeof(T))\n",
        ),
    }
    let _ = writeln!(
        s,
        "static unsigned char isadb_in[{buf}] __attribute__((aligned(256)));"
    );
    let _ = writeln!(
        s,
        "static unsigned char isadb_out[{buf}] __attribute__((aligned(256)));"
    );
    let mut lines = Vec::with_capacity(jobs.len());
    for (k, job) in jobs.iter().enumerate() {
        s.push('\n');
        let first = s.matches('\n').count() + 1;
        function(&mut s, k, job, buf, target);
        let last = s.matches('\n').count();
        lines.push((first, last));
    }
    s.push_str("\nint harness_main(void) {\n  unsigned int hdr[2], n, mark;\n");
    let _ = writeln!(
        s,
        "  if (read_in(hdr, 8) != 8 || hdr[0] != {MAGIC_IN}u || hdr[1] != {}u) return 3;",
        jobs.len()
    );
    let _ = writeln!(s, "  mark = {MAGIC_OUT}u; emit(&mark, 4);");
    for k in 0..jobs.len() {
        let _ = writeln!(
            s,
            "  if (read_in(&n, 4) != 4) return 4;\n  mark = {}u; emit(&mark, 4);\n  if (!isadb_run_{k}(n)) return 5;",
            MARK_JOB + k as u32
        );
    }
    let _ = writeln!(s, "  mark = {MARK_END}u; emit(&mark, 4);\n  return 0;\n}}");
    Source { text: s, lines }
}

/// Whether `flag` goes on the job's own function as a target attribute rather than on the
/// compiler's command line: x86 feature flags such as `-mavx512bw`.
pub fn is_function_flag(target: Toolchain, flag: &str) -> bool {
    target == Toolchain::X86 && flag.starts_with("-m") && !flag.starts_with("-march=")
}

/// Writes job k's function `static int isadb_run_k(unsigned int n)` (0 on a short read).
fn function(s: &mut String, k: usize, job: &Job, buf: usize, target: Toolchain) {
    let h = &job.harness;
    let chunk = (buf / h.record.max(h.out_record)).max(1);
    let _ = writeln!(s, "/* {k}: {} */", h.name.replace("*/", "* /"));
    let features: Vec<&str> = job
        .flags
        .iter()
        .filter(|f| is_function_flag(target, f))
        .map(|f| &f[2..])
        .collect();
    if !features.is_empty() {
        let _ = writeln!(s, "__attribute__((target(\"{}\")))", features.join(","));
    }
    let _ = writeln!(s, "static int isadb_run_{k}(unsigned int n) {{");
    for slot in &h.slots {
        if slot.ctype.check_size {
            let _ = writeln!(
                s,
                "  _Static_assert(sizeof({0}) == {1}, \"C type {0} of {2} must have {1} bytes ({3})\");",
                slot.ctype.name, slot.ctype.size, slot.name, slot.ty
            );
        }
    }
    let _ = writeln!(s, "  while (n > 0) {{");
    let _ = writeln!(s, "    unsigned int c = n < {chunk}u ? n : {chunk}u;");
    let _ = writeln!(
        s,
        "    if (read_in(isadb_in, (unsigned long)c * {}u) != (unsigned long)c * {}u) return 0;",
        h.record, h.record
    );
    let _ = writeln!(s, "    for (unsigned int i = 0; i < c; i++) {{");
    let _ = writeln!(
        s,
        "      const unsigned char *p = isadb_in + (unsigned long)i * {}u;",
        h.record
    );
    let _ = writeln!(
        s,
        "      unsigned char *q = isadb_out + (unsigned long)i * {}u;",
        h.out_record
    );
    for (i, slot) in h.slots.iter().enumerate() {
        load(s, slot, &format!("v{i}"));
    }
    let rc = &h.result.ctype;
    let call_expr = |case: &[i128]| -> String {
        let args: Vec<String> = h
            .args
            .iter()
            .map(|a| match a {
                Arg::Value(i) => format!("v{i}"),
                Arg::Imm(i) => imm_literal(case[*i]),
            })
            .collect();
        format!("{}({})", h.intrinsic, args.join(", "))
    };
    let call = |case: &[i128]| format!("r = {};", call_expr(case));
    if rc.hvx_pred {
        let _ = writeln!(s, "      HVX_VectorPred r;");
    } else {
        // The result takes the intrinsic's own return type (__m512h, int64x1_t, a struct, int, ...);
        // its size must match the IR result (scalars and masks may be wider: the low bytes count).
        let first = job.imm_cases.first().map_or(&[][..], |c| c.as_slice());
        let _ = writeln!(s, "      __typeof__({}) r;", call_expr(first));
        let exact = h.result.ty.lanes > 1 && rc.repr != Repr::Bits;
        let cond = if exact {
            format!("sizeof(r) == {}", rc.size)
        } else {
            format!("sizeof(r) >= {} && sizeof(r) <= {}", rc.size, h.out_record)
        };
        let _ = writeln!(
            s,
            "      _Static_assert({cond}, \"the intrinsic's result must have {} bytes ({})\");",
            rc.size, h.result.ty
        );
    }
    if h.has_selector() {
        let _ = writeln!(
            s,
            "      unsigned int sel; ISADB_LOAD(unsigned int, sel, p);"
        );
        let _ = writeln!(s, "      switch (sel) {{");
        for (i, case) in job.imm_cases.iter().enumerate() {
            let label = if i == 0 { "default: case 0" } else { "case" };
            if i == 0 {
                let _ = writeln!(s, "      {label}: {} break;", call(case));
            } else {
                let _ = writeln!(s, "      {label} {i}: {} break;", call(case));
            }
        }
        let _ = writeln!(s, "      }}");
    } else {
        let _ = writeln!(s, "      {}", call(&[]));
    }
    if rc.hvx_pred {
        let _ = writeln!(
            s,
            "      {{ HVX_Vector t_ = Q6_V_vand_QR(r, -1); ISADB_STORE(HVX_Vector, q, t_); }}"
        );
    } else {
        let _ = writeln!(s, "      ISADB_STORE(__typeof__(r), q, r);");
    }
    let _ = writeln!(s, "    }}");
    let _ = writeln!(
        s,
        "    emit(isadb_out, (unsigned long)c * {}u);",
        h.out_record
    );
    let _ = writeln!(s, "    n -= c;\n  }}\n  return 1;\n}}");
}

/// The stdin bytes for a batch.
pub fn stdin_bytes(jobs: &[&Job]) -> Vec<u8> {
    let total: usize = jobs.iter().map(|j| j.records.len() + 4).sum();
    let mut out = Vec::with_capacity(total + 8);
    out.extend(MAGIC_IN.to_le_bytes());
    out.extend((jobs.len() as u32).to_le_bytes());
    for j in jobs {
        out.extend((j.count as u32).to_le_bytes());
        out.extend(&j.records);
    }
    out
}

/// What a (possibly crashed) run's stdout says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// Output records of the jobs that finished, in order (a prefix of the batch).
    pub outputs: Vec<Vec<u8>>,
    /// The job that had started but not finished, if the output stops inside one.
    pub started: Option<usize>,
    /// Every job finished and the end marker is present.
    pub complete: bool,
}

/// Splits stdout into per-job output records.
pub fn parse_output(jobs: &[&Job], stdout: &[u8]) -> Parsed {
    let word = |at: usize| {
        stdout
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    };
    let mut parsed = Parsed {
        outputs: Vec::new(),
        started: None,
        complete: false,
    };
    if word(0) != Some(MAGIC_OUT) {
        return parsed;
    }
    let mut at = 4;
    for (k, job) in jobs.iter().enumerate() {
        if word(at) != Some(MARK_JOB + k as u32) {
            return parsed;
        }
        at += 4;
        let len = job.count * job.harness.out_record;
        match stdout.get(at..at + len) {
            Some(b) => parsed.outputs.push(b.to_vec()),
            None => {
                parsed.started = Some(k);
                return parsed;
            }
        }
        at += len;
    }
    parsed.complete = word(at) == Some(MARK_END) && at + 4 == stdout.len();
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Operand;

    /// (name, IR type, immediate range, C type override)
    type Op<'a> = (&'a str, &'a str, Option<(i128, i128)>, Option<&'a str>);

    fn instruction(name: &str, ops: &[Op], result: &str) -> Instruction {
        let operands = ops
            .iter()
            .map(|(n, t, imm, c)| Operand {
                name: n.to_string(),
                ty: VecType::parse(t).unwrap(),
                c_type: c.map(str::to_string),
                imm: *imm,
            })
            .collect();
        Instruction::for_harness_tests(name, operands, VecType::parse(result).unwrap())
    }

    #[test]
    fn layout_and_round_trip() {
        let ins = instruction(
            "_mm512_mask_add_epi16",
            &[
                ("src", "<32 x i16>", None, None),
                ("k", "<32 x bool>", None, None),
                ("a", "<32 x i16>", None, None),
            ],
            "<32 x i16>",
        );
        let h = Harness::new(Toolchain::X86, &ins).unwrap();
        assert_eq!(
            h.slots.iter().map(|s| s.offset).collect::<Vec<_>>(),
            vec![0, 64, 128]
        );
        assert_eq!(h.slots[1].ctype.name, "__mmask32");
        assert_eq!((h.record, h.out_record), (192, 64));
        let set = crate::validate::inputs::generate(&ins.operands, 5, 1, &ins.name);
        let rec = h.encode(&set);
        assert_eq!(rec.len(), 5 * 192);
        let first = h.decode(
            &rec[..192 * 5]
                .chunks(192)
                .flat_map(|c| c[..64].to_vec())
                .collect::<Vec<_>>(),
        );
        assert_eq!(first.len(), 5);
        assert_eq!(first[3], set.inputs[3].lanes[0]);
    }

    #[test]
    fn hvx_alignment_and_selector() {
        let ins = instruction(
            "Q6_Vh_vasl_VhR",
            &[
                ("a", "<64 x i16>", None, None),
                ("p", "<4 x i8>", None, Some("int")),
                ("n", "i32", Some((0, 3)), None),
            ],
            "<64 x i16>",
        );
        let h = Harness::new(Toolchain::Hvx, &ins).unwrap();
        assert!(h.has_selector());
        assert_eq!(h.slots[0].offset, 128);
        assert_eq!(h.slots[1].offset, 256);
        assert_eq!(h.record, 384);
        let pair = instruction(
            "Q6_Wh_vadd_VubVub",
            &[("a", "<128 x u8>", None, None)],
            "<128 x u16>",
        );
        assert_eq!(Harness::new(Toolchain::Hvx, &pair).unwrap().out_record, 256);
    }

    #[test]
    fn parse_output_finds_crash() {
        let ins = instruction(
            "_mm_add_epi16",
            &[
                ("a", "<8 x i16>", None, None),
                ("b", "<8 x i16>", None, None),
            ],
            "<8 x i16>",
        );
        let h = Harness::new(Toolchain::X86, &ins).unwrap();
        let set = crate::validate::inputs::generate(&ins.operands, 3, 1, "x");
        let job = Job::new(h, &set, vec![]);
        let jobs = [&job, &job];
        let mut out = MAGIC_OUT.to_le_bytes().to_vec();
        out.extend(MARK_JOB.to_le_bytes());
        out.extend([7u8; 48]);
        out.extend((MARK_JOB + 1).to_le_bytes());
        out.extend([1u8; 20]);
        let p = parse_output(&jobs, &out);
        assert_eq!(
            (p.outputs.len(), p.started, p.complete),
            (1, Some(1), false)
        );
        out.truncate(4 + 4 + 48 + 4);
        out.extend([1u8; 48]);
        out.extend(MARK_END.to_le_bytes());
        let p = parse_output(&jobs, &out);
        assert_eq!((p.outputs.len(), p.started, p.complete), (2, None, true));
        let src = source(Toolchain::X86, &jobs);
        assert!(src.text.contains("r = _mm_add_epi16(v0, v1);"));
        let (a, b) = src.lines[1];
        assert!(src
            .text
            .lines()
            .nth(a - 1)
            .unwrap()
            .contains("1: _mm_add_epi16"));
        assert_eq!(src.text.lines().nth(b - 1).unwrap(), "}");
        assert_eq!(src.job_at_line(a + 3), Some(1));
    }
}
