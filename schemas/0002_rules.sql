-- Rewrite rules and the expensive results that are committed as CSV in rules.db/:
-- verification and synthesis runs, and validation of instruction semantics against real code.

CREATE TABLE rules (
    id             INTEGER PRIMARY KEY,
    name           TEXT NOT NULL UNIQUE,
    lhs            TEXT NOT NULL,
    rhs            TEXT NOT NULL,
    predicate      TEXT,
    kind           TEXT NOT NULL CHECK (kind IN ('lift', 'lower', 'simplify', 'expand', 'compile', 'optimize')),
    phase          INTEGER,
    target         TEXT,
    provenance     TEXT NOT NULL CHECK (provenance IN ('hand-written', 'synthesized', 'imported')),
    rule_hash      TEXT NOT NULL,
    status         TEXT NOT NULL DEFAULT 'unverified'
                   CHECK (status IN ('unverified', 'proven', 'refuted', 'unknown')),
    lanes_proven   TEXT,
    types_proven   TEXT,
    counterexample TEXT,
    solver_ms      REAL,
    verified_at    TEXT
) STRICT;
CREATE INDEX rules_by_kind   ON rules(kind, phase);
CREATE INDEX rules_by_target ON rules(target);
CREATE INDEX rules_by_status ON rules(status);

CREATE TABLE verification_runs (
    id          INTEGER PRIMARY KEY,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    command     TEXT NOT NULL,
    proven      INTEGER NOT NULL,
    refuted     INTEGER NOT NULL,
    unknown     INTEGER NOT NULL,
    wall_ms     REAL NOT NULL
) STRICT;

CREATE TABLE synthesis_runs (
    id          INTEGER PRIMARY KEY,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    isa         TEXT NOT NULL,
    params      TEXT NOT NULL,
    rules_found INTEGER NOT NULL,
    wall_ms     REAL NOT NULL
) STRICT;

CREATE TABLE validation_results (
    sem_hash         TEXT NOT NULL,
    instruction_name TEXT NOT NULL,
    isa              TEXT NOT NULL,
    inputs           INTEGER NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('validated', 'mismatch', 'skipped')),
    detail           TEXT NOT NULL,
    validated_at     TEXT NOT NULL,
    PRIMARY KEY (sem_hash, instruction_name)
) STRICT;
CREATE INDEX validation_results_by_isa ON validation_results(isa, status);
