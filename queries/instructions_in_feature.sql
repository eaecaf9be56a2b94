-- query: instructions in {target}
-- Every instruction of a feature (or of a whole ISA).
SELECT i.name, i.intrinsic, i.asm, s.name AS isa, f.name AS feature, '' AS idiom, i.params AS binding, i.cost
FROM instructions i
JOIN isas s ON s.id = i.isa_id
JOIN features f ON f.id = i.feature_id
WHERE f.name = :target OR s.name = :target
ORDER BY i.id
