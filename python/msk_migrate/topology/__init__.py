"""How several migration flows relate (consolidation, fan-out, active/active, forwarding) and the marks that keep
records from looping between clusters when flows run both ways with identical topic names."""
