-- query: {idiom}
-- Every instruction proven to implement the idiom, grouped by ISA.
SELECT i.name, i.intrinsic, i.asm, s.name AS isa, f.name AS feature, d.name AS idiom, m.binding, i.cost
FROM implements m
JOIN idioms d ON d.id = m.idiom_id
JOIN instructions i ON i.id = m.instruction_id
JOIN isas s ON s.id = i.isa_id
JOIN features f ON f.id = i.feature_id
WHERE m.status = 'proven' AND d.name IN (SELECT value FROM json_each(:idioms))
ORDER BY s.name, f.name, i.id, d.name
