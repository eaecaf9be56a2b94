//! `isadb port X --target T`: the cheapest sequence of T's instructions proven equal to
//! instruction X's semantics (of any ISA in the database), found by instruction selection over
//! that semantics, printed as `compile` prints a selection; with `--emit c` the C function, and
//! with `--run` that C run against the interpreter of X's semantics.

use super::compile::{print_report, Emit};
use super::{Context, Outcome};
use crate::error::Result;
use crate::select::{Request, Selector};
use crate::spec::Target;
use std::collections::HashMap;
use std::time::Instant;

/// The flags of `isadb port` besides the instruction and the target.
pub struct Options<'a> {
    /// The values of X's immediate operands, in operand order.
    pub imms: &'a [String],
    /// What to print besides the sequence.
    pub emit: Option<Emit>,
    /// Iterations of random inputs to run the C on.
    pub run: Option<usize>,
}

/// `port`: selects and proves T's sequence for X and prints it.
pub fn port(ctx: &Context, name: &str, target: Target, options: Options) -> Result<Outcome> {
    let instruction = ctx.project.open()?.find_instruction(name)?;
    let input = instruction.at_immediates(options.imms)?;
    let mut selector = Selector::load(&ctx.project, target)?;
    let started = Instant::now();
    let (compiled, _) = selector.select_and_prove(&instruction.name, input, started)?;
    let request = Request {
        lanes: None,
        declared: HashMap::new(),
        program: options.emit == Some(Emit::Egglog),
        c: options.emit == Some(Emit::C),
        run: options.run,
    };
    let report = selector.describe(compiled, &request)?;
    print_report(ctx, &report, target)
}
