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
