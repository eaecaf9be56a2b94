-- Cache of instruction selection (`isadb compile`): the extracted term of each expression that
-- passed translation validation, keyed by the catalog fingerprint (a hash of the target's
-- instructions, lowerings, proven rules, macros and the selector version), so a hit skips egglog
-- and z3. Not committed as CSV: a rebuilt database starts with an empty cache.
CREATE TABLE selection_cache (
    target     TEXT NOT NULL,
    lanes      INTEGER NOT NULL,
    expression TEXT NOT NULL,
    declared   TEXT NOT NULL,
    catalog    TEXT NOT NULL,
    term       TEXT NOT NULL,
    cost       REAL NOT NULL,
    PRIMARY KEY (target, lanes, expression, declared, catalog)
) STRICT;
