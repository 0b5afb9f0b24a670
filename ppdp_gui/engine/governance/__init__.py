"""What a hospital's governance asks for (issue 31): the release context and its risk threshold
(persistence/release_context.py, gate.py), the de-identification dossier (dossier.py, techniques.py,
person_risk.py), Safe Harbor in one step (safe_harbor_recipe.py) and keyed pseudonyms with per-person date
shifts (pseudonyms.py).

Everything here reads the project (`persistence.project.Recipe`, its optional `context` section) and the custodian
record; it never changes a mechanism, the plan or the ledger."""
