# SPDX-License-Identifier: ISC
# joblib: processes (loky), threads, and memmapped numpy arrays.
import warnings

import numpy as np
from joblib import Parallel, delayed

warnings.simplefilter("error")  # a fall back to serial mode is a warning


def norm(row):
    return float(np.sqrt((row ** 2).sum()))


data = np.random.default_rng(0).random((200, 5000))  # > 1 MB: memmapped to the workers
p = Parallel(n_jobs=-1, max_nbytes="1M")(delayed(norm)(r) for r in data)
t = Parallel(n_jobs=4, prefer="threads")(delayed(norm)(r) for r in data)
print("RESULT", len(p), np.allclose(p, t))
