-- query: idioms of {instruction}
-- Every idiom an instruction is proven to implement.
SELECT name, intrinsic, asm, isa, feature, idiom, binding, cost FROM proven_facts
WHERE name = :instruction OR intrinsic = :instruction
ORDER BY idiom
