"""The evidence store: every run a page rests on, kept in the repository as a compact record
(evidence/README.md). `records` is the schema, `store` the files, `collect` a run folder →
its record, `digest` (with `crates` and `pyimports`) the code digest, `scenarios` what the
checkout's code would record for a point, `add`, `status`, `verify` and `refresh` the
commands (`cli`), `materialise` the records → the scenario folders the results book reads."""
