-- query: instructions in {target}
-- Every instruction of a feature (or of a whole ISA).
SELECT name, intrinsic, asm, isa, feature, '' AS idiom, params AS binding, cost FROM instruction_rows
WHERE feature = :target OR isa = :target
   OR feature IN (SELECT value FROM json_each(:target_features))
ORDER BY id
