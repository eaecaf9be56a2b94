-- query: idioms of {instruction}
-- Every idiom an instruction is proven to implement.
SELECT i.name, i.intrinsic, i.asm, s.name AS isa, f.name AS feature, d.name AS idiom, m.binding, i.cost
FROM implements m
JOIN idioms d ON d.id = m.idiom_id
JOIN instructions i ON i.id = m.instruction_id
JOIN isas s ON s.id = i.isa_id
JOIN features f ON f.id = i.feature_id
WHERE m.status = 'proven' AND (i.name = :instruction OR i.intrinsic = :instruction)
ORDER BY d.name
