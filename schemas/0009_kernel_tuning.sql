-- Isaria's phase boundaries for the kernel rules (specs/dsp/*.rules), chosen by `isadb kernel
-- --tune`: the (alpha, beta) pair among the boundaries between the rules' own cost points that
-- compiles the small kernels cheapest. The newest row is in force; committed as CSV.

CREATE TABLE kernel_tuning (
    id          INTEGER PRIMARY KEY,
    alpha       REAL NOT NULL,
    beta        REAL NOT NULL,
    cost_model  TEXT NOT NULL,
    score       REAL NOT NULL,
    candidates  INTEGER NOT NULL,
    kernels     TEXT NOT NULL,
    rules_hash  TEXT NOT NULL,
    tuned_at    TEXT NOT NULL
) STRICT;
