#include "scene_training.hpp"

#include "../eval/accuracy.hpp"
#include "../eval/scene_evaluate.hpp"

#include <memory>

namespace attn::models {

EpochFamily scene_family(ShowAttendTell& model, const std::vector<data::Scene>& train,
                         const std::vector<data::Scene>& valid, const data::Vocab& vocab, std::size_t batch_size,
                         const CaptionLossOptions& loss) {
  if (train.empty()) throw ValueError("scene_family: expected training scenes, got none");
  if (batch_size == 0) throw ValueError("scene_family: batch_size must be at least 1");
  struct State {
    std::vector<std::vector<std::size_t>> order;  // the epoch's batches, as positions in `train`
    ReinforceBaseline baseline;
  };
  auto state = std::make_shared<State>();
  EpochFamily f;
  f.draw_epoch = [&train, batch_size, state](Generator& gen) {
    data::BatchOptions batching;
    batching.batch_size = batch_size;
    state->order = data::scene_batch_order(train, batching, gen);
    return state->order.size();
  };
  f.step = [&model, &train, &vocab, loss, state](std::size_t i) {
    const data::SceneBatch batch = data::make_scene_batch(train, state->order.at(i), vocab, model.dtype());
    CaptionerOutput out = model.forward_all(batch.images, batch.tgt_in);  // logits [B, T, V]
    CaptionLoss l = caption_loss(out, batch.tgt_out, loss, state->baseline);
    return EpochStep{l.loss, l.nll, token_accuracy(out.logits, batch.tgt_out), 1.0};
  };
  if (!valid.empty())
    f.validate = [&model, &valid, &vocab] {
      SceneEvalOptions o;
      o.batch_size = 100;
      return evaluate_scene_captioner(model, valid, vocab, o).bleu.score;
    };
  f.save_state = [state] {
    return std::vector<std::pair<std::string, Tensor>>{{"baseline", baseline_state(state->baseline)}};
  };
  f.load_state = [state](const std::map<std::string, Tensor>& s) {
    state->baseline = read_baseline_state(s.at("baseline"), "scene_family");
  };
  return f;
}

}  // namespace attn::models
