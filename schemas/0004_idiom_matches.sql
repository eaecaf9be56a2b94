-- Cache of the idiom matcher, committed as rules.db/idiom_matches.csv: which idioms each
-- instruction implements, keyed by the instruction's semantics hash and the hash of the idiom
-- catalogue (with every macro), so a build only re-matches what changed. An instruction that
-- implements nothing keeps one row with an empty idiom, so that negative answers are cached too.

CREATE TABLE idiom_matches (
    instruction    TEXT NOT NULL,
    sem_hash       TEXT NOT NULL,
    catalogue_hash TEXT NOT NULL,
    idiom          TEXT NOT NULL,
    binding        TEXT NOT NULL,
    status         TEXT NOT NULL,
    lanes          INTEGER NOT NULL,
    solver_ms      REAL NOT NULL,
    PRIMARY KEY (instruction, idiom, binding)
) STRICT;

-- The idioms (and the hash of each one's definition, with the macros it uses) that a catalogue
-- hash stands for, committed as rules.db/idiom_catalogue.csv: when one idiom changes or is
-- added, cached instructions are matched against that idiom only.
CREATE TABLE idiom_catalogue (
    catalogue_hash TEXT NOT NULL,
    idiom          TEXT NOT NULL,
    idiom_hash     TEXT NOT NULL,
    PRIMARY KEY (catalogue_hash, idiom)
) STRICT;
