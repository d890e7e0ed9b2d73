# SPDX-License-Identifier: ISC
# A random forest with n_jobs=-1 and a grid search: joblib's process pool.
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import GridSearchCV, cross_val_score

X, y = load_iris(return_X_y=True)
clf = RandomForestClassifier(n_estimators=50, random_state=0, n_jobs=-1)
scores = cross_val_score(clf, X, y, cv=5, n_jobs=-1)
grid = GridSearchCV(RandomForestClassifier(random_state=0), {"n_estimators": [10, 30], "max_depth": [2, None]},
                    cv=3, n_jobs=-1).fit(X, y)
print("RESULT", scores.mean() > 0.9, grid.best_score_ > 0.9)
