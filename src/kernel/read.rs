//! Reading the lifted `(List e0 e1 ...)` form straight into a hash-consed [`Dag`]: one pass
//! over the bytes with an explicit stack (no tree is built, however deep or large the text), so
//! qr-decomp's 280,000 printed nodes become its few hundred distinct ones as they are read.

use super::literal::{decimal, fraction};
use super::term::{Dag, Id, Op};
use crate::error::{Error, Location, Result};

/// A parsed kernel: its term graph and the root `List`, and the C function it was lifted from
/// (none for the List form).
#[derive(Clone)]
pub struct Lifted {
    pub dag: Dag,
    pub root: Id,
    pub signature: Option<Signature>,
}

/// The C function a kernel was lifted from: what a drop-in replacement takes, and the source
/// that `--run` compiles beside it.
#[derive(Clone, Debug)]
pub struct Signature {
    pub name: String,
    pub params: Vec<SourceParam>,
    /// The file's text, and where it is (for its own `#include "..."`).
    pub source: String,
    pub path: std::path::PathBuf,
}

/// One parameter of the source function.
#[derive(Clone, Debug)]
pub struct SourceParam {
    pub name: String,
    /// Its declaration in C (`const float a[2][2]`, `float *A`, `float x`).
    pub declaration: String,
    /// A float rather than an array.
    pub scalar: bool,
    /// Elements it holds: the declared size, or (unsized) as many as the kernel touches.
    pub len: usize,
    /// The elements of the kernel's List it fills, when the kernel writes it (from its first
    /// element, as many as were written or are inside its declared size).
    pub output: Option<std::ops::Range<usize>>,
    /// Written, and taken to start at zero (`--zero-outputs`) rather than at the caller's values.
    pub zeroed: bool,
}

/// Outputs of one kernel at most (Diospyros's largest, mat-mul 16x16, has 256; one compile
/// iteration grows with the square of the outputs: 1,000 take about 2 s).
pub const MAX_OUTPUTS: usize = 1024;

/// Distinct nodes of one kernel at most (qr-decomp_3, 280,000 printed, has about 150).
pub const MAX_NODES: usize = 1 << 16;

impl Lifted {
    /// The kernel read from `file` when within [`MAX_OUTPUTS`] and [`MAX_NODES`]; else an error
    /// naming the limit.
    pub fn within_limits(self, file: &str) -> Result<Lifted> {
        let outputs = self.dag.args(self.root).len();
        let nodes = self.dag.reachable(&[self.root]).len();
        if outputs > MAX_OUTPUTS {
            return Err(Error::data(
                file,
                format!("the kernel has {outputs} outputs, past isadb's limit of {MAX_OUTPUTS}"),
            ));
        }
        if nodes > MAX_NODES {
            return Err(Error::data(
                file,
                format!("the kernel has {nodes} distinct nodes, past isadb's limit of {MAX_NODES}"),
            ));
        }
        Ok(self)
    }
}

/// An open parenthesis being read: its head and operands so far, and where it started.
struct Frame {
    head: Option<String>,
    head_at: Location,
    args: Vec<Item>,
}

/// A read operand: a node or a bare symbol (the array name of a `Get`).
enum Item {
    Node(Id),
    Symbol(String, Location),
    Int(i64, Location),
}

