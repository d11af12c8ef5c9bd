"""Reading clouds' catalogs into offers: the CSV reader, GPU identity, availability, quirks, regions, zones, the
GCP cross-check, live fetchers and the imports kept in the state. May import knowledge's top-level modules,
`facts` and `state`; only the importer (`gpubot kb import`) reaches `kb` and `history`, to rebuild and record,
and the AWS history fetcher `history`, to back-fill dated points.
Imports: top, facts, state; importer also kb, history; fetchers also history
"""
