-- query: {idiom} on {target}
-- Instructions of an ISA or feature proven to implement the idiom (any of its aliases).
SELECT name, intrinsic, asm, isa, feature, idiom, binding, cost FROM proven_facts
WHERE idiom IN (SELECT value FROM json_each(:idioms)) AND (isa = :target OR feature = :target
     OR feature IN (SELECT value FROM json_each(:target_features)))
ORDER BY feature, id, idiom
