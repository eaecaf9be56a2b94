//! The command line's bodies, apart from argument parsing (`main.rs`): one file per command
//! group, each a thin layer that calls the library, renders its typed report as a table or
//! JSON, and picks the exit code from its typed verdict.
//!
//! - [`db`]: `db build`, `db export`, `db import`, `db stats`;
//! - [`inspect`]: `show`, `list`, `eval`; [`classes`]: `classes`;
//! - [`prove`]: `prove`, `verify-rules`;
//! - [`synth`]: `synth`, `synth --rederive`;
//! - [`kernel`]: `kernel`, `kernel --tune`;
//! - [`compile`] (and `compile --batch`), [`port`], [`validate`], [`query`], [`bench`] (and
//!   `bench kernels`, `bench totality`, `bench batch`): the command of that name.

pub mod bench;
pub mod classes;
pub mod compile;
pub mod db;
pub mod inspect;
pub mod kernel;
pub mod port;
pub mod prove;
pub mod query;
pub mod synth;
pub mod validate;

use crate::error::{Error, Result};
use crate::project::{Home, Project};
use crate::spec::{Isa, Target, TARGETS};
use clap::builder::{PossibleValue, TypedValueParser};
use serde::Serialize;
use std::ffi::OsStr;
use std::io::Write;
use std::marker::PhantomData;
use std::process::ExitCode;

/// How a command ended: success, or a well-formed negative answer (not equivalent, a
/// mismatch, a refuted rule, an empty answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Success,
    /// Exit 1.
    Negative,
}

impl Outcome {
    /// Negative when `negative` holds.
    pub fn negative_if(negative: bool) -> Outcome {
        if negative {
            Outcome::Negative
        } else {
            Outcome::Success
        }
    }
}

impl From<Outcome> for ExitCode {
    fn from(o: Outcome) -> ExitCode {
        match o {
            Outcome::Success => ExitCode::SUCCESS,
            Outcome::Negative => ExitCode::from(1),
        }
    }
}

/// How reports are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Human-readable tables and lines.
    Table,
    /// Pretty-printed JSON.
    Json,
}

/// Where the project lives and how to print.
pub struct Context {
    /// The project home in use and how it was found.
    pub home: Home,
    /// The project in that home.
    pub project: Project,
    /// Table or JSON.
    pub output: Output,
}

impl Context {
    /// The context of a command run on `home`.
    pub fn new(home: Home, output: Output) -> Context {
        Context {
            project: home.project(),
            home,
            output,
        }
    }

    /// After a command wrote into the project: says so on stderr when that is the cache copy
    /// of the shipped default.
    fn note_writes(&self) {
        if let Some(note) = self.home.write_note() {
            crate::error::note(&format!("isadb: {note}"));
        }
    }

    /// Prints `value` as JSON, or the text `table` renders.
    fn print<T: Serialize>(&self, value: &T, table: impl FnOnce() -> String) -> Result<()> {
        match self.output {
            Output::Json => print_out(&format!(
                "{}\n",
                serde_json::to_string_pretty(value).unwrap_or_default()
            )),
            Output::Table => print_out(&table()),
        }
    }
}

/// Writes `text` to standard output: every command's answer goes through here, so a closed
/// pipe (`isadb list | head -1`) or a full disk is an [`Error::Stdout`] the caller returns,
/// never a panic.
pub fn print_out(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(Error::Stdout)
}

/// Left-aligned columns under a header.
pub fn render_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(headers.to_vec());
    for row in rows {
        out += &line(row.iter().map(String::as_str).collect());
    }
    out
}

/// A word the command line chooses among: clap's `ValueEnum`, with the noun its error names.
pub trait Choice: clap::ValueEnum + Clone + Send + Sync + 'static {
    /// What an unknown word is not: "target", "ISA".
    const NOUN: &'static str;
}

/// The value parser of a [`Choice`]: the possible values for `--help`, and one line for an
/// unknown word, `--target avx3: unknown target 'avx3'; one of x86-avx2, ...`.
pub fn choice<T: Choice>() -> impl TypedValueParser<Value = T> {
    ChoiceParser(PhantomData)
}

#[derive(Clone)]
struct ChoiceParser<T>(PhantomData<T>);

impl<T: Choice> TypedValueParser for ChoiceParser<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> std::result::Result<T, clap::Error> {
        let text = value.to_string_lossy();
        T::from_str(&text, false).map_err(|_| {
            let known: Vec<String> = T::value_variants()
                .iter()
                .filter_map(|v| v.to_possible_value())
                .map(|p| p.get_name().to_string())
                .collect();
            let refs: Vec<&str> = known.iter().map(String::as_str).collect();
            invalid(
                cmd,
                arg,
                &text,
                format!(
                    "unknown {} '{text}'{}; one of {}",
                    T::NOUN,
                    crate::words::did_you_mean(&text, &refs),
                    known.join(", ")
                ),
            )
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            T::value_variants()
                .iter()
                .filter_map(|v| v.to_possible_value()),
        ))
    }
}

/// The value parser of a count the command line bounds before any work starts: one line for a
/// count outside `1..=max`, `--jobs 0: 0 threads, outside isadb's limit of 1..=256 threads`.
pub fn count(max: usize, noun: &'static str) -> impl TypedValueParser<Value = usize> {
    CountParser { max, noun }
}

#[derive(Clone)]
struct CountParser {
    max: usize,
    noun: &'static str,
}

impl TypedValueParser for CountParser {
    type Value = usize;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> std::result::Result<usize, clap::Error> {
        let text = value.to_string_lossy();
        let range = format!("1..={} {}", self.max, self.noun);
        let message = match text.parse::<u128>() {
            Ok(n) if (1..=self.max as u128).contains(&n) => return Ok(n as usize),
            Ok(n) => format!("{n} {}, outside isadb's limit of {range}", self.noun),
            Err(_) => format!("not a count of {range}"),
        };
        Err(invalid(cmd, arg, &text, message))
    }
}

/// The one-line error of a bad command-line value: `--FLAG TEXT: MESSAGE`.
fn invalid(
    cmd: &clap::Command,
    arg: Option<&clap::Arg>,
    text: &str,
    message: String,
) -> clap::Error {
    let flag = arg
        .and_then(|a| a.get_long())
        .map_or(String::new(), |l| format!("--{l} {text}: "));
    clap::Error::raw(
        clap::error::ErrorKind::InvalidValue,
        format!("{flag}{message}"),
    )
    .with_cmd(cmd)
}

/// Makes a `text_enum!` type a [`Choice`]: its words are clap's possible values.
macro_rules! text_choice {
    ($ty:ty, $noun:literal) => {
        impl clap::ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                <$ty>::ALL
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(self.as_str()))
            }
        }

        impl $crate::cli::Choice for $ty {
            const NOUN: &'static str = $noun;
        }
    };
}
use text_choice;

text_choice!(Isa, "ISA");

impl clap::ValueEnum for Target {
    fn value_variants<'a>() -> &'a [Self] {
        &TARGETS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name))
    }
}

impl Choice for Target {
    const NOUN: &'static str = "target";
}

/// One line for a command-line error: clap's message without its usage and help trailer, its
/// lines joined.
pub fn one_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    let body = ["\n\nUsage:", "\n\nFor more information", "\nUsage:"]
        .iter()
        .filter_map(|m| text.find(m))
        .min()
        .map_or(text, |i| &text[..i]);
    body.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The result of a command: its outcome, or an error printed as one line (exit 2).
pub type CommandResult = Result<Outcome>;