/// Reads one `(List ...)` from `text`; `file` names it in errors.
pub fn read_list(text: &str, file: &str) -> Result<Lifted> {
    let mut dag = Dag::new();
    let bytes = text.as_bytes();
    let (mut line, mut col) = (1usize, 1usize);
    let at = |line, col| Location {
        file: file.to_string(),
        line,
        col,
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut done: Option<(Id, Location)> = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let here = at(line, col);
        if c == b'\n' {
            line += 1;
            col = 1;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            col += 1;
            continue;
        }
        if c == b';' {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if done.is_some() {
            return Err(Error::parse(&here, "text after the kernel's (List ...)"));
        }
        match c {
            b'(' => {
                stack.push(Frame {
                    head: None,
                    head_at: here,
                    args: Vec::new(),
                });
                i += 1;
                col += 1;
            }
            b')' => {
                let frame = stack
                    .pop()
                    .ok_or_else(|| Error::parse(&here, "unbalanced ')'"))?;
                let open = frame.head_at.clone();
                let id = finish(&mut dag, frame)?;
                match stack.last_mut() {
                    Some(parent) => parent.args.push(Item::Node(id)),
                    None => done = Some((id, open)),
                }
                i += 1;
                col += 1;
            }
            _ => {
                let start = i;
                while i < bytes.len()
                    && !bytes[i].is_ascii_whitespace()
                    && !matches!(bytes[i], b'(' | b')' | b';')
                {
                    i += 1;
                }
                let word = &text[start..i];
                col += word.chars().count();
                let frame = stack.last_mut().ok_or_else(|| {
                    Error::parse(&here, format!("expected '(List', found '{word}'"))
                })?;
                if frame.head.is_none() {
                    frame.head = Some(word.to_string());
                } else if let Ok(n) = word.parse::<i64>() {
                    frame.args.push(Item::Int(n, here));
                } else {
                    frame.args.push(Item::Symbol(word.to_string(), here));
                }
            }
        }
    }
    if let Some(open) = stack.last() {
        return Err(Error::parse(
            &open.head_at,
            "unclosed '(': the text ends inside this expression",
        ));
    }
    let (root, root_at) = done.ok_or_else(|| Error::parse(&at(line, col), "empty kernel"))?;
    if dag.op(root) != Op::List {
        return Err(Error::parse(
            &root_at,
            format!(
                "the kernel must be a (List ...), not ({} ...)",
                dag.op(root).name()
            ),
        ));
    }
    Ok(Lifted {
        dag,
        root,
        signature: None,
    })
}

/// Interns a closed parenthesis as a node.
fn finish(dag: &mut Dag, frame: Frame) -> Result<Id> {
    let at = frame.head_at.clone();
    let head = frame
        .head
        .ok_or_else(|| Error::parse(&at, "empty parentheses '()'"))?;
    if head == "Get" {
        return match frame.args.as_slice() {
            [Item::Symbol(name, _), Item::Int(i, iat)] => {
                let index = u32::try_from(*i)
                    .map_err(|_| Error::parse(iat, format!("array index {i} is out of range")))?;
                Ok(dag.get(name, index))
            }
            _ => Err(Error::parse(
                &at,
                "expected (Get ARRAY INDEX) with an array name and a non-negative integer",
            )),
        };
    }
    let mut args = Vec::with_capacity(frame.args.len());
    for item in frame.args {
        args.push(match item {
            Item::Node(id) => id,
            Item::Int(n, _) => dag.num(n),
            // A decimal literal (`2.5`, `1e-5`) is its exact fraction.
            Item::Symbol(s, _) if decimal(&s).is_some() => {
                fraction(dag, decimal(&s).expect("checked"))
            }
            Item::Symbol(s, sat) if s.starts_with(|c: char| c.is_ascii_digit() || c == '.') => {
                return Err(Error::parse(
                    &sat,
                    format!(
                        "number '{s}' is not a decimal whose exact fraction fits 64-bit integers"
                    ),
                ))
            }
            Item::Symbol(s, sat) => {
                return Err(Error::parse(
                    &sat,
                    format!(
                        "unexpected symbol '{s}' (scalars are literals, (Get X i) or operations)"
                    ),
                ))
            }
        });
    }
    let op = match (head.as_str(), args.len()) {
        ("-", 1) => Op::Neg,
        (name, _) => Op::named(name).ok_or_else(|| {
            Error::parse(
                &at,
                format!("unknown operator '{name}' (the dialect has + - * / neg sqrt sgn Get Vec Vec* Concat List)"),
            )
        })?,
    };
    match op.arity() {
        Some(n) if n != args.len() => {
            return Err(Error::parse(
                &at,
                format!("'{head}' takes {n} operand(s), found {}", args.len()),
            ))
        }
        None if args.is_empty() => {
            return Err(Error::parse(
                &at,
                format!("'{head}' needs at least one operand"),
            ))
        }
        _ => {}
    }
    for (k, &a) in args.iter().enumerate() {
        if op == Op::List {
            continue;
        }
        let vector_operand = op.is_vector() && op != Op::Vec;
        if dag.op(a).is_vector() != vector_operand {
            let want = if vector_operand {
                "a vector"
            } else {
                "a scalar"
            };
            return Err(Error::parse(
                &at,
                format!("operand {} of '{head}' must be {want}", k + 1),
            ));
        }
    }
    Ok(dag.add(op, &args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        read_list(text, "k.sexp")
            .err()
            .expect("an error")
            .to_string()
    }

    #[test]
    fn reads_and_shares_sub_terms() {
        let text =
            "(List (+ (* (Get A 0) (Get B 0)) (* (Get A 1) (Get B 2)))\n  (* (Get A 0) (Get B 0)))";
        let k = read_list(text, "k.sexp").unwrap();
        assert_eq!(k.dag.len(), 8);
        assert_eq!(k.dag.print(k.root), text.replace("\n  ", " "));
    }

    #[test]
    fn malformed_input_is_one_line_with_position() {
        assert_eq!(
            err("(List (+ 1 2)"),
            "k.sexp:1:1: unclosed '(': the text ends inside this expression"
        );
        assert_eq!(err("(List (foo 1))"), "k.sexp:1:7: unknown operator 'foo' (the dialect has + - * / neg sqrt sgn Get Vec Vec* Concat List)");
        assert_eq!(
            err("(List\n (Get A x))"),
            "k.sexp:2:2: expected (Get ARRAY INDEX) with an array name and a non-negative integer"
        );
        assert_eq!(
            err("(+ 1 2)"),
            "k.sexp:1:1: the kernel must be a (List ...), not (+ ...)"
        );
        assert_eq!(
            err("(List 1))"),
            "k.sexp:1:9: text after the kernel's (List ...)"
        );
        assert_eq!(
            err("(List (* 1))"),
            "k.sexp:1:7: '*' takes 2 operand(s), found 1"
        );
        assert_eq!(
            err("(List (* (Get A 0) 1e99))"),
            "k.sexp:1:20: number '1e99' is not a decimal whose exact fraction fits 64-bit integers"
        );
        assert_eq!(
            err("(List (* (Get A 0) x))"),
            "k.sexp:1:20: unexpected symbol 'x' (scalars are literals, (Get X i) or operations)"
        );
    }

    #[test]
    fn decimal_literals_are_their_exact_fractions() {
        let k = read_list("(List (* (Get A 0) 2.5) (+ (Get A 1) -1e-3))", "k.sexp").unwrap();
        assert_eq!(
            k.dag.print(k.root),
            "(List (* (Get A 0) (/ 5 2)) (+ (Get A 1) (/ -1 1000)))"
        );
    }
}
