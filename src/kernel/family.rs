//! The benchmark kernels, written plainly in C from the definitions in the shared kernels'
//! README (mat-mul, 2d-conv, q-prod, qr-decomp): the C front end lifts them to the List form,
//! and the same C, compiled by gcc, is the baseline the emitted code is timed against.

/// One kernel of a family at one size.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// `mat-mul_2x2_2x2`, `2d-conv_3x3_2x2`, `q-prod`, `qr-decomp_3`.
    pub name: String,
    /// `mat-mul`, `2d-conv`, `q-prod` or `qr-decomp`.
    pub family: &'static str,
    /// The kernel as C (`void kernel(...)`), inputs then outputs.
    pub c: String,
    /// Input and output arrays with their lengths, in parameter order.
    pub inputs: Vec<(String, usize)>,
    /// Output arrays with their lengths.
    pub outputs: Vec<(String, usize)>,
}

/// mat-mul `RxK_KxC`: C = A * B, row-major, summed in k order.
pub fn mat_mul(r: usize, k: usize, c: usize) -> Kernel {
    let code = format!(
        "void kernel(float A[{ak}], float B[{bk}], float C[{ck}]) {{
  for (int r = 0; r < {r}; r++) {{
    for (int c = 0; c < {c}; c++) {{
      C[r * {c} + c] = 0.0f;
      for (int k = 0; k < {k}; k++) {{
        C[r * {c} + c] += A[r * {k} + k] * B[k * {c} + c];
      }}
    }}
  }}
}}
",
        ak = r * k,
        bk = k * c,
        ck = r * c
    );
    Kernel {
        name: format!("mat-mul_{r}x{k}_{k}x{c}"),
        family: "mat-mul",
        c: code,
        inputs: vec![("A".into(), r * k), ("B".into(), k * c)],
        outputs: vec![("C".into(), r * c)],
    }
}

/// 2d-conv `IRxIC_FRxFC`: full convolution, output (IR+FR-1) x (IC+FC-1).
pub fn conv(ir: usize, ic: usize, fr: usize, fc: usize) -> Kernel {
    let (or, oc) = (ir + fr - 1, ic + fc - 1);
    let code = format!(
        "void kernel(float I[{ik}], float F[{fk}], float O[{ok}]) {{
  for (int r = 0; r < {or}; r++) {{
    for (int c = 0; c < {oc}; c++) {{
      O[r * {oc} + c] = 0.0f;
      for (int i = 0; i < {fr}; i++) {{
        for (int j = 0; j < {fc}; j++) {{
          int fx = {fr} - 1 - i;
          int fy = {fc} - 1 - j;
          int x = r - fx;
          int y = c - fy;
          if (x >= 0 && x < {ir} && y >= 0 && y < {ic}) {{
            O[r * {oc} + c] += I[x * {ic} + y] * F[fx * {fc} + fy];
          }}
        }}
      }}
    }}
  }}
}}
",
        ik = ir * ic,
        fk = fr * fc,
        ok = or * oc
    );
    Kernel {
        name: format!("2d-conv_{ir}x{ic}_{fr}x{fc}"),
        family: "2d-conv",
        c: code,
        inputs: vec![("I".into(), ir * ic), ("F".into(), fr * fc)],
        outputs: vec![("O".into(), or * oc)],
    }
}

