//! The C front end: a kernel written plainly in a C subset (fixed-size `float` arrays, `for`
//! loops with constant bounds, `if` on loop indices, `+ - * /`, `sqrtf`, the uninterpreted `sgn`,
//! small helper functions) lifted to the `(List ...)` form by symbolic evaluation, as Diospyros
//! does with Rosette: loops unrolled, indices computed, every float a term of the dialect. The
//! kernel is the last `void` function defined; its array parameters that it writes are its
//! outputs (in parameter order, row-major), the others its inputs. Anything outside the subset
//! is a one-line error with line and column.

mod ast;
mod eval;
mod lex;
mod parse;

use super::read::Lifted;
use crate::error::Result;
pub use eval::Outputs;

/// Lifts C source text to the List form, its output arrays starting as `outputs` says.
pub fn lift(text: &str, file: &str, outputs: Outputs) -> Result<Lifted> {
    let toks = lex::lex(text, file)?;
    let unit = parse::parse(&toks, file)?;
    let mut lifted = eval::lift(&unit, file, outputs)?;
    if let Some(s) = &mut lifted.signature {
        s.source = text.to_string();
        s.path = file.into();
    }
    Ok(lifted)
}

#[cfg(test)]
mod tests {
    use super::{lift, Outputs};

    /// The one-line error of lifting `text` (as `k.c`).
    fn error(text: &str) -> String {
        lift(text, "k.c", Outputs::Caller)
            .err()
            .expect("an error")
            .to_string()
    }

    #[test]
    fn macros_outside_the_subset_are_one_line_errors_at_their_place() {
        assert_eq!(
            error("#define SQ(x) ((x) * (x))\nvoid kernel(float a[1], float o[1]) { o[0] = a[0]; }\n"),
            "k.c:1:1: function-like macro SQ(...) is outside the kernel subset (object-like #define NAME TOKENS only)"
        );
        assert_eq!(
            error("#ifdef N\n#endif\n"),
            "k.c:1:1: #ifdef is outside the kernel subset (#include, #pragma, #define NAME TOKENS and #undef only)"
        );
        assert_eq!(
            error("#define N 2 @\n"),
            "k.c:1:13: unexpected character '@'"
        );
        // A macro's tokens take the place of its use.
        assert_eq!(
            error("#define N 0\nvoid kernel(float a[N], float o[1]) { o[0] = a[0]; }\n"),
            "k.c:2:21: an array parameter's size must be a positive integer constant"
        );
        assert_eq!(
            error("int N = 2;\nvoid kernel(float a[2], float o[2]) { o[0] = a[0]; }\n"),
            "k.c:1:1: global 'N': only global constants (const int or const float NAME = VALUE;) are in the kernel subset"
        );
        assert_eq!(
            error(
                "const int N = 2;\nvoid kernel(float a[2], float o[2]) { N = 3; o[0] = a[0]; }\n"
            ),
            "k.c:2:39: 'N' is a global constant: it cannot be assigned"
        );
        assert_eq!(
            error("void kernel(float a[1], float o[1]) { o[0] = pow(a[0], a[0]); }"),
            "k.c:1:56: pow's exponent must be an integer constant from 0 to 16"
        );
        // Macros that each use another twice would expand to 2^24 tokens: an error, not a hang.
        let mut doubling = String::from("#define M0 1 +\n");
        for k in 1..=24 {
            doubling.push_str(&format!("#define M{k} M{} M{}\n", k - 1, k - 1));
        }
        doubling.push_str("void kernel(float a[1], float o[1]) { o[0] = M24 a[0]; }\n");
        assert_eq!(
            error(&doubling),
            "k.c:26:46: the file expands to more than 262144 tokens (isadb's limit)"
        );
        // `#undef` ends a macro: N is an unknown name again.
        assert!(error(
            "#define N 2\n#undef N\nvoid kernel(float a[N], float o[1]) { o[0] = a[0]; }\n"
        )
        .starts_with("k.c:3:21: "));
    }

