//! The drop-in replacement of a kernel lifted from C: a function with the source's own name and
//! parameters that calls the vectorized one (inputs, then one flat `out`) and copies each output
//! array's elements back from it.

use crate::kernel::read::Signature;
use std::fmt::Write;

/// Names the harness of `--run` defines beside the drop-in: a source function so named keeps
/// only the flat function.
const TAKEN: [&str; 2] = ["main", "spec"];

/// The flat function's name: `kernel`, or `NAME_isadb` beside a drop-in `NAME`.
pub fn flat_name(signature: Option<&Signature>) -> String {
    match signature.filter(|s| has_drop_in(s)) {
        Some(s) => format!("{}_isadb", s.name),
        None => "kernel".to_string(),
    }
}

/// Whether the source function gets a drop-in (its name is free beside the harness's).
pub fn has_drop_in(signature: &Signature) -> bool {
    !TAKEN.contains(&signature.name.as_str()) && !signature.name.starts_with("h_")
}

/// The parameter list of the source function, as declared.
pub fn parameters(signature: &Signature) -> String {
    let declared: Vec<&str> = signature
        .params
        .iter()
        .map(|p| p.declaration.as_str())
        .collect();
    if declared.is_empty() {
        "void".to_string()
    } else {
        declared.join(", ")
    }
}

/// The drop-in: `inputs` are the flat function's input arrays (name, length), `outputs` the
/// length of its `out`.
pub fn drop_in(signature: &Signature, inputs: &[(String, usize)], outputs: usize) -> String {
    let flat = flat_name(Some(signature));
    // The flat outputs' local array, named apart from the parameters (often `out` themselves).
    let mut local = "isadb_out".to_string();
    while signature.params.iter().any(|p| p.name == local) {
        local.push('_');
    }
    let args: Vec<String> = inputs
        .iter()
        .map(|(name, _)| {
            let scalar = signature.params.iter().any(|p| p.name == *name && p.scalar);
            if scalar {
                format!("&{name}")
            } else {
                format!("(const float *){name}")
            }
        })
        .chain([local.clone()])
        .collect();
    let mut c = String::new();
    writeln!(
        c,
        "/* {}'s drop-in replacement (its parameters as {} declares them). */",
        signature.name,
        signature.path.display()
    )
    .expect("string write");
    writeln!(c, "void {}({}) {{", signature.name, parameters(signature)).expect("string write");
    writeln!(c, "  float {local}[{}];", outputs.max(1)).expect("string write");
    writeln!(c, "  {flat}({});", args.join(", ")).expect("string write");
    for p in &signature.params {
        if let Some(filled) = &p.output {
            writeln!(
                c,
                "  memcpy((float *){}, {local} + {}, sizeof(float) * {});",
                p.name,
                filled.start,
                filled.len()
            )
            .expect("string write");
        }
    }
    c.push_str("}\n");
    c
}
