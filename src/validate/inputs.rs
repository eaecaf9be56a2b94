//! Deterministic test inputs for one instruction: per lane a mix of edge values (0, 1, -1, min,
//! max, powers of two and their neighbours, alternating bit patterns), random lanes, small values
//! and splats; immediates cover their bounds, values tied to the lane width and random in-range
//! values. Everything follows from the seed and the instruction's name, so a batch's composition
//! never changes an instruction's inputs.

use crate::ir::{Elem, VecType};
use crate::semantics::sample::edge_values;
use crate::spec::Operand;

/// Most distinct immediate combinations per instruction (each is one call site in the harness).
pub const MAX_IMM_CASES: usize = 32;

/// splitmix64: tiny, fast and stable across library versions.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` and a stream name (the instruction's name).
    pub fn new(seed: u64, stream: &str) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in stream.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        let mut r = Rng(seed ^ h.rotate_left(17));
        r.next_u64();
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn next_u128(&mut self) -> u128 {
        ((self.next_u64() as u128) << 64) | self.next_u64() as u128
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// One input: raw lane bits for every operand (immediates included, as one-lane values), and
/// which immediate combination it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub lanes: Vec<Vec<u128>>,
    pub imm_case: usize,
}

/// All inputs for one instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputSet {
    /// Distinct immediate combinations, one value per immediate operand in operand order
    /// (a single empty combination when the instruction has no immediates).
    pub imm_cases: Vec<Vec<i128>>,
    pub inputs: Vec<Input>,
}

/// How one operand's lanes are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Random,
    Edge,
    Mixed,
    Splat,
    Small,
    Alternating,
}

const STRATEGIES: [Strategy; 6] = [
    Strategy::Random,
    Strategy::Edge,
    Strategy::Mixed,
    Strategy::Splat,
    Strategy::Small,
    Strategy::Alternating,
];

/// One random lane value of `elem`.
fn random_lane(rng: &mut Rng, elem: Elem) -> u128 {
    match elem {
        Elem::Bool => rng.below(2) as u128,
        Elem::F32 => {
            if rng.chance(1, 4) {
                rng.next_u64() as u32 as u128
            } else {
                // Moderate magnitudes: sign, exponent in 2^-20 .. 2^40, random mantissa.
                let sign = (rng.below(2) as u32) << 31;
                let exp = (127 - 20 + rng.below(61) as u32) << 23;
                (sign | exp | (rng.next_u64() as u32 & 0x007f_ffff)) as u128
            }
        }
        e => rng.next_u128() & e.mask(),
    }
}

/// A small value tied to the lane width b (shift counts, indices, narrow corner cases): half the
/// time one of 0, ±1, ±2, ±(b-1), ±b, ±(b+1), b/2, 2b; else uniform in -(b+2)..=b+2 (signed) or
/// 0..=b+2 (unsigned). Negative values wrap in unsigned lanes. f32: small integers.
fn small_lane(rng: &mut Rng, elem: Elem) -> u128 {
    match elem {
        Elem::Bool => rng.below(2) as u128,
        Elem::F32 => ((rng.below(17) as i32 - 8) as f32).to_bits() as u128,
        e => {
            let b = e.bits() as i128;
            let v = if rng.chance(1, 2) {
                rng.pick(&[
                    0,
                    1,
                    2,
                    -1,
                    -2,
                    b - 1,
                    b,
                    b + 1,
                    1 - b,
                    -b,
                    -1 - b,
                    b / 2,
                    2 * b,
                ])
            } else if e.is_signed() {
                rng.below(2 * b as u64 + 5) as i128 - (b + 2)
            } else {
                rng.below(b as u64 + 3) as i128
            };
            (v as u128) & e.mask()
        }
    }
}

/// The lanes of one operand under a strategy.
fn operand_lanes(rng: &mut Rng, ty: VecType, strategy: Strategy, edges: &[u128]) -> Vec<u128> {
    let n = ty.lanes as usize;
    if ty.elem == Elem::Bool {
        // Masks and predicates: random, sometimes sparse or dense.
        let (num, den) = match rng.below(4) {
            0 => (1, 8),
            1 => (7, 8),
            _ => (1, 2),
        };
        return (0..n).map(|_| rng.chance(num, den) as u128).collect();
    }
    match strategy {
        Strategy::Random => (0..n).map(|_| random_lane(rng, ty.elem)).collect(),
        Strategy::Edge => (0..n).map(|_| rng.pick(edges)).collect(),
        Strategy::Mixed => (0..n)
            .map(|_| {
                if rng.chance(1, 2) {
                    rng.pick(edges)
                } else {
                    random_lane(rng, ty.elem)
                }
            })
            .collect(),
        Strategy::Splat => {
            let v = if rng.chance(1, 2) {
                rng.pick(edges)
            } else {
                random_lane(rng, ty.elem)
            };
            vec![v; n]
        }
        Strategy::Small => (0..n).map(|_| small_lane(rng, ty.elem)).collect(),
        Strategy::Alternating => {
            let (x, y) = (rng.pick(edges), rng.pick(edges));
            (0..n).map(|i| if i % 2 == 0 { x } else { y }).collect()
        }
    }
}

