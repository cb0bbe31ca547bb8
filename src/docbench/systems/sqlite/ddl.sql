-- docbench's SQLite table: one JSON document column.
-- {column_type}: BLOB for the jsonb variant (SQLite's binary JSON), TEXT for the text variant.
-- {column_check}: a CHECK that the document is a JSON object (jsonb variant: json_type of
-- the blob, cheap), and for the text variant also valid RFC 8259 JSON text.
DROP TABLE IF EXISTS documents;
CREATE TABLE documents (
    doc {column_type} NOT NULL CHECK ({column_check})
);
