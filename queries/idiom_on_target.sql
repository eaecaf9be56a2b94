-- query: {idiom} on {target}
-- Instructions of an ISA or feature proven to implement the idiom (any of its aliases).
SELECT i.name, i.intrinsic, i.asm, s.name AS isa, f.name AS feature, d.name AS idiom, m.binding, i.cost
FROM implements m
JOIN idioms d ON d.id = m.idiom_id
JOIN instructions i ON i.id = m.instruction_id
JOIN isas s ON s.id = i.isa_id
JOIN features f ON f.id = i.feature_id
WHERE m.status = 'proven'
  AND d.name IN (SELECT value FROM json_each(:idioms))
  AND (s.name = :target OR f.name = :target)
ORDER BY f.name, i.id, d.name
