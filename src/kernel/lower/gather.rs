//! Gathering a `Vec`'s lanes into a register. On x86 the live lanes are split into parts, each
//! one instruction or two: windows of one input array (a broadcast, a load, or a load and a
//! permute, masked where the window passes the array's end), the literal lanes (one constant
//! vector), and computed scalars (inserted); the parts are then blended together. Where that
//! takes more instructions than inserting every lane, the lanes are inserted. NEON loads one
//! contiguous run of one array or inserts the lanes.

use super::{c_name, fill, literal, Emitter, Simd};
use crate::kernel::term::{Id, Op};
use std::collections::BTreeMap;

/// One part of a gathered vector: the lanes it fills (a bit per lane), its C expression, and
/// the instructions it takes.
struct Part {
    lanes: u32,
    expr: String,
    instructions: usize,
}

impl Emitter<'_> {
    /// A `Vec`: lanes from loads of the inputs, constants, or inserted scalars. Lanes no output
    /// depends on (`live` clear) may hold anything. Returns the expression instead of binding it
    /// when it is a plain load or broadcast.
    pub(super) fn gather(&mut self, name: &str, id: Id, lanes: &[Id]) -> Option<String> {
        let w = self.target.width;
        let live = self.live.get(&id).copied().unwrap_or(u32::MAX);
        let Some(s) = self.simd() else {
            self.stmt(format!("float {name}[{w}];"));
            for (k, &l) in lanes.iter().enumerate() {
                let e = self.scalar(l);
                self.stmt(format!("{name}[{k}] = {e};"));
            }
            return None;
        };
        let is_live = |k: usize| live & (1 << k) != 0;
        // The lanes that matter, as reads (array, index) or other values.
        let reads: Vec<Option<(u32, u32)>> = lanes
            .iter()
            .enumerate()
            .map(|(k, &l)| match self.dag.op(l) {
                Op::Get(a, i) if is_live(k) => Some((a, i)),
                _ => None,
            })
            .collect();
        let first = (0..w).find(|&k| is_live(k)).unwrap_or(0);
        if (0..w).all(|k| !is_live(k) || lanes[k] == lanes[first]) {
            let x = self.scalar(lanes[first]);
            return Some(fill(s.splat, &[("x", &x)]));
        }
        let value = if s.ty == "float32x4_t" {
            self.neon_gather(s, lanes, live, &reads)
        } else {
            // Where the lanes end up inserted, the masked loads the parts bound are taken back.
            let bound = (self.body.len(), self.statements, self.masked_loads.clone());
            let parts = self.parts(s, lanes, live, &reads);
            // Inserting n scalars takes a move, n - 1 inserts and the join of the halves.
            let inserts = (0..w)
                .filter(|&k| is_live(k) && !matches!(self.dag.op(lanes[k]), Op::Num(_)))
                .count()
                + 1;
            let blended: usize = parts.iter().map(|p| p.instructions + 1).sum::<usize>() - 1;
            if blended > inserts {
                self.body.truncate(bound.0);
                (self.statements, self.masked_loads) = (bound.1, bound.2);
                self.set_lanes(s, lanes, live)
            } else if parts.len() == 1 && parts[0].expr.starts_with(load_name(s)) {
                return Some(parts[0].expr.clone());
            } else {
                blend(s, parts)
            }
        };
        self.stmt(format!("const {} {name} = {value};", s.ty));
        None
    }

    /// NEON: one contiguous run of one array, loaded; otherwise every lane inserted.
    fn neon_gather(
        &mut self,
        s: &Simd,
        lanes: &[Id],
        live: u32,
        reads: &[Option<(u32, u32)>],
    ) -> String {
        let is_live = |k: usize| live & (1 << k) != 0;
        let array = reads.iter().flatten().map(|r| r.0).next();
        let zero = |k: usize| is_live(k) && self.dag.op(lanes[k]) == Op::Num(0);
        let one_array = array.is_some()
            && reads.iter().flatten().all(|r| Some(r.0) == array)
            && (0..lanes.len()).all(|k| !is_live(k) || reads[k].is_some() || zero(k));
        match (array, contiguous(reads)) {
            (Some(a), Some(start)) if one_array && start >= 0 => {
                let zeros: Vec<usize> = (0..lanes.len()).filter(|&k| zero(k)).collect();
                let len = self.lengths[a as usize] as i64;
                let v = self.load(s, &c_name(self.dag, a), start, len);
                if zeros.is_empty() {
                    v
                } else {
                    zero_lanes(s, &v, &zeros)
                }
            }
            _ => self.set_lanes(s, lanes, live),
        }
    }

    /// The x86 parts of a gather: each array's reads covered by windows of the vector's width
    /// (greedily from the lowest index), the literal lanes, the computed lanes.
    fn parts(
        &mut self,
        s: &Simd,
        lanes: &[Id],
        live: u32,
        reads: &[Option<(u32, u32)>],
    ) -> Vec<Part> {
        let w = self.target.width;
        let mut by_array: BTreeMap<u32, Vec<(usize, u32)>> = BTreeMap::new();
        for (k, r) in reads.iter().enumerate() {
            if let Some((a, i)) = r {
                by_array.entry(*a).or_default().push((k, *i));
            }
        }
        let mut parts = Vec::new();
        for (a, mut rs) in by_array {
            rs.sort_by_key(|r| r.1);
            while let Some(&(_, lo)) = rs.first() {
                let cut = rs.partition_point(|r| (r.1 - lo) < w as u32);
                let window: Vec<(usize, u32)> = rs.drain(..cut).collect();
                parts.push(self.window(s, a, &window));
            }
        }
        let live_lane = |k: usize| live & (1 << k) != 0;
        let literals: Vec<(usize, i64)> = (0..w)
            .filter(|&k| live_lane(k))
            .filter_map(|k| match self.dag.op(lanes[k]) {
                Op::Num(n) => Some((k, n)),
                _ => None,
            })
            .collect();
        if !literals.is_empty() {
            let zeros = literals.iter().all(|l| l.1 == 0);
            let values: Vec<String> = (0..w)
                .map(|k| {
                    literals
                        .iter()
                        .find(|l| l.0 == k)
                        .map_or("0.0f".into(), |l| literal(l.1))
                })
                .collect();
            parts.push(Part {
                lanes: mask(literals.iter().map(|l| l.0)),
                expr: if zeros {
                    format!("{}_setzero_ps()", prefix(s))
                } else {
                    format!("{}_setr_ps({})", prefix(s), values.join(", "))
                },
                instructions: usize::from(!zeros),
            });
        }
        let computed: Vec<usize> = (0..w)
            .filter(|&k| live_lane(k) && reads[k].is_none())
            .filter(|&k| !matches!(self.dag.op(lanes[k]), Op::Num(_)))
            .collect();
        if !computed.is_empty() {
            parts.push(Part {
                lanes: mask(computed.iter().copied()),
                expr: self.set_lanes(s, lanes, mask(computed.iter().copied())),
                instructions: computed.len(),
            });
        }
        parts
    }

    /// Lanes read from one window of array `a` (indices within the vector's width): a
    /// broadcast of one element, a load where lane k reads start + k, else a load and a permute
    /// (within 128-bit blocks where every lane reads from its own block).
    fn window(&mut self, s: &Simd, a: u32, reads: &[(usize, u32)]) -> Part {
        let base = c_name(self.dag, a);
        let len = self.lengths[a as usize] as i64;
        let lanes = mask(reads.iter().map(|r| r.0));
        let lo = reads[0].1;
        if reads.iter().all(|r| r.1 == lo) {
            let x = format!("{base}[{lo}]");
            return Part {
                lanes,
                expr: fill(s.splat, &[("x", &x)]),
                instructions: 1,
            };
        }
        let start = reads[0].1 as i64 - reads[0].0 as i64;
        if start >= 0 && reads.iter().all(|r| r.1 as i64 == start + r.0 as i64) {
            return Part {
                lanes,
                expr: self.load(s, &base, start, len),
                instructions: 1,
            };
        }
        if let Some(expr) = repeated_block(s, &base, len, reads) {
            return Part {
                lanes,
                expr,
                instructions: 1,
            };
        }
        // The window starts where a whole vector fits in the array if it can (an unmasked
        // load), and at 0 in an array shorter than a vector (one masked load serves all).
        let w = self.target.width as u32;
        let from = if len >= w as i64 {
            lo.min(len as u32 - w)
        } else {
            0
        };
        let v = self.load(s, &base, from as i64, len);
        let sel: Vec<u32> = (0..w as usize)
            .map(|k| reads.iter().find(|r| r.0 == k).map_or(0, |r| r.1 - from))
            .collect();
        // Every lane read from its own 128-bit block: the in-block permute (`vpermilps`,
        // latency 1, where `vpermps` takes 3), the other lanes taking the block's first.
        if reads.iter().all(|r| (r.1 - from) / 4 == r.0 as u32 / 4) {
            let within: Vec<String> = (0..w as usize)
                .map(|k| {
                    let read = reads.iter().any(|r| r.0 == k);
                    (if read { sel[k] % 4 } else { 0 }).to_string()
                })
                .collect();
            return Part {
                lanes,
                expr: format!(
                    "{}_permutevar_ps({v}, {}_setr_epi32({}))",
                    prefix(s),
                    prefix(s),
                    within.join(", ")
                ),
                instructions: 2,
            };
        }
        let sel: Vec<String> = sel.iter().map(u32::to_string).collect();
        let expr = if s.ty == "__m256" {
            format!(
                "_mm256_permutevar8x32_ps({v}, _mm256_setr_epi32({}))",
                sel.join(", ")
            )
        } else {
            format!(
                "_mm512_permutexvar_ps(_mm512_setr_epi32({}), {v})",
                sel.join(", ")
            )
        };
        Part {
            lanes,
            expr,
            instructions: 2,
        }
    }

    /// A vector load of `base[start..start + w]`, masked to the array's `len` elements on x86
    /// (masked-off lanes read nothing and are zero; on AVX2 a half is a 128-bit load, other
    /// masked loads are bound once); NEON reads a zero-padded copy instead. (A
    /// partial store goes through a local buffer on AVX2: `vmaskmovps` stores are microcoded on
    /// AMD cores.)
    fn load(&mut self, s: &Simd, base: &str, start: i64, len: i64) -> String {
        let w = self.target.width as i64;
        if start + w <= len {
            return fill(s.load, &[("p", &format!("{base} + {start}"))]);
        }
        let valid = (len - start).clamp(0, w);
        match s.ty {
            "__m256" => {
                if valid == 4 {
                    return format!("_mm256_zextps128_ps256(_mm_loadu_ps({base} + {start}))");
                }
                let m: Vec<&str> = (0..w).map(|k| if k < valid { "-1" } else { "0" }).collect();
                let load = format!(
                    "_mm256_maskload_ps({base} + {start}, _mm256_setr_epi32({}))",
                    m.join(", ")
                );
                if let Some(name) = self.masked_loads.get(&load) {
                    return name.clone();
                }
                let name = format!("h_masked{}", self.masked_loads.len());
                self.stmt(format!("const __m256 {name} = {load};"));
                self.masked_loads.insert(load, name.clone());
                name
            }
            "__m512" => format!(
                "_mm512_maskz_loadu_ps({:#x}, {base} + {start})",
                (1u32 << valid) - 1
            ),
            _ => {
                let a = self
                    .dag
                    .arrays()
                    .iter()
                    .position(|n| n == base)
                    .unwrap_or(0);
                self.overrun[a] = true;
                fill(s.load, &[("p", &format!("{base}_ + {start}"))])
            }
        }
    }

    /// Every lane set from its scalar (lane inserts); lanes not in `live` are zero.
    fn set_lanes(&self, s: &Simd, lanes: &[Id], live: u32) -> String {
        let vals: Vec<String> = lanes
            .iter()
            .enumerate()
            .map(|(k, &l)| {
                if live & (1 << k) != 0 {
                    self.scalar(l)
                } else {
                    "0.0f".into()
                }
            })
            .collect();
        match s.ty {
            "float32x4_t" => format!("(float32x4_t){{{}}}", vals.join(", ")),
            _ => format!("{}_setr_ps({})", prefix(s), vals.join(", ")),
        }
    }
}

