-- One document per row; ?1 is the document's text. {value} is the variant's expression:
-- jsonb variant: jsonb(CASE WHEN json_valid(?1) THEN ?1 ELSE 'x' END). json_valid(?1) is
--   strict RFC 8259 (jsonb() alone also accepts JSON5: unquoted keys, NaN, trailing commas);
--   text that is not JSON becomes 'x', which jsonb() refuses with "malformed JSON".
-- text variant: ?1 as given (the table's CHECK validates it).
INSERT INTO documents (doc) VALUES ({value});
