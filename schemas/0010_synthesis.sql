-- Synthesized rules (`isadb synth`): which run and search piece found a rule and why it has its
-- kind, the runs' keys and shards, and the search pieces with the hash of what they read, so a
-- run searches again only the pieces whose inputs changed.

ALTER TABLE rules ADD COLUMN synthesis_run TEXT;
ALTER TABLE rules ADD COLUMN search TEXT;
ALTER TABLE rules ADD COLUMN reason TEXT;

ALTER TABLE synthesis_runs ADD COLUMN run_key TEXT;
ALTER TABLE synthesis_runs ADD COLUMN shard TEXT;
CREATE UNIQUE INDEX synthesis_runs_by_key ON synthesis_runs(run_key);

CREATE TABLE synthesis_pieces (
    piece         TEXT PRIMARY KEY,
    input_hash    TEXT NOT NULL,
    synthesis_run TEXT NOT NULL,
    params        TEXT NOT NULL,
    candidates    INTEGER NOT NULL,
    rules         TEXT NOT NULL,
    wall_ms       REAL NOT NULL
) STRICT;
