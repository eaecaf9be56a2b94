//! The byte protocol of a batch: the stdin bytes that carry every job's input records, and the
//! reading of stdout, which tells which jobs finished and which one was running if the program
//! died.

use super::Job;

/// The first word of stdin.
pub const MAGIC_IN: u32 = 0x15AD_0001;
/// The first word of stdout.
pub const MAGIC_OUT: u32 = 0x15AD_0002;
/// Job k's marker on stdout is `MARK_JOB + k`.
pub const MARK_JOB: u32 = 0x15AE_0000;
/// The last word of stdout.
pub const MARK_END: u32 = 0x15AE_FFFF;

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
    use super::super::tests::instruction;
    use super::super::{source, Harness};
    use super::*;
    use crate::toolchain::Toolchain;

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
