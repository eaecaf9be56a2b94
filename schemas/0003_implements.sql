-- Facts for the query engine: an instruction implements an idiom under a parameter binding.

CREATE TABLE implements (
    idiom_id       INTEGER NOT NULL REFERENCES idioms(id),
    instruction_id INTEGER NOT NULL REFERENCES instructions(id),
    binding        TEXT NOT NULL,
    status         TEXT NOT NULL,
    sem_hash       TEXT NOT NULL,
    PRIMARY KEY (idiom_id, instruction_id, binding)  -- also "implementations of an idiom"
) STRICT;
CREATE INDEX implements_by_instruction ON implements(instruction_id);
