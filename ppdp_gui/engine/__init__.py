"""The Qt-free engine: data, taxonomies, noise, budget, mechanisms, metrics and pipelines."""
