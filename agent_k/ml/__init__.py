"""Machine learning: profiling a competition's data, the model families and recipes, rendering them into scripts,
evaluating candidates in the sandbox (`agent_k.sandbox`), featurising media, blending and the search."""