    /// Memory as Diospyros's C uses it: brace initializers (nested rows, zeros after the last),
    /// pointer parameters sized by the elements touched, `&a[i]` and `p + k`, `memset`.
    #[test]
    fn initializers_and_pointers_lift_as_c_computes() {
        let printed = |text: &str| {
            let k = lift(text, "k.c", Outputs::Caller).unwrap();
            k.dag.print(k.root)
        };
        assert_eq!(
            printed("void k(float a[2], float o[4]) { float m[][2] = {{a[0]}, {a[1], 3}}; for (int i = 0; i < 4; i++) o[i] = m[i / 2][i % 2]; }"),
            "(List (Get a 0) 0 (Get a 1) 3)"
        );
        assert_eq!(
            printed("void k(float *a, float *o) { float *p = &a[1]; float *q = o + 1; for (int i = 0; i < 2; i++) q[i] = p[i] * 2; }"),
            "(List (Get o 0) (* (Get a 1) 2) (* (Get a 2) 2))"
        );
        assert_eq!(
            printed("void k(float a[3], float o[3]) { memcpy(o, a, sizeof(float) * 3); memset(o + 1, 0, 2 * sizeof(float)); }"),
            "(List (Get a 0) 0 0)"
        );
    }

    #[test]
    fn memory_outside_c_or_the_subset_is_a_one_line_error() {
        let kernel = |body: &str| format!("void k(float a[2], float o[2]) {{\n{body}\n}}\n");
        for (body, want) in [
            (
                "float *t = (float *)malloc(2 * sizeof(float)); o[0] = t[1];",
                "k.c:2:55: element 1 of a malloc'd array is read before it is written",
            ),
            (
                "float t[2]; memcpy(t, a, 3 * sizeof(float));",
                "k.c:2:28: memcpy of 3 floats runs past the end of its array (2 left)",
            ),
            (
                "float *p = a + 3; o[0] = p[0];",
                "k.c:2:14: pointer arithmetic past the ends of its array",
            ),
            (
                "o[0] = *a;",
                "k.c:2:8: '*' of a pointer is outside the kernel subset (index it: p[0])",
            ),
            (
                "float x[2] = {1, 2, 3}; o[0] = x[0];",
                "k.c:2:21: too many initializers for the array",
            ),
            (
                "int *p = 0;",
                "k.c:2:1: 'p': only float pointers (float *p) are in the kernel subset",
            ),
            (
                "o[0] = sizeof(a);",
                "k.c:2:8: sizeof of an expression is outside the kernel subset (write sizeof(float))",
            ),
        ] {
            assert_eq!(error(&kernel(body)), want);
        }
        // Copies count as steps: a loop of large copies stops at the step limit, not hours later.
        assert_eq!(
            error("void k(float *a, float *o) {\n  for (int i = 0; i < 100000; i++) memcpy(o, a, 4 * 1000000);\n}\n"),
            "k.c:2:36: the kernel unrolls to more than 2000000 steps"
        );
        assert_eq!(
            error("void k(float a[2], float o[2]) __attribute__((always_inline) { o[0] = a[0]; }"),
            "k.c:1:32: __attribute__ without its closing ')'"
        );
    }

    /// A test's `main` beside the kernel (strings, `printf`) is skipped; a body outside the
    /// subset is an error where the kernel runs it, at its own place.
    #[test]
    fn bodies_outside_the_subset_matter_only_where_the_kernel_runs_them() {
        let kernel = "void k(float a[2], float o[2]) { o[0] = a[0] * a[1]; o[1] = a[1]; }\n";
        let main = "int main(void) {\n  float a[2] = {1, 2}, o[2];\n  k(a, o);\n  printf(\"%f %c\\n\", o[0], 'x');\n  return 0;\n}\n";
        let k = lift(
            &format!("#include <stdio.h>\n{kernel}{main}"),
            "k.c",
            Outputs::Caller,
        )
        .unwrap();
        assert_eq!(
            k.dag.print(k.root),
            "(List (* (Get a 0) (Get a 1)) (Get a 1))"
        );
        assert_eq!(
            error("float h(float x) {\n  while (x > 0) x = x - 1;\n  return x;\n}\nvoid k(float a[1], float o[1]) { o[0] = h(a[0]); }\n"),
            "k.c:2:3: 'while' is outside the kernel subset (for loops with constant bounds, if on loop indices)"
        );
        assert_eq!(
            error("void k(float a[1], float o[1]) {\n  o[0] = \"a\";\n}\n"),
            "k.c:2:10: expected an expression, found \"a\""
        );
        assert_eq!(
            error("void k(float a[1], float o[1]) { o[0] = a[0]; }\nint main(void) { printf(\"x); }\n"),
            "k.c:2:25: unterminated literal"
        );
    }
}
