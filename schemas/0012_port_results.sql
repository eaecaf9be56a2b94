-- `isadb port --all`: every instruction of a source set ported to a target, committed as
-- rules.db/port_results.csv. A row is reused while its input hash (the ported semantics, its
-- lanes and the target catalog's fingerprint) is unchanged.

CREATE TABLE port_results (
    source       TEXT NOT NULL,     -- the instruction, with its immediates: _mm_slli_epi16[imm=3]
    target       TEXT NOT NULL,
    instruction  TEXT NOT NULL,
    input_hash   TEXT NOT NULL,
    status       TEXT NOT NULL,     -- proven, scalarized or failed
    sequence     TEXT NOT NULL,     -- the calls in order, '; '-separated (the error when failed)
    instructions INTEGER NOT NULL,
    cost         REAL NOT NULL,
    proof        TEXT NOT NULL,     -- z3, same tree, or empty when failed
    prove_ms     REAL NOT NULL,
    PRIMARY KEY (source, target)
) STRICT;
