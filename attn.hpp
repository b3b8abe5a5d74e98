// attn: attention from scratch. One header for notebooks and quick programs:
//   #include <attn/attn.hpp>
#pragma once

#include "core/config.hpp"
#include "core/dot.hpp"
#include "core/errors.hpp"
#include "core/gradcheck.hpp"
#include "core/ops.hpp"
#include "core/random.hpp"
#include "core/tensor.hpp"

#include "nn/attention/attention.hpp"
#include "nn/attention/local.hpp"
#include "nn/attention/masks.hpp"
#include "nn/attention/multihead.hpp"
#include "nn/attention/positional.hpp"
#include "nn/attention/score.hpp"
#include "nn/attention/self_attention.hpp"
#include "nn/checkpoint.hpp"
#include "nn/module.hpp"
#include "nn/npy.hpp"
#include "nn/npz.hpp"
#include "nn/rnn.hpp"
#include "nn/rnn_cell.hpp"

#include "viz/plot.hpp"

#include "models/data/batch.hpp"
#include "models/data/corpus.hpp"
#include "models/data/tasks.hpp"
#include "models/data/vocab.hpp"
