-- A selection catalog's fingerprint (hash of a target's instructions, lowerings and rules) is
-- kept in `meta` under `catalog_fingerprint <target>` so a `compile` process need not hash the
-- whole catalog again. Any change to what a catalog is built from forgets every kept one.

CREATE TRIGGER forget_fingerprints_instructions_insert AFTER INSERT ON instructions
BEGIN DELETE FROM meta WHERE key LIKE 'catalog_fingerprint %'; END;
CREATE TRIGGER forget_fingerprints_instructions_update AFTER UPDATE ON instructions
BEGIN DELETE FROM meta WHERE key LIKE 'catalog_fingerprint %'; END;
CREATE TRIGGER forget_fingerprints_instructions_delete AFTER DELETE ON instructions
BEGIN DELETE FROM meta WHERE key LIKE 'catalog_fingerprint %'; END;
CREATE TRIGGER forget_fingerprints_rules_insert AFTER INSERT ON rules
BEGIN DELETE FROM meta WHERE key LIKE 'catalog_fingerprint %'; END;
CREATE TRIGGER forget_fingerprints_rules_update AFTER UPDATE ON rules
BEGIN DELETE FROM meta WHERE key LIKE 'catalog_fingerprint %'; END;
CREATE TRIGGER forget_fingerprints_rules_delete AFTER DELETE ON rules
BEGIN DELETE FROM meta WHERE key LIKE 'catalog_fingerprint %'; END;
CREATE TRIGGER forget_fingerprints_facts_insert AFTER INSERT ON idiom_matches
BEGIN DELETE FROM meta WHERE key LIKE 'catalog_fingerprint %'; END;
CREATE TRIGGER forget_fingerprints_facts_update AFTER UPDATE ON idiom_matches
BEGIN DELETE FROM meta WHERE key LIKE 'catalog_fingerprint %'; END;
CREATE TRIGGER forget_fingerprints_facts_delete AFTER DELETE ON idiom_matches
BEGIN DELETE FROM meta WHERE key LIKE 'catalog_fingerprint %'; END;
