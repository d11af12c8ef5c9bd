"""Reviewed facts and rules: the seed articles' figures and errata, datasheet specs and reference tables,
pitfalls, the rules engine, reserved/spot pricing files, benchmarks and the cost of work.
May import knowledge's top-level modules; `work` also reads the built knowledge base (`kb.reader`) and the
catalogs' availability and GCP cross-check (`catalog`).
Imports: top; work also kb, catalog
"""
