"""Component-analysis data publishing (Jiang, Ji, Wang, Mohammed, Cheng & Ohno-Machado, "Differential-Private
Data Publishing Through Component Analysis", Trans. Data Privacy 6(1), 2013 — seed 003).

- `DPPCA`: noisy mean and covariance → k noisy principal components → every record projected with noise and
  mapped back to the original columns (ε-DP, one record replaced);
- `DPLDA`: noisy class sums, counts and shared covariance → synthetic records matched to them by the paper's
  greedy L1 procedure (ε-DP, one record added or removed);
- `LaplaceRecords`, `ExponentialRecords`: the paper's baselines, every record perturbed on its own.

encoding.py (public-domain preprocessing and its inverse), sensitivity.py (exact sensitivities), gridnoise.py
(integer noise on a public grid, exact exponential draws), pca.py, lda.py, baselines.py, mechanisms.py.
"""

from ppdp_gui.engine.mechanisms.dp_pca import gridnoise, lda, pca
from ppdp_gui.engine.mechanisms.dp_pca.mechanisms import DPLDA, DPPCA, ExponentialRecords, LaplaceRecords

__all__ = ["DPPCA", "DPLDA", "LaplaceRecords", "ExponentialRecords"]
