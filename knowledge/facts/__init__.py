"""Reviewed facts and rules: the seed articles' figures and errata, datasheet specs and reference tables,
pitfalls, the rules engine, reserved/spot pricing files, benchmarks and the cost of work; MLPerf Training/Inference
results, training cost, MLPerf serving cost, LLM API list prices and rent-or-API (issue 27).
May import knowledge's top-level modules; `work` also the catalogs' availability and GCP cross-check (`catalog`),
`work_datasheet` the built knowledge base (`kb.reader`) and the catalogs' identities; `train_cost` also the catalogs'
availability.
Imports: top; work also catalog; work_datasheet also kb, catalog; train_cost also catalog
"""
