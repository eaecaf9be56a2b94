//! The isadb command line: a thin clap front over the library.

use clap::{Parser, Subcommand};
use isadb::cli::bench::Suite;
use isadb::cli::compile::Emit;
use isadb::cli::{self, choice, Output};
use isadb::{
    CostModel, Elem, Home, Isa, KernelTarget, RuleSet, Shard, SynthOptions, Target,
    ValidateOptions, VerifyOptions,
};
use isadb::{MAX_JOBS, MAX_RUNS, MAX_TERM_SIZE};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "isadb",
    version,
    about = "Vector ISA semantics, classes and verified rewrite rules in one rule database"
)]
struct Args {
    /// Project directory holding specs/ and rules.db/. Default: $ISADB_HOME, else the nearest
    /// directory upwards from the working directory holding specs/ and rules.db/, else the
    /// default shipped in this binary (unpacked into $XDG_CACHE_HOME/isadb or ~/.cache/isadb).
    #[arg(long, global = true)]
    home: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build, export, import or summarize the database.
    Db {
        #[command(subcommand)]
        action: cli::db::DbAction,
    },
    /// Semantics, types, feature, cost, family and cross-ISA class of one instruction.
    Show { instruction: String },
    /// The cross-ISA classes: instructions of every ISA that compute one operation up to
    /// parameters (lanes, widths, literals, operand order), with each member's parameters.
    Classes {
        /// Only classes with a member on this ISA.
        #[arg(long, value_parser = choice::<Isa>())]
        isa: Option<Isa>,
        /// Only classes whose members span at least this many ISAs.
        #[arg(long, default_value_t = 1, value_parser = cli::count(4, "spanning"))]
        spanning: usize,
    },
    /// List instructions.
    List {
        #[arg(long, value_parser = choice::<Isa>())]
        isa: Option<Isa>,
        #[arg(long)]
        feature: Option<String>,
        /// Regular expression over name, intrinsic and asm.
        #[arg(long)]
        grep: Option<String>,
    },
    /// Run an instruction on lane values: one argument per operand, a single value (splat) or one per lane, comma-separated.
    Eval {
        instruction: String,
        #[arg(allow_hyphen_values = true)]
        values: Vec<String>,
    },
    /// Measure database build time, query latency, interpreter and prover speed; `bench kernels`
    /// compiles every benchmark kernel and times the emitted code against gcc and Eigen; `bench
    /// totality` selects and proves every IR operator at every type and lane count (1 lane to 4
    /// registers) on each target, counted direct / rules / scalarized / failing.
    Bench {
        /// `kernels` for the kernel benchmark, `totality` for the totality table, `batch` for
        /// the selection corpus compiled in batch.
        #[arg(value_parser = choice::<Suite>())]
        suite: Option<Suite>,
        /// Runs of each query process (the median is reported).
        #[arg(long, default_value_t = 15, value_parser = cli::count(1000, "rounds"))]
        rounds: usize,
        /// `bench kernels`: only the kernels whose name contains this.
        #[arg(long)]
        only: Option<String>,
        /// `bench totality` and `bench batch`: only these targets (repeatable; default: all four).
        #[arg(long, value_parser = choice::<Target>())]
        target: Vec<Target>,
        /// `bench batch`: worker threads (each selects a chunk of expressions and proves it).
        #[arg(long, default_value_t = 2, value_parser = cli::count(MAX_JOBS, "threads"))]
        jobs: usize,
        /// `bench batch`: print the corpus as `compile --batch` JSONL instead of compiling it.
        #[arg(long)]
        corpus: bool,
    },
    /// Compile a whole kernel (the lifted (List ...) form, or C) by phased equality saturation
    /// over the stored rules; prove it, print its costs, emit C, run it.
    Kernel {
        /// The kernel: a .c file, or the lifted (List ...) form.
        #[arg(required_unless_present = "tune")]
        file: Option<PathBuf>,
        /// dsp, x86-avx2, x86-avx512 or neon.
        #[arg(long, value_parser = choice::<KernelTarget>(), default_value = "dsp")]
        target: KernelTarget,
        /// diospyros, isaria or target (the target's instruction costs).
        #[arg(long, value_parser = choice::<CostModel>(), default_value = "target")]
        cost_model: CostModel,
        /// Seconds for equality saturation.
        #[arg(long, default_value_t = 60.0)]
        timeout: f64,
        /// Also print the C (c) or the egglog that ran (egglog).
        #[arg(long, value_parser = choice::<Emit>())]
        emit: Option<Emit>,
        /// Compile the C, run it on this many random inputs and compare with the spec.
        #[arg(long, value_name = "ITERATIONS", value_parser = cli::count(MAX_RUNS, "iterations"))]
        run: Option<usize>,
        /// The kernel rules: given (specs/dsp/, hand-written or imported from Diospyros) or
        /// synthesized (`isadb synth --dialect dsp`).
        #[arg(long, value_parser = choice::<RuleSet>(), default_value = "given")]
        rules: RuleSet,
        /// Search from the spec alone, without the structured vectorization: what the rules
        /// find by themselves.
        #[arg(long)]
        no_seed: bool,
        /// A C kernel's output arrays start as zeros, as Diospyros's lifting allocates them
        /// (`o[i] += ...` into an output never cleared), instead of holding the caller's values.
        #[arg(long)]
        zero_outputs: bool,
        /// Choose Isaria's alpha and beta for --rules by a sweep on the small kernels and record
        /// them.
        #[arg(long, conflicts_with_all = ["file", "emit", "run"])]
        tune: bool,
    },
    /// Ask which instructions implement an idiom on a target, an instruction's equivalents, ...
    Query {
        text: String,
        /// Print CSV instead of a table.
        #[arg(long)]
        csv: bool,
    },
    /// Prove two IR expressions equivalent, or give a counterexample. Names like a_u8 are variables of --lanes lanes.
    Prove {
        lhs: String,
        rhs: String,
        #[arg(long, default_value_t = 16)]
        lanes: u32,
        /// Solver budget in milliseconds.
        #[arg(long, default_value_t = isadb::DEFAULT_TIMEOUT_MS)]
        timeout: u32,
    },
    /// Prove the rewrite rules (specs/rules/ and the synthesized ones) with z3 at every type they
    /// cover, and the kernel rules of specs/dsp/ over the reals; exit 1 if one is refuted.
    VerifyRules {
        /// Only this rule.
        #[arg(long)]
        rule: Option<String>,
        /// Proof threads.
        #[arg(long, default_value_t = 1, value_parser = cli::count(MAX_JOBS, "threads"))]
        jobs: usize,
        /// Re-prove rules that already have a proven record.
        #[arg(long)]
        force: bool,
    },
    /// Select instructions for a Halide-style expression on a target through the stored rules (egglog), prove
    /// the selection equivalent with z3, and print it with its cost.
    Compile {
        /// The expression (not with --batch; it may start with '-').
        #[arg(required_unless_present = "batch", conflicts_with = "batch")]
        #[arg(allow_hyphen_values = true)]
        expr: Option<String>,
        /// x86-avx2, x86-avx512, neon or hvx (with --batch: for lines that name none).
        #[arg(long, value_parser = choice::<Target>(), required_unless_present = "batch")]
        target: Option<Target>,
        /// Compile every expression of FILE: one per line, or a JSON object per line with
        /// "expr" and optionally "target" and "lanes"; each target's rules go into egglog once
        /// per chunk of expressions, selected and proven on --jobs threads.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["lanes", "emit", "run"])]
        batch: Option<PathBuf>,
        /// Worker threads of --batch (each selects a chunk of expressions and proves it).
        #[arg(long, default_value_t = 2, value_parser = cli::count(MAX_JOBS, "threads"), requires = "batch")]
        jobs: usize,
        /// Lanes of the result (default: the widest variable fills one register).
        #[arg(long)]
        lanes: Option<u32>,
        /// A variable without a type suffix, as NAME:TYPE (e.g. z:u16); repeatable.
        #[arg(long = "var", value_name = "NAME:TYPE")]
        vars: Vec<String>,
        /// Also print the egglog program that ran (egglog) or a C function with intrinsics (c).
        #[arg(long, value_parser = choice::<Emit>())]
        emit: Option<Emit>,
        /// Compile the C function, run it (natively or under qemu) on this many iterations of random
        /// inputs and compare every lane with the interpreter; exit 1 on a mismatch.
        #[arg(long, value_name = "ITERATIONS", value_parser = cli::count(MAX_RUNS, "iterations"))]
        run: Option<usize>,
        /// Neither reuse nor record the selection in the database's selection cache.
        #[arg(long)]
        no_cache: bool,
        /// How long z3 may take to prove the selection (milliseconds per query); a selection
        /// it cannot decide in time is replaced by every lane computed in scalar code.
        #[arg(long, value_name = "MS", default_value_t = 60_000, value_parser = cli::count(86_400_000, "milliseconds"), conflicts_with = "batch")]
        proof_timeout: usize,
    },
    /// The cheapest sequence of a target's instructions proven equal to an instruction of any
    /// ISA in the database (by instruction selection over its semantics), printed as compile
    /// prints a selection.
    Port {
        /// The instruction, by name or intrinsic (e.g. _mm_avg_epu8); not with --all.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        instruction: Option<String>,
        /// x86-avx2, x86-avx512, neon or hvx.
        #[arg(long, value_parser = choice::<Target>())]
        target: Target,
        /// The value of an immediate operand of the instruction, in operand order; repeatable.
        #[arg(long = "imm", value_name = "VALUE", allow_hyphen_values = true)]
        imms: Vec<String>,
        /// Also print the egglog program that ran (egglog) or a C function with intrinsics (c).
        #[arg(long, value_parser = choice::<Emit>(), conflicts_with = "all")]
        emit: Option<Emit>,
        /// Compile the C function, run it (natively or under qemu) on this many iterations of
        /// random inputs and compare every lane with the interpreter of the instruction's
        /// semantics; exit 1 on a mismatch.
        #[arg(long, value_name = "ITERATIONS", value_parser = cli::count(MAX_RUNS, "iterations"), conflicts_with = "all")]
        run: Option<usize>,
        /// Check a translation written by hand instead of selecting one: T's intrinsics over
        /// the instruction's operands, e.g. '(vhaddq_u8 a b)'; (lanes X FIRST COUNT) and
        /// (concat X Y) move lanes. Proven, or refuted with a counterexample (exit 1).
        #[arg(long, value_name = "SEQUENCE", conflicts_with = "all")]
        check: Option<String>,
        /// Port every instruction of --from (immediates at sampled values), reusing stored
        /// results; a table of sequences and the distribution of their lengths.
        #[arg(long, requires = "from", conflicts_with = "imms")]
        all: bool,
        /// The source set of --all: ISA or ISA:FEATURE[,FEATURE...] (x86:sse2,ssse3).
        #[arg(long, value_name = "ISA[:FEATURES]")]
        from: Option<String>,
        /// Print --all's table as CSV.
        #[arg(long, requires = "all")]
        csv: bool,
        /// Port only shard K of N (sources K, K+N, ...), written as CSV to --out.
        #[arg(long, value_name = "K/N", value_parser = cli::synth::parse_shard, requires_all = ["all", "out"])]
        shard: Option<Shard>,
        /// Directory for a shard's CSV rows (merge them with `isadb db import --merge DIR`).
        #[arg(long, requires = "shard")]
        out: Option<PathBuf>,
        /// Worker threads of --all (each selects a chunk of sources and proves it).
        #[arg(long, default_value_t = 2, value_parser = cli::count(MAX_JOBS, "threads"))]
        jobs: usize,
        /// Port every source of --all again, stored or not.
        #[arg(long, requires = "all")]
        force: bool,
    },
    /// Synthesize rewrite rules (lifting and simplification by enumeration, lowering per target),
    /// prove them with z3 and store them in the database and rules.db/. Only pieces whose inputs
    /// changed are searched again.
    Synth {
        /// Largest term (nodes) of the lifting and simplification workloads.
        #[arg(long, default_value_t = SynthOptions::default().max_size, value_parser = cli::count(MAX_TERM_SIZE, "nodes"))]
        max_size: usize,
        /// Largest term (nodes) of the lowering search.
        #[arg(long, default_value_t = SynthOptions::default().lower_size, value_parser = cli::count(MAX_TERM_SIZE, "nodes"))]
        lower_size: usize,
        /// Search only shard K of N (pieces K, K+N, ...), written as CSV to --out.
        #[arg(long, value_name = "K/N", value_parser = cli::synth::parse_shard)]
        shard: Option<Shard>,
        /// Directory for a shard's CSV rows (merge them with `isadb db import --merge DIR`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Search threads.
        #[arg(long, default_value_t = 2, value_parser = cli::count(MAX_JOBS, "threads"))]
        jobs: usize,
        /// Search every piece, changed or not.
        #[arg(long)]
        force: bool,
        /// Only these element types (comma-separated, e.g. u8,i16).
        #[arg(long, value_delimiter = ',', value_parser = cli::synth::parse_search_type)]
        types: Vec<Elem>,
        /// Only these targets' lowerings (comma-separated).
        #[arg(long, value_delimiter = ',', value_parser = choice::<Target>())]
        targets: Vec<Target>,
        /// Search nothing: tell which hand-written rules the stored synthesized rules derive.
        #[arg(long)]
        rederive: bool,
        /// Synthesize the kernel rules of this dialect instead (dsp: Isaria's search over the
        /// float DSP dialect, lane-generalized, proven over the reals), and tune their phases.
        #[arg(long, value_parser = ["dsp"], conflicts_with_all = ["max_size", "lower_size", "jobs", "shard", "out", "types", "targets", "rederive"])]
        dialect: Option<String>,
    },
    /// Check instruction semantics against real execution: compile each intrinsic into a C harness, run it
    /// (natively or under qemu) and compare every result lane with the interpreter. Exit 1 on a mismatch.
    /// With ISADB_REQUIRE_TOOLS=1 a missing compiler or emulator is an error instead of a skip.
    Validate {
        /// Only this ISA: x86, neon or hvx.
        #[arg(long, value_parser = choice::<Isa>())]
        isa: Option<Isa>,
        /// Only this instruction (name or intrinsic); repeatable.
        #[arg(long = "instr", value_name = "NAME")]
        instr: Vec<String>,
        /// Inputs per instruction.
        #[arg(long, default_value_t = isadb::DEFAULT_INPUTS, value_parser = cli::count(MAX_RUNS, "inputs"))]
        inputs: usize,
        /// Seed of the input generator.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Re-run instructions whose semantics already have a recorded result.
        #[arg(long)]
        force: bool,
    },
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) if e.use_stderr() => {
            isadb::note(&format!("isadb: {}", cli::one_line(&e)));
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    let home = match Home::find(args.home) {
        Ok(home) => home,
        Err(e) => {
            isadb::note(&format!(
                "isadb: {}",
                isadb::elide_long_words(&e.to_string())
            ));
            return ExitCode::from(2);
        }
    };
    let output = if args.json {
        Output::Json
    } else {
        Output::Table
    };
    let ctx = cli::Context::new(home, output);
    let result = match args.command {
        Command::Db { action } => cli::db::run(&ctx, action),
        Command::Show { instruction } => cli::inspect::show(&ctx, &instruction),
        Command::Classes { isa, spanning } => cli::classes::classes(&ctx, isa, spanning),
        Command::List { isa, feature, grep } => {
            cli::inspect::list(&ctx, isa, feature.as_deref(), grep.as_deref())
        }
        Command::Eval {
            instruction,
            values,
        } => cli::inspect::eval(&ctx, &instruction, &values),
        Command::Query { text, csv } => cli::query::query(&ctx, &text, csv),
        Command::Bench {
            suite: None,
            rounds,
            ..
        } => cli::bench::bench(&ctx, rounds),
        Command::Bench {
            suite: Some(Suite::Totality),
            target,
            ..
        } => cli::bench::totality(&ctx, &target),
        Command::Bench {
            suite: Some(Suite::Batch),
            target,
            jobs,
            corpus,
            ..
        } => cli::bench::batch(&ctx, &target, jobs, corpus),
        Command::Bench {
            suite: Some(Suite::Kernels),
            only,
            ..
        } => cli::bench::kernels(&ctx, only.as_deref()),
        Command::Kernel {
            tune: true, rules, ..
        } => cli::kernel::tune(&ctx, rules),
        Command::Kernel {
            file,
            target,
            cost_model,
            timeout,
            emit,
            run,
            rules,
            no_seed,
            zero_outputs,
            tune: false,
        } => cli::kernel::kernel(
            &ctx,
            &file.unwrap_or_default(),
            target,
            cli::kernel::Options {
                cost_model,
                timeout_s: timeout,
                emit,
                run,
                rules,
                seed: !no_seed,
                outputs: if zero_outputs {
                    isadb::KernelOutputs::Zero
                } else {
                    isadb::KernelOutputs::Caller
                },
            },
        ),
        Command::Prove {
            lhs,
            rhs,
            lanes,
            timeout,
        } => cli::prove::prove(&ctx, &lhs, &rhs, lanes, timeout),
        Command::VerifyRules { rule, jobs, force } => cli::prove::verify_rules(
            &ctx,
            &VerifyOptions {
                rule,
                jobs,
                force,
                progress: std::io::stderr().is_terminal(),
            },
        ),
        Command::Compile {
            batch: Some(file),
            target,
            vars,
            jobs,
            ..
        } => cli::compile::batch(&ctx, &file, target, &vars, jobs),
        Command::Compile {
            expr: Some(expr),
            target: Some(target),
            lanes,
            vars,
            emit,
            run,
            no_cache,
            proof_timeout,
            ..
        } => cli::compile::compile(
            &ctx,
            &expr,
            target,
            cli::compile::Options {
                lanes,
                vars: &vars,
                emit,
                run,
                cache: !no_cache,
                proof_timeout_ms: proof_timeout as u32,
            },
        ),
        Command::Compile { .. } => Err(isadb::Error::Usage(
            "compile: give an expression and --target, or --batch FILE".into(),
        )),
        Command::Port {
            all: true,
            target,
            from,
            csv,
            shard,
            out,
            jobs,
            force,
            ..
        } => cli::port::port_all(
            &ctx,
            from.as_deref().unwrap_or_default(),
            target,
            cli::port::AllOptions {
                csv,
                shard,
                out,
                jobs,
                force,
            },
        ),
        Command::Port {
            instruction,
            target,
            imms,
            emit,
            run,
            check,
            ..
        } => cli::port::port(
            &ctx,
            instruction.as_deref().unwrap_or_default(),
            target,
            cli::port::Options {
                imms: &imms,
                emit,
                run,
                check: check.as_deref(),
            },
        ),
        Command::Synth { rederive: true, .. } => cli::synth::rederive(&ctx),
        Command::Synth {
            dialect: Some(_),
            force,
            ..
        } => cli::synth::dialect(&ctx, force),
        Command::Synth {
            max_size,
            lower_size,
            shard,
            out,
            jobs,
            force,
            types,
            targets,
            rederive: false,
            dialect: None,
        } => {
            let defaults = SynthOptions::default();
            cli::synth::synth(
                &ctx,
                SynthOptions {
                    max_size,
                    lower_size,
                    shard,
                    out,
                    jobs,
                    force,
                    types: if types.is_empty() {
                        defaults.types
                    } else {
                        types
                    },
                    targets: if targets.is_empty() {
                        defaults.targets
                    } else {
                        targets
                    },
                },
            )
        }
        Command::Validate {
            isa,
            instr,
            inputs,
            seed,
            force,
        } => cli::validate::validate(
            &ctx,
            &ValidateOptions {
                isa,
                instrs: instr,
                inputs,
                seed,
                force,
                require_tools: std::env::var("ISADB_REQUIRE_TOOLS")
                    .is_ok_and(|v| !v.is_empty() && v != "0"),
                progress: std::io::stderr().is_terminal(),
                ..ValidateOptions::default()
            },
        ),
    };
    let code: u8 = match result {
        Ok(cli::Outcome::Success) => 0,
        Ok(cli::Outcome::Negative) => 1,
        // The reader went away (`isadb list | head -1`): end quietly with the status of a
        // process killed by SIGPIPE, as the shell reports it.
        Err(isadb::Error::Stdout(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => 128 + 13,
        Err(e) => {
            isadb::note(&format!(
                "isadb: {}",
                isadb::elide_long_words(&e.to_string())
            ));
            2
        }
    };
    end_now(code)
}

/// Ends the process with `code` once its output is flushed, without running exit handlers:
/// libz3's and the thread-local z3 context's destructors took about 8 ms of every short
/// command (a `compile` is a few hundred). Every command has returned by now, so its files
/// are closed, its temporary files removed and its database writes committed.
fn end_now(code: u8) -> ! {
    use std::io::Write;
    _ = std::io::stdout().flush();
    _ = std::io::stderr().flush();
    unsafe extern "C" {
        /// POSIX `_exit(2)`, from the C library every Rust program links.
        fn _exit(code: i32) -> !;
    }
    // SAFETY: `_exit` takes any status and does not return; nothing here relies on a
    // destructor running after it.
    unsafe { _exit(i32::from(code)) }
}
