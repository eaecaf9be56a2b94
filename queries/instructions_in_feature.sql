-- query: instructions in {target}
-- Every instruction of a feature (or of a whole ISA).
SELECT name, intrinsic, asm, isa, feature, '' AS idiom, params AS binding, cost FROM instruction_rows
WHERE feature = :target OR isa = :target
ORDER BY id