/// A run of 2 or 4 elements repeated across the vector (lane k reads start + k mod the run) is
/// one broadcast load (`vbroadcastsd`, `vbroadcastf128`; AVX-512's 64-bit and 128-bit
/// broadcasts), where the run lies inside the array.
fn repeated_block(s: &Simd, base: &str, len: i64, reads: &[(usize, u32)]) -> Option<String> {
    [2usize, 4].into_iter().find_map(|run| {
        let start = reads[0].1 as i64 - (reads[0].0 % run) as i64;
        let repeats = start >= 0
            && start + run as i64 <= len
            && reads
                .iter()
                .all(|r| r.1 as i64 == start + (r.0 % run) as i64);
        let at = format!("{base} + {start}");
        repeats.then(|| match (s.ty, run) {
            ("__m256", 2) => {
                format!("_mm256_castpd_ps(_mm256_broadcast_sd((const double *)({at})))")
            }
            ("__m256", _) => format!("_mm256_broadcast_ps((const __m128 *)({at}))"),
            (_, 2) => format!(
                "_mm512_castpd_ps(_mm512_broadcastsd_pd(_mm_load_sd((const double *)({at}))))"
            ),
            _ => format!("_mm512_broadcast_f32x4(_mm_loadu_ps({at}))"),
        })
    })
}

