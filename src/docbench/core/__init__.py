"""The foundation: small helpers every layer may use (units, redaction, machine facts, SQL
files). Nothing here imports from the rest of docbench."""
