-- Isaria's alpha and beta are chosen per kernel rule set: the rules of specs/dsp/ ('given',
-- hand-written or imported from Diospyros) and those `isadb synth --dialect dsp` found
-- ('synthesized'), so the two sets can be compared on the same kernels.

ALTER TABLE kernel_tuning ADD COLUMN rule_set TEXT NOT NULL DEFAULT 'given';