/// The parts blended into one vector, each over the lanes it fills.
fn blend(s: &Simd, parts: Vec<Part>) -> String {
    let mut parts = parts.into_iter();
    let first = parts.next().map_or_else(String::new, |p| p.expr);
    parts.fold(first, |acc, p| match s.ty {
        "__m256" => format!("_mm256_blend_ps({acc}, {}, {})", p.expr, p.lanes),
        _ => format!("_mm512_mask_blend_ps({:#x}, {acc}, {})", p.lanes, p.expr),
    })
}

/// The start of a contiguous run the live reads form (lane k reads start + k), if they do.
fn contiguous(reads: &[Option<(u32, u32)>]) -> Option<i64> {
    let k0 = reads.iter().position(|x| x.is_some())?;
    let start = reads[k0]?.1 as i64 - k0 as i64;
    reads
        .iter()
        .enumerate()
        .all(|(k, r)| r.is_none_or(|r| r.1 as i64 == start + k as i64))
        .then_some(start)
}

/// `v` with the given lanes zeroed (NEON).
fn zero_lanes(s: &Simd, v: &str, zeros: &[usize]) -> String {
    debug_assert_eq!(s.ty, "float32x4_t");
    let keep: Vec<&str> = (0..4)
        .map(|k| if zeros.contains(&k) { "0u" } else { "~0u" })
        .collect();
    format!(
        "vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32({v}), (uint32x4_t){{{}}}))",
        keep.join(", ")
    )
}

