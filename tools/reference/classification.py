"""NLTK reference values for models::ConfusionMatrix (eval/classification.hpp): accuracy, and per
class precision, recall and F1 from nltk.metrics.ConfusionMatrix, their mean the macro-F1.

Case "five": 40 examples over 5 classes, drawn with a fixed seed, where class 3 is never predicted
(its precision and F1 are 0) and the predictions are right about half the time.
"""
import random

import torch
from nltk.metrics import ConfusionMatrix

from common import Writer


def main():
    rng = random.Random(5)
    gold = [rng.randrange(5) for _ in range(40)]
    predicted = [g if rng.random() < 0.5 else rng.randrange(5) for g in gold]
    predicted = [4 if p == 3 else p for p in predicted]  # class 3 never predicted
    cm = ConfusionMatrix(gold, predicted)
    labels = range(5)
    precision = [cm.precision(c) or 0.0 for c in labels]
    recall = [cm.recall(c) or 0.0 for c in labels]
    f1 = [cm.f_measure(c) or 0.0 for c in labels]
    counts = [[cm[g, p] for p in labels] for g in labels]
    w = Writer("classification")
    w.case("five", gold=torch.tensor(gold), predicted=torch.tensor(predicted), counts=torch.tensor(counts),
           accuracy=torch.tensor(sum(g == p for g, p in zip(gold, predicted)) / len(gold)),
           precision=torch.tensor(precision), recall=torch.tensor(recall), f1=torch.tensor(f1),
           macro_f1=torch.tensor(sum(f1) / 5))
    w.save()


if __name__ == "__main__":
    main()
