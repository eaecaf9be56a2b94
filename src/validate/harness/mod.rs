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
//!
//! - this file: [`Harness`], how one instruction is called and where its values sit in a
//!   record, and [`Job`], one instruction's share of a batch;
//! - [`program`]: the C source of a batch;
//! - [`stream`]: the stdin bytes of a batch and the reading of its stdout.

mod program;
mod stream;

pub use program::{is_function_flag, source, Source};
pub use stream::{parse_output, stdin_bytes, Parsed, MAGIC_IN, MAGIC_OUT, MARK_END, MARK_JOB};

use super::inputs::InputSet;
use crate::ir::{Elem, VecType};
use crate::spec::Instruction;
use crate::toolchain::ctype::{self, CType, Repr};
use crate::toolchain::Toolchain;

/// Bytes of the static input and output chunk buffers (grown if one record is larger).
pub(crate) const CHUNK_BYTES: usize = 64 * 1024;

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

pub(crate) fn round_up(x: usize, a: usize) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Operand;

    /// (name, IR type, immediate range, C type override)
    pub(super) type Op<'a> = (&'a str, &'a str, Option<(i128, i128)>, Option<&'a str>);

    pub(super) fn instruction(name: &str, ops: &[Op], result: &str) -> Instruction {
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
}
