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
    use crate::kernel::c::lift;

    /// The C, lifted, is the peers' input exactly (the shared kernels' files, inlined).
    #[test]
    fn c_lifts_to_the_peers_list_form() {
        let m = lift(&mat_mul(2, 2, 2).c, "mm.c").unwrap();
        assert_eq!(
            m.dag.print(m.root),
            "(List (+ (* (Get A 0) (Get B 0)) (* (Get A 1) (Get B 2))) (+ (* (Get A 0) (Get B 1)) (* (Get A 1) (Get B 3))) (+ (* (Get A 2) (Get B 0)) (* (Get A 3) (Get B 2))) (+ (* (Get A 2) (Get B 1)) (* (Get A 3) (Get B 3))))"
        );
        let c = lift(&conv(3, 3, 2, 2).c, "conv.c").unwrap();
        assert!(c.dag.print(c.root).starts_with(
            "(List (* (Get I 0) (Get F 0)) (+ (* (Get I 0) (Get F 1)) (* (Get I 1) (Get F 0))) (+ (* (Get I 1) (Get F 1)) (* (Get I 2) (Get F 0))) (* (Get I 2) (Get F 1)) (+ (* (Get I 0) (Get F 2)) (* (Get I 3) (Get F 0))) (+ (* (Get I 0) (Get F 3)) (+ (* (Get I 1) (Get F 2)) (+ (* (Get I 3) (Get F 1)) (* (Get I 4) (Get F 0)))))"
        ));
    }

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
    fn qr_decomp_is_read_hash_consed() {
        let q = lift(&qr_decomp(3).c, "qr.c").unwrap();
        let distinct = q.dag.reachable(&[q.root]).len();
        let printed = q.dag.tree_size(q.root);
        assert_eq!(q.dag.args(q.root).len(), 18);
        assert!(
            distinct < 1_000 && printed > 50 * distinct as u64,
            "{distinct} distinct, {printed} printed"
        );
    }
}
