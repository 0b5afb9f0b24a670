"""One view per workflow step: Data, Taxonomies, Mechanism, Run, Results, Export."""
