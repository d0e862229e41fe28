"""Reports: per-item records, aggregation, and the JSON and terminal outputs."""