/// A bit per lane.
fn mask(lanes: impl Iterator<Item = usize>) -> u32 {
    lanes.map(|k| 1u32 << k).sum()
}

/// `_mm256` or `_mm512`.
fn prefix(s: &Simd) -> &'static str {
    if s.ty == "__m256" {
        "_mm256"
    } else {
        "_mm512"
    }
}

/// The intrinsic of a plain (unmasked) load.
fn load_name(s: &Simd) -> &'static str {
    s.load.split('(').next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::super::{AVX2, AVX512};
    use super::repeated_block;

    #[test]
    fn a_repeated_run_inside_the_array_is_one_broadcast_load() {
        // Lanes 0..8 read B[4..8] twice over: one 128-bit broadcast.
        let block: Vec<(usize, u32)> = (0..8).map(|k| (k, 4 + k as u32 % 4)).collect();
        assert_eq!(
            repeated_block(&AVX2, "B", 16, &block).as_deref(),
            Some("_mm256_broadcast_ps((const __m128 *)(B + 4))")
        );
        // Some lanes not read (another part fills them): the run still repeats.
        let pairs: Vec<(usize, u32)> = [(0, 2), (1, 3), (4, 2), (7, 3)].to_vec();
        assert_eq!(
            repeated_block(&AVX512, "F", 4, &pairs).as_deref(),
            Some("_mm512_castpd_ps(_mm512_broadcastsd_pd(_mm_load_sd((const double *)(F + 2))))")
        );
        // A run past the array's end, or lanes that do not repeat, are not.
        assert_eq!(repeated_block(&AVX2, "B", 6, &block), None);
        let ramp: Vec<(usize, u32)> = (0..8).map(|k| (k, k as u32)).collect();
        assert_eq!(repeated_block(&AVX2, "B", 16, &ramp), None);
    }
}