/// q-prod: the Hamilton product of two quaternions (x, y, z, w) and the rotation of a point by
/// the first plus its translation.
pub fn q_prod() -> Kernel {
    let code = "void cross(float a[3], float b[3], float o[3]) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}

void kernel(float aq[4], float at[3], float bq[4], float bt[3], float rq[4], float rt[3]) {
  rq[0] = aq[3] * bq[0] + aq[0] * bq[3] + aq[1] * bq[2] - aq[2] * bq[1];
  rq[1] = aq[3] * bq[1] + aq[1] * bq[3] + aq[2] * bq[0] - aq[0] * bq[2];
  rq[2] = aq[3] * bq[2] + aq[2] * bq[3] + aq[0] * bq[1] - aq[1] * bq[0];
  rq[3] = aq[3] * bq[3] - aq[0] * bq[0] - aq[1] * bq[1] - aq[2] * bq[2];
  float t[3];
  cross(aq, bt, t);
  for (int i = 0; i < 3; i++) {
    t[i] = 2.0f * t[i];
  }
  float u[3];
  cross(aq, t, u);
  for (int i = 0; i < 3; i++) {
    rt[i] = bt[i] + aq[3] * t[i] + u[i] + at[i];
  }
}
"
    .to_string();
    Kernel {
        name: "q-prod".into(),
        family: "q-prod",
        c: code,
        inputs: vec![
            ("aq".into(), 4),
            ("at".into(), 3),
            ("bq".into(), 4),
            ("bt".into(), 3),
        ],
        outputs: vec![("rq".into(), 4), ("rt".into(), 3)],
    }
}

/// qr-decomp `N`: Householder QR of an N x N matrix (outputs Q then R).
pub fn qr_decomp(n: usize) -> Kernel {
    let nn = n * n;
    let code = format!(
        "float sgn(float v) {{ return (float)((v > 0.0f) - (v < 0.0f)); }}

float norm(float x[], int m) {{
  float s = 0.0f;
  for (int i = 0; i < m; i++) {{
    s += x[i] * x[i];
  }}
  return sqrtf(s);
}}

void matmul(float a[], float b[], float c[]) {{
  for (int y = 0; y < {n}; y++) {{
    for (int x = 0; x < {n}; x++) {{
      c[{n} * y + x] = 0.0f;
      for (int k = 0; k < {n}; k++) {{
        c[{n} * y + x] += a[{n} * y + k] * b[{n} * k + x];
      }}
    }}
  }}
}}

void kernel(float A[{nn}], float Q[{nn}], float R[{nn}]) {{
  for (int i = 0; i < {nn}; i++) {{
    R[i] = A[i];
  }}
  for (int k = 0; k < {n} - 1; k++) {{
    int m = {n} - k;
    float x[{n}];
    float e[{n}];
    for (int i = 0; i < m; i++) {{
      x[i] = R[(k + i) * {n} + k];
      e[i] = (k + i == k) ? 1.0f : 0.0f;
    }}
    float alpha = -sgn(x[0]) * norm(x, m);
    float u[{n}];
    float v[{n}];
    for (int i = 0; i < m; i++) {{
      u[i] = x[i] + alpha * e[i];
    }}
    float nu = norm(u, m);
    for (int i = 0; i < m; i++) {{
      v[i] = u[i] / nu;
    }}
    float qt[{nn}];
    for (int i = 0; i < {n}; i++) {{
      for (int j = 0; j < {n}; j++) {{
        if (i < k || j < k) {{
          qt[i * {n} + j] = (i == j) ? 1.0f : 0.0f;
        }} else {{
          qt[i * {n} + j] = ((i == j) ? 1.0f : 0.0f) - 2.0f * v[i - k] * v[j - k];
        }}
      }}
    }}
    float res[{nn}];
    if (k == 0) {{
      for (int i = 0; i < {nn}; i++) {{
        Q[i] = qt[i];
      }}
      matmul(qt, A, R);
    }} else {{
      matmul(qt, Q, res);
      for (int i = 0; i < {nn}; i++) {{
        Q[i] = res[i];
      }}
      matmul(qt, R, res);
      for (int i = 0; i < {nn}; i++) {{
        R[i] = res[i];
      }}
    }}
  }}
  for (int i = 0; i < {n}; i++) {{
    for (int j = i + 1; j < {n}; j++) {{
      float tmp = Q[i * {n} + j];
      Q[i * {n} + j] = Q[j * {n} + i];
      Q[j * {n} + i] = tmp;
    }}
  }}
}}
"
    );
    Kernel {
        name: format!("qr-decomp_{n}"),
        family: "qr-decomp",
        c: code,
        inputs: vec![("A".into(), nn)],
        outputs: vec![("Q".into(), nn), ("R".into(), nn)],
    }
}

