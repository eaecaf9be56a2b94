-- Views shared by the named queries in queries/ and by the CLI.

-- An instruction with its ISA and feature names: the shape of every query answer.
CREATE VIEW instruction_rows AS
SELECT i.id, i.name, i.intrinsic, i.asm, s.name AS isa, f.name AS feature, i.params, i.cost
FROM instructions i
JOIN isas s ON s.id = i.isa_id
JOIN features f ON f.id = i.feature_id;

-- Proven idiom facts, one row per (instruction, idiom, binding).
CREATE VIEW proven_facts AS
SELECT r.id, r.name, r.intrinsic, r.asm, r.isa, r.feature, d.name AS idiom, m.binding, r.cost
FROM implements m
JOIN idioms d ON d.id = m.idiom_id
JOIN instruction_rows r ON r.id = m.instruction_id
WHERE m.status = 'proven';
