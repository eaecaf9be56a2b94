-- How each idiom match binds the instruction: what every instruction operand receives (an
-- idiom parameter, a splatted parameter `x^`, or a constant `=0`) and the meta parameters'
-- values. Instruction selection turns these facts into lowering rules.
ALTER TABLE idiom_matches ADD COLUMN operands TEXT NOT NULL DEFAULT '';
ALTER TABLE idiom_matches ADD COLUMN meta TEXT NOT NULL DEFAULT '';
