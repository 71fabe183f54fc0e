-- A NUL in a text derived from an entry (a session's name and first user
-- message, a label) is a space (sessiontree.DerivedText), on every backend:
-- PostgreSQL's text cannot hold one. Texts stored before that rule keep
-- their NUL and would read differently from a replay of their entries
-- (Check would report them); this rewrites them by the rule. The entries
-- themselves keep their JSON, \u0000 escapes and all. derived_text is the
-- engine's (engine.RegisterFunctions); instr on the blob finds a NUL where
-- instr on the text would stop at it; it takes the blob for the same reason.
UPDATE sessions SET name = derived_text(CAST(name AS BLOB))
 WHERE instr(CAST(name AS BLOB), X'00') > 0;
UPDATE sessions SET first_user_text = derived_text(CAST(first_user_text AS BLOB))
 WHERE instr(CAST(first_user_text AS BLOB), X'00') > 0;
UPDATE labels SET label = derived_text(CAST(label AS BLOB))
 WHERE instr(CAST(label AS BLOB), X'00') > 0;
