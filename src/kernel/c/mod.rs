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

/// Lifts C source text to the List form.
pub fn lift(text: &str, file: &str) -> Result<Lifted> {
    let toks = lex::lex(text, file)?;
    let unit = parse::parse(&toks, file)?;
    eval::lift(&unit, file)
}

#[cfg(test)]
mod tests {
    use super::lift;
    use crate::kernel::family::{conv, mat_mul};

    fn printed(text: &str) -> String {
        let k = lift(text, "k.c").unwrap();
        k.dag.print(k.root)
    }

    /// Diospyros's C benchmarks size their arrays with macros of constant expressions.
    #[test]
    fn object_like_macros_and_constant_sizes_lift_as_the_literal_kernel() {
        let mm = "#define A_ROWS 2\n#define A_COLS 3\n#define B_COLS A_COLS\n#define A_SIZE (A_ROWS * A_COLS)\n\
void matrix_multiply(float A[A_SIZE], float B[A_COLS * B_COLS], float C[A_ROWS * B_COLS]) {\n\
  for (int y = 0; y < A_ROWS; y++)\n    for (int x = 0; x < B_COLS; x++) {\n\
      C[B_COLS * y + x] = 0;\n      for (int k = 0; k < A_COLS; k++)\n\
        C[B_COLS * y + x] += A[A_COLS * y + k] * B[B_COLS * k + x];\n    }\n}\n";
        assert_eq!(printed(mm), printed(&mat_mul(2, 3, 3).c));
        let conv2d = "#define I_ROWS 3\n#define I_COLS 3\n#define F_ROWS 2\n#define F_COLS 2\n\
#define O_ROWS ((I_ROWS + F_ROWS) - 1)\n#define O_COLS ((I_COLS + F_COLS) - 1)\n\
void convolution(float I[I_ROWS][I_COLS], float F[F_ROWS][F_COLS], float O[O_ROWS][O_COLS]) {\n\
  for (int r = 0; r < O_ROWS; r++)\n    for (int c = 0; c < O_COLS; c++) {\n      O[r][c] = 0.0f;\n\
      for (int i = 0; i < F_ROWS; i++)\n        for (int j = 0; j < F_COLS; j++) {\n\
          int fx = F_ROWS - 1 - i;\n          int fy = F_COLS - 1 - j;\n\
          if (r - fx >= 0 && r - fx < I_ROWS && c - fy >= 0 && c - fy < I_COLS)\n\
            O[r][c] += I[r - fx][c - fy] * F[fx][fy];\n        }\n    }\n}\n";
        assert_eq!(printed(conv2d), printed(&conv(3, 3, 2, 2).c));
        // Global constants size arrays and bound loops; a helper sees them too.
        let globals = "static const int N = 2;\nconst int NN = N * N;\nconst float ONE = 1.0f;\n\
float one(float x) { return x * ONE; }\n\
void kernel(float A[NN], float B[NN], float C[NN]) {\n  for (int r = 0; r < N; r++)\n\
    for (int c = 0; c < N; c++) {\n      float s = 0.0f;\n\
      for (int k = 0; k < N; k++) s += one(A[r * N + k]) * B[k * N + c];\n      C[r * N + c] = s;\n    }\n}\n";
        assert_eq!(printed(globals), printed(&mat_mul(2, 2, 2).c));
        // `pow` by a constant exponent is the product.
        let squares = |f: &str| {
            printed(&format!(
                "void kernel(float a[2], float o[2]) {{ o[0] = {f}; o[1] = pow(a[1], 0) + a[0]; }}"
            ))
        };
        assert_eq!(
            squares("powf(a[0], 2.0f) * pow(a[1], 3)"),
            squares("a[0] * a[0] * (a[1] * a[1] * a[1])")
        );
    }

    #[test]
    fn macros_outside_the_subset_are_one_line_errors_at_their_place() {
        let error = |text: &str| lift(text, "k.c").err().expect("an error").to_string();
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
}
