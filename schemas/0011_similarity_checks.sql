-- The similarity checker's cache (Hydride's Algorithm 1, `src/classes`), committed as
-- rules.db/similarity_checks.csv: z3's verdict on a class representative instantiated at
-- another instruction's parameters against that instruction's semantics, keyed by the hash of
-- the two texts, so a build asks z3 only about semantics that changed. The classes themselves
-- are rebuilt from it at every build.

CREATE TABLE similarity_checks (
    pair_hash TEXT PRIMARY KEY,
    verdict   TEXT NOT NULL,   -- similar, different or unknown
    solver_ms REAL NOT NULL
) STRICT;
