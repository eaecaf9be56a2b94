-- query: {idiom}
-- Every instruction proven to implement the idiom, grouped by ISA.
SELECT name, intrinsic, asm, isa, feature, idiom, binding, cost FROM proven_facts
WHERE idiom IN (SELECT value FROM json_each(:idioms))
ORDER BY isa, feature, id, idiom