/// Every kernel of the Diospyros and Isaria evaluations, smallest first within a family.
pub fn all() -> Vec<Kernel> {
    let mut out: Vec<Kernel> = [
        (2, 2, 2),
        (2, 3, 3),
        (3, 3, 3),
        (4, 4, 4),
        (8, 8, 8),
        (10, 10, 10),
        (16, 16, 16),
        (20, 20, 20),
    ]
    .iter()
    .map(|&(r, k, c)| mat_mul(r, k, c))
    .collect();
    for (ir, ic, fr, fc) in [
        (3, 3, 2, 2),
        (3, 3, 3, 3),
        (3, 5, 3, 3),
        (4, 4, 3, 3),
        (8, 8, 3, 3),
        (10, 10, 2, 2),
        (10, 10, 3, 3),
        (10, 10, 4, 4),
        (16, 16, 2, 2),
        (16, 16, 3, 3),
        (16, 16, 4, 4),
    ] {
        out.push(conv(ir, ic, fr, fc));
    }
    out.push(q_prod());
    out.push(qr_decomp(3));
    out.push(qr_decomp(4));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::c::{lift, Outputs};

    /// The C, lifted, is the peers' input exactly (the shared kernels' files, inlined).
    #[test]
    fn c_lifts_to_the_peers_list_form() {
        let m = lift(&mat_mul(2, 2, 2).c, "mm.c", Outputs::Caller).unwrap();
        assert_eq!(
            m.dag.print(m.root),
            "(List (+ (* (Get A 0) (Get B 0)) (* (Get A 1) (Get B 2))) (+ (* (Get A 0) (Get B 1)) (* (Get A 1) (Get B 3))) (+ (* (Get A 2) (Get B 0)) (* (Get A 3) (Get B 2))) (+ (* (Get A 2) (Get B 1)) (* (Get A 3) (Get B 3))))"
        );
        let c = lift(&conv(3, 3, 2, 2).c, "conv.c", Outputs::Caller).unwrap();
        assert!(c.dag.print(c.root).starts_with(
            "(List (* (Get I 0) (Get F 0)) (+ (* (Get I 0) (Get F 1)) (* (Get I 1) (Get F 0))) (+ (* (Get I 1) (Get F 1)) (* (Get I 2) (Get F 0))) (* (Get I 2) (Get F 1)) (+ (* (Get I 0) (Get F 2)) (* (Get I 3) (Get F 0))) (+ (* (Get I 0) (Get F 3)) (+ (* (Get I 1) (Get F 2)) (+ (* (Get I 3) (Get F 1)) (* (Get I 4) (Get F 0)))))"
        ));
    }

    fn printed(text: &str) -> String {
        let k = lift(text, "k.c", Outputs::Caller).unwrap();
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

    /// Diospyros's C benchmarks as written: `always_inline` prototypes, brace initializers,
    /// pointer parameters sized by use, `calloc`/`memcpy`/`free` and pointer casts.
    #[test]
    fn diospyros_c_as_written_lifts_as_the_family() {
        let quaternions = "#include <math.h>\n#define SIZE 4\n\
void cross_product(float lhs[3], float rhs[3], float result[3])\n    __attribute__((always_inline));\n\
void cross_product(float lhs[3], float rhs[3], float result[3]) {\n\
  result[0] = lhs[1] * rhs[2] - lhs[2] * rhs[1];\n  result[1] = lhs[2] * rhs[0] - lhs[0] * rhs[2];\n\
  result[2] = lhs[0] * rhs[1] - lhs[1] * rhs[0];\n}\n\
void point_product(float q_in[4], float p_in[4], float result[4]) {\n\
  float qvec[3] = {q_in[0], q_in[1], q_in[2]};\n  float uv[3];\n  cross_product(qvec, p_in, uv);\n\
  for (int i = 0; i < 3; i++) uv[i] = 2 * uv[i];\n  float qxuv[3];\n  cross_product(qvec, uv, qxuv);\n\
  for (int i = 0; i < 3; i++) result[i] = p_in[i] + q_in[3] * uv[i] + qxuv[i];\n}\n\
void naive_quaternion_product(float a_q[4], float a_t[3], float b_q[4], float b_t[3], float r_q[4], float r_t[3]) {\n\
  r_q[3] = a_q[3] * b_q[3] - a_q[0] * b_q[0] - a_q[1] * b_q[1] - a_q[2] * b_q[2];\n\
  r_q[0] = a_q[3] * b_q[0] + a_q[0] * b_q[3] + a_q[1] * b_q[2] - a_q[2] * b_q[1];\n\
  r_q[1] = a_q[3] * b_q[1] + a_q[1] * b_q[3] + a_q[2] * b_q[0] - a_q[0] * b_q[2];\n\
  r_q[2] = a_q[3] * b_q[2] + a_q[2] * b_q[3] + a_q[0] * b_q[1] - a_q[1] * b_q[0];\n\
  point_product(a_q, b_t, r_t);\n  for (int i = 0; i < 3; i++) r_t[i] += a_t[i];\n}\n";
        let renamed = |s: String| {
            s.replace("a_q", "aq")
                .replace("a_t", "at")
                .replace("b_q", "bq")
                .replace("b_t", "bt")
        };
        assert_eq!(renamed(printed(quaternions)), printed(&q_prod().c));
        // Householder QR with the identity, the Householder vectors and each step's Q in
        // calloc'd memory, R copied from A by memcpy, the kernel's pointers sized by use.
        let qr = "#include <math.h>\n#include <stdlib.h>\n#include <string.h>\n#define SIZE 3\n\
float sgn(float v) __attribute__((always_inline));\n\
float naive_norm(float *x, int m) __attribute__((always_inline));\n\
float sgn(float v) { return (v > 0) - (v < 0); }\n\
float naive_norm(float *x, int m) {\n  float sum = 0;\n  for (int i = 0; i < m; i++) sum += x[i] * x[i];\n  return sqrtf(sum);\n}\n\
void naive_fixed_transpose(float *a) {\n  for (int i = 0; i < SIZE; i++)\n    for (int j = i + 1; j < SIZE; j++) {\n\
      float tmp = a[i * SIZE + j];\n      a[i * SIZE + j] = a[j * SIZE + i];\n      a[j * SIZE + i] = tmp;\n    }\n}\n\
void naive_fixed_matrix_multiply(float *a, float *b, float *c) {\n\
  for (int y = 0; y < SIZE; y++)\n    for (int x = 0; x < SIZE; x++) {\n      c[SIZE * y + x] = 0;\n\
      for (int k = 0; k < SIZE; k++) c[SIZE * y + x] += a[SIZE * y + k] * b[SIZE * k + x];\n    }\n}\n\
void naive_fixed_qr_decomp(float *A, float *Q, float *R) {\n\
  memcpy(R, A, sizeof(float) * SIZE * SIZE);\n\
  float *I = (float *)calloc(sizeof(float), SIZE * SIZE);\n\
  for (int i = 0; i < SIZE; i++)\n    for (int j = 0; j < SIZE; j++) I[i * SIZE + j] = (i == j);\n\
  for (int k = 0; k < SIZE - 1; k++) {\n    int m = SIZE - k;\n\
    float *x = (float *)calloc(sizeof(float), m);\n    float *e = (float *)calloc(sizeof(float), m);\n\
    for (int i = 0; i < m; i++) {\n      int row = k + i;\n      x[i] = R[row * SIZE + k];\n      e[i] = I[row * SIZE + k];\n    }\n\
    float alpha = -sgn(x[0]) * naive_norm(x, m);\n\
    float *u = (float *)calloc(sizeof(float), m);\n    float *v = (float *)calloc(sizeof(float), m);\n\
    for (int i = 0; i < m; i++) u[i] = x[i] + alpha * e[i];\n\
    float norm_u = naive_norm(u, m);\n\
    for (int i = 0; i < m; i++) v[i] = u[i] / (norm_u + 0.0f);\n\
    float *q_min = (float *)calloc(sizeof(float), m * m);\n\
    for (int i = 0; i < m; i++)\n      for (int j = 0; j < m; j++) {\n\
        float q_min_i = ((i == j) ? 1.0 : 0.0) - 2 * v[i] * v[j];\n        q_min[i * m + j] = q_min_i;\n      }\n\
    float *q_t = (float *)calloc(sizeof(float), SIZE * SIZE);\n\
    for (int i = 0; i < SIZE; i++)\n      for (int j = 0; j < SIZE; j++) {\n        float q_t_i;\n\
        if ((i < k) || (j < k)) {\n          q_t_i = (i == j) ? 1.0 : 0.0;\n        } else {\n\
          q_t_i = q_min[(i - k) * m + (j - k)];\n        }\n        q_t[i * SIZE + j] = q_t_i;\n      }\n\
    if (k == 0) {\n      memcpy(Q, q_t, sizeof(float) * SIZE * SIZE);\n      naive_fixed_matrix_multiply(q_t, A, R);\n\
    } else {\n      float *res = (float *)calloc(sizeof(float), SIZE * SIZE);\n\
      naive_fixed_matrix_multiply(q_t, Q, res);\n      memcpy(Q, res, sizeof(float) * SIZE * SIZE);\n\
      naive_fixed_matrix_multiply(q_t, R, res);\n      memcpy(R, res, sizeof(float) * SIZE * SIZE);\n      free(res);\n    }\n\
    free(x);\n    free(e);\n    free(u);\n    free(v);\n    free(q_min);\n    free(q_t);\n  }\n\
  naive_fixed_transpose(Q);\n}\n";
        assert_eq!(printed(qr), printed(&qr_decomp(3).c));
    }

    /// The Diospyros paper's 2d-conv accumulates into an output it never clears: with its
    /// outputs starting at zero it is the family's kernel; as C reads it, each output adds the
    /// caller's value.
    #[test]
    fn accumulating_into_outputs_lifts_by_the_outputs_convention() {
        let paper = "void conv(float in[3][3], float f[2][2], float o[4][4]) {\n\
  for (int oRow = 0; oRow < 4; oRow++)\n    for (int oCol = 0; oCol < 4; oCol++)\n\
      for (int fRow = 0; fRow < 2; fRow++)\n        for (int fCol = 0; fCol < 2; fCol++) {\n\
          int fRT = 2 - 1 - fRow;\n          int fCT = 2 - 1 - fCol;\n\
          int iRow = oRow - fRT;\n          int iCol = oCol - fCT;\n\
          if (iRow >= 0 && iRow < 3 && iCol >= 0 && iCol < 3)\n\
            o[oRow][oCol] += in[iRow][iCol] * f[fRT][fCT];\n        }\n}\n";
        let lifted = |outputs| {
            let k = lift(paper, "conv.c", outputs).unwrap();
            k.dag
                .print(k.root)
                .replace("Get in ", "Get I ")
                .replace("Get f ", "Get F ")
        };
        assert_eq!(lifted(Outputs::Zero), printed(&conv(3, 3, 2, 2).c));
        assert!(lifted(Outputs::Caller).starts_with("(List (+ (Get o 0) (* (Get I 0) (Get F 0)))"));
    }

    #[test]
    fn qr_decomp_is_read_hash_consed() {
        let q = lift(&qr_decomp(3).c, "qr.c", Outputs::Caller).unwrap();
        let distinct = q.dag.reachable(&[q.root]).len();
        let printed = q.dag.tree_size(q.root);
        assert_eq!(q.dag.args(q.root).len(), 18);
        assert!(
            distinct < 1_000 && printed > 50 * distinct as u64,
            "{distinct} distinct, {printed} printed"
        );
    }
}
