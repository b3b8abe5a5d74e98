// Training chapter 18's document classifiers (the hierarchical attention network and its two
// baselines) with the epoch loop of epoch_trainer.hpp, as the chapter does: batches of documents
// of similar padded size in a new order each epoch, cross-entropy over the classes, the
// accuracy on the validation documents after each epoch (keep_best keeps the best epoch's weights).
//
//   EpochTrainerOptions o;
//   o.epochs = 12;
//   o.keep_best = true;
//   EpochTrainer trainer(model, document_family(model, split.train, split.valid, vocab, 32), o);
//   trainer.train();
//   trainer.restore_best();
//   classify_documents(model, split.test, vocab, classes).accuracy();
#pragma once

#include "epoch_trainer.hpp"

#include "../data/documents.hpp"
#include "../eval/classification.hpp"
#include "../models/document_classifier.hpp"

#include <vector>

namespace attn::models {

// The class of every document of `docs`, in order, in batches of 64, in eval mode (the model's mode
// is restored); the confusion matrix against their labels, and with `predicted` each guess.
ConfusionMatrix classify_documents(DocumentClassifier& model, const std::vector<data::Document>& docs,
                                   const data::Vocab& vocab, std::size_t classes,
                                   std::vector<std::int64_t>* predicted = nullptr);

// The batches, loss and validation (accuracy on `valid`) of a document classifier; a step's accuracy
// is the batch's. The model and the documents must outlive the family.
EpochFamily document_family(DocumentClassifier& model, const std::vector<data::Document>& train,
                            const std::vector<data::Document>& valid, const data::Vocab& vocab, std::size_t classes,
                            std::size_t batch_size);

}  // namespace attn::models