/// Candidate values for one immediate in `[lo, hi]`: bounds, values tied to the lane width
/// `bits`, then random values; at most `cap`, or every value when the range is that small.
pub fn imm_values(rng: &mut Rng, lo: i128, hi: i128, bits: u32, cap: usize) -> Vec<i128> {
    if hi < lo {
        return vec![lo];
    }
    let span = hi - lo + 1;
    if span <= cap as i128 {
        return (lo..=hi).collect();
    }
    let mut out: Vec<i128> = Vec::new();
    let b = bits as i128;
    for v in [lo, hi, 0, 1, b - 1, b, b + 1, 2, b / 2, -1] {
        if (lo..=hi).contains(&v) && !out.contains(&v) && out.len() < cap {
            out.push(v);
        }
    }
    let mut tries = 0;
    while out.len() < cap && tries < cap * 20 {
        tries += 1;
        let v = lo + (rng.next_u128() % span as u128) as i128;
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Generates `count` inputs for the operands of an instruction.
pub fn generate(operands: &[Operand], count: usize, seed: u64, stream: &str) -> InputSet {
    let mut rng = Rng::new(seed, stream);
    let count = count.max(1);
    // The lane width immediates are measured against: the first vector operand's, else 8.
    let lane_bits = operands
        .iter()
        .find(|o| o.imm.is_none() && o.ty.elem != Elem::Bool)
        .map_or(8, |o| o.ty.elem.bits());
    let imms: Vec<(i128, i128)> = operands.iter().filter_map(|o| o.imm).collect();
    let cap = (count / 2).clamp(8, MAX_IMM_CASES).min(count);
    let imm_cases = imm_combinations(&mut rng, &imms, lane_bits, cap);
    let edges: Vec<Vec<u128>> = operands.iter().map(|o| edge_values(o.ty.elem)).collect();

    let mut inputs = Vec::with_capacity(count);
    for i in 0..count {
        let imm_case = i % imm_cases.len();
        let mut imm_values = imm_cases[imm_case].iter();
        let same_operands = i >= 5 && rng.chance(1, 8);
        // A quarter of the inputs draw every operand small at once, so that narrow corner cases
        // that need two operands at once (a lane of 1 shifted by >= its width) come up.
        let all_small = i >= 5 && !same_operands && rng.chance(1, 4);
        let mut lanes: Vec<Vec<u128>> = Vec::with_capacity(operands.len());
        for (k, op) in operands.iter().enumerate() {
            if op.imm.is_some() {
                let v = *imm_values.next().expect("one value per immediate");
                lanes.push(vec![(v as u128) & op.ty.elem.mask()]);
                continue;
            }
            let ty = op.ty;
            let e = &edges[k];
            let v = match i {
                // Fixed openers: all zero, all ones, all min, all max (masks stay random).
                0..=3 if ty.elem != Elem::Bool => {
                    let v = match (i, ty.elem) {
                        (0, _) => 0,
                        (1, Elem::F32) => (-1.0f32).to_bits() as u128,
                        (1, e) => e.mask(),
                        (2, Elem::F32) => f32::MIN.to_bits() as u128,
                        (2, e) => (e.min_value() as u128) & e.mask(),
                        (_, Elem::F32) => f32::MAX.to_bits() as u128,
                        (_, e) => (e.max_value() as u128) & e.mask(),
                    };
                    vec![v; ty.lanes as usize]
                }
                // Every 8th input from the 5th sweeps the edge values in order, so each appears.
                _ if i % 8 == 4 => {
                    let first = (i / 8) * ty.lanes as usize;
                    (0..ty.lanes as usize)
                        .map(|j| e[(first + j + 3 * k) % e.len()])
                        .collect()
                }
                _ => {
                    let earlier = lanes
                        .iter()
                        .zip(operands)
                        .find(|(_, o)| o.imm.is_none() && o.ty == ty)
                        .map(|(l, _)| l);
                    match earlier {
                        Some(l) if same_operands => l.clone(),
                        _ => {
                            let s = if all_small {
                                Strategy::Small
                            } else {
                                rng.pick(&STRATEGIES)
                            };
                            operand_lanes(&mut rng, ty, s, e)
                        }
                    }
                }
            };
            lanes.push(v);
        }
        inputs.push(Input { lanes, imm_case });
    }
    InputSet { imm_cases, inputs }
}

/// Distinct combinations of immediate values (a single empty one without immediates).
fn imm_combinations(rng: &mut Rng, imms: &[(i128, i128)], bits: u32, cap: usize) -> Vec<Vec<i128>> {
    if imms.is_empty() {
        return vec![vec![]];
    }
    let lists: Vec<Vec<i128>> = imms
        .iter()
        .map(|&(lo, hi)| imm_values(rng, lo, hi, bits, cap))
        .collect();
    let product: usize = lists
        .iter()
        .map(Vec::len)
        .fold(1usize, |a, b| a.saturating_mul(b));
    let mut out: Vec<Vec<i128>> = Vec::new();
    if product <= cap {
        let mut idx = vec![0usize; lists.len()];
        loop {
            out.push(idx.iter().zip(&lists).map(|(&i, l)| l[i]).collect());
            let mut k = 0;
            while k < idx.len() {
                idx[k] += 1;
                if idx[k] < lists[k].len() {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
            if k == idx.len() {
                break;
            }
        }
        return out;
    }
    // Each list walked in order (so every value appears), then random picks.
    let longest = lists.iter().map(Vec::len).max().unwrap_or(1);
    for t in 0..longest.min(cap) {
        let c: Vec<i128> = lists.iter().map(|l| l[t % l.len()]).collect();
        if !out.contains(&c) {
            out.push(c);
        }
    }
    let mut tries = 0;
    while out.len() < cap && tries < cap * 20 {
        tries += 1;
        let c: Vec<i128> = lists.iter().map(|l| rng.pick(l)).collect();
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, ty: &str, imm: Option<(i128, i128)>) -> Operand {
        Operand {
            name: name.into(),
            ty: VecType::parse(ty).unwrap(),
            c_type: None,
            imm,
        }
    }

    #[test]
    fn deterministic_and_seed_dependent() {
        let ops = [op("a", "<8 x i16>", None), op("b", "<8 x i16>", None)];
        let x = generate(&ops, 50, 1, "add");
        assert_eq!(x, generate(&ops, 50, 1, "add"));
        assert_ne!(x, generate(&ops, 50, 2, "add"));
        assert_ne!(x, generate(&ops, 50, 1, "sub"));
        assert_eq!(x.inputs.len(), 50);
        assert_eq!(x.imm_cases, vec![Vec::<i128>::new()]);
        // Openers: zero, all ones, min, max.
        assert_eq!(x.inputs[0].lanes[0], vec![0; 8]);
        assert_eq!(x.inputs[1].lanes[1], vec![0xffff; 8]);
        assert_eq!(x.inputs[2].lanes[0], vec![0x8000; 8]);
        assert_eq!(x.inputs[3].lanes[0], vec![0x7fff; 8]);
        let all: Vec<u128> = x.inputs.iter().flat_map(|i| i.lanes.concat()).collect();
        for v in [0x100, 0xff, 0x101] {
            assert!(all.contains(&v), "{v:#x} missing");
        }
        assert!(all.iter().all(|&v| v <= 0xffff));
        // By 100 inputs, every edge value has been swept (12 sweeps of 8 lanes).
        let x = generate(&ops, 100, 1, "add");
        let all: Vec<u128> = x.inputs.iter().flat_map(|i| i.lanes.concat()).collect();
        for v in edge_values(Elem::I16) {
            assert!(all.contains(&v), "{v:#x} missing");
        }
    }

    #[test]
    fn immediates_cover_bounds_and_widths() {
        let ops = [op("a", "<8 x i16>", None), op("n", "i32", Some((0, 255)))];
        let x = generate(&ops, 100, 7, "slli");
        let vals: Vec<i128> = x.imm_cases.iter().map(|c| c[0]).collect();
        for v in [0, 255, 1, 15, 16, 17] {
            assert!(vals.contains(&v), "{v} missing from {vals:?}");
        }
        assert!(vals.len() <= MAX_IMM_CASES && vals.iter().all(|v| (0..=255).contains(v)));
        for (i, input) in x.inputs.iter().enumerate() {
            assert_eq!(input.imm_case, i % x.imm_cases.len());
            assert_eq!(input.lanes[1], vec![x.imm_cases[input.imm_case][0] as u128]);
        }
        let small = generate(
            &[
                op("a", "<4 x i32>", None),
                op("i", "i32", Some((0, 3))),
                op("j", "i32", Some((-1, 1))),
            ],
            24,
            1,
            "x",
        );
        assert_eq!(small.imm_cases.len(), 12);
    }

    #[test]
    fn narrow_two_operand_corners_come_up() {
        // A lane of 1 shifted by at least the lane width (a planted vqshl bug hid there).
        let ops = [op("a", "<4 x u32>", None), op("n", "<4 x i32>", None)];
        let x = generate(&ops, 1000, 1, "vqshlq_u32");
        let hits = x
            .inputs
            .iter()
            .flat_map(|i| i.lanes[0].iter().zip(&i.lanes[1]))
            .filter(|(&a, &n)| a == 1 && (32..=64).contains(&(n as i128)))
            .count();
        assert!(hits >= 3, "{hits} lanes of 1 with a count of 32..64");
    }

    #[test]
    fn edge_values_of_types() {
        let e = edge_values(Elem::I8);
        for v in [
            0u128, 1, 0xff, 0x80, 0x7f, 0x55, 0xaa, 0x40, 0x3f, 0x41, 0xc0,
        ] {
            assert!(e.contains(&v), "{v:#x}");
        }
        assert!(edge_values(Elem::F32).contains(&(f32::NAN.to_bits() as u128)));
        assert_eq!(edge_values(Elem::Bool), vec![0, 1]);
    }
}
