-- Core catalogue, rebuilt from the spec files: ISAs, features, instruction families and
-- instances, idioms, cross-ISA classes, and key/value metadata.
-- Every table is STRICT (SQLite enforces the declared column types), so CSV round trips
-- can type each field by its column. Columns without NOT NULL are the nullable ones.

CREATE TABLE isas (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
) STRICT;

CREATE TABLE features (
    id     INTEGER PRIMARY KEY,
    name   TEXT NOT NULL UNIQUE,
    isa_id INTEGER NOT NULL REFERENCES isas(id),
    UNIQUE (isa_id, id)               -- "features by isa"; target of instructions' (isa_id, feature_id) key
) STRICT;

CREATE TABLE families (
    id        INTEGER PRIMARY KEY,
    isa_id    INTEGER NOT NULL REFERENCES isas(id),
    name      TEXT NOT NULL,
    spec_file TEXT NOT NULL,
    spec_line INTEGER NOT NULL,
    UNIQUE (isa_id, name),
    UNIQUE (isa_id, id)               -- target of instructions' (isa_id, family_id) key
) STRICT;

CREATE TABLE instructions (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    intrinsic   TEXT,
    asm         TEXT NOT NULL,
    isa_id      INTEGER NOT NULL REFERENCES isas(id),
    feature_id  INTEGER NOT NULL,
    family_id   INTEGER NOT NULL,
    params      TEXT NOT NULL,
    operands    TEXT NOT NULL,
    result_type TEXT NOT NULL,
    semantics   TEXT NOT NULL,
    sem_hash    TEXT NOT NULL,
    latency     REAL,
    throughput  REAL,
    cost        REAL NOT NULL,
    -- The feature and the family must belong to the instruction's own ISA.
    FOREIGN KEY (isa_id, feature_id) REFERENCES features(isa_id, id),
    FOREIGN KEY (isa_id, family_id)  REFERENCES families(isa_id, id)
) STRICT;
CREATE INDEX instructions_by_isa       ON instructions(isa_id, feature_id);
CREATE INDEX instructions_by_feature   ON instructions(feature_id);
CREATE INDEX instructions_by_family    ON instructions(family_id);
CREATE INDEX instructions_by_intrinsic ON instructions(intrinsic);
CREATE INDEX instructions_by_sem_hash  ON instructions(sem_hash);

CREATE TABLE idioms (
    id        INTEGER PRIMARY KEY,
    name      TEXT NOT NULL UNIQUE,
    params    TEXT NOT NULL,
    template  TEXT NOT NULL,
    aliases   TEXT NOT NULL,
    spec_file TEXT NOT NULL,
    spec_line INTEGER NOT NULL
) STRICT;

CREATE TABLE classes (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL
) STRICT;

CREATE TABLE class_members (
    class_id       INTEGER NOT NULL REFERENCES classes(id),
    instruction_id INTEGER NOT NULL REFERENCES instructions(id),
    binding        TEXT NOT NULL,
    PRIMARY KEY (class_id, instruction_id)  -- also "members of a class"
) STRICT;
CREATE INDEX class_members_by_instruction ON class_members(instruction_id);

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
