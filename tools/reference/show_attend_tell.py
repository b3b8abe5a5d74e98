"""PyTorch reference values for Show, Attend and Tell on pixels: models::CnnEncoder
(models/cnn_encoder.hpp), models::GridCaptioner with the gate (models/grid_captioner.hpp),
models::ShowAttendTell (models/show_attend_tell.hpp) and the loss of train/grid_loss.hpp,
written here from the equations with PyTorch's own layers (tests/models/test_show_attend_tell.cpp):

  encoder     an nn.Sequential of blocks Conv2d(k=3, padding=1, bias=False), BatchNorm2d, ReLU,
              MaxPool2d(2); its output [B, D, R, C] permuted to [B, R, C, D] and reshaped to the
              annotation vectors a [B, R*C, D], cell j = r * C + c (row-major)
  captioner   h_j = project(a_j); s_0 = tanh(init_h(mean_j h_j)), m_0 = tanh(init_c(mean_j h_j))
              e_tj = v . tanh(W1 s_{t-1} + W2 h_j), a_t = softmax_j(e_t)
              soft: c_t = sum_j a_tj h_j; hard: c_t = h_k (k given, or argmax_j a_tj in eval mode)
              gate: c_t <- sigmoid(f_beta(s_{t-1})) c_t
              s_t, m_t = LSTMCell([y_{t-1}; c_t], (s_{t-1}, m_{t-1}))
              logits_t = out(tanh(y_{t-1} + out_state(s_t) + out_context(c_t)))
  loss        (sum of NLL + lambda sum_b sum_j (1 - sum_t a_tj)^2, and for hard attention
              - lambda_r sum_b (R_b - baseline) sum_t log a_{t,k_t} - lambda_e sum H(a_t)) / tokens,
              R_b = log p(y | cells) a constant, the REINFORCE surrogate of train/grid_loss.hpp

Parameters and buffers are named as the C++ state() names them: "encoder." + the keys of the
nn.Sequential's own state_dict (encoder.0.weight, encoder.1.running_mean, ...), then
"captioner." + the grid captioner's (captioner.attention.W1, captioner.f_beta.weight, ...).

Hard attention's cells are the reference's choice: it samples them from a_t with its own
generator (one image read soft for its whole caption, the per-image mixture, as a row of -1)
and records them; the C++ test replays them with GridCaptioner::forward_all(features, tgt_in,
cells), and checks separately that a replay of its own samples reproduces its sampled pass.

Cases (images [3, 3, 8, 12] -> a 2 x 3 grid of D = 4, vocabulary 7, captions of 4 steps, gate on):
  soft_train  soft attention, training mode (batch norm's batch statistics, running ones updated):
              annotations, logits, weights, gate, entropy, the loss with lambda = 0.7, every gradient
              (parameters and images), and the running statistics after the pass
  soft_eval   the same weights in eval mode (the running statistics normalize)
  hard_train  hard attention in training mode over the recorded cells: logits, weights, the log-
              probability of each choice, the surrogate loss with a baseline, every gradient
  hard_eval   hard attention in eval mode: teacher-forced logits and chosen cells (argmax), and each
              image's greedy caption (6 words at most) with its log-probability and attention
"""
import torch
import torch.nn.functional as F

from common import Writer, fixed, set_named_weights

B, C_IN, H, W = 3, 3, 8, 12
CHANNELS = [3, 4]
VOCAB, ENC, EMBED, DEC, ATT = 7, 3, 3, 5, 4
PAD, BOS, EOS = 0, 1, 2
LAMBDA, LAMBDA_R, LAMBDA_E = 0.7, 1.0, 0.01  # doubly stochastic, REINFORCE, entropy (CaptionLossOptions)
BASELINE = -7.5  # the moving average b before the hard_train pass (started)
MAX_LEN = 6


class ShowAttendTell(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layers, c_in = [], C_IN
        for c in CHANNELS:
            layers += [torch.nn.Conv2d(c_in, c, 3, padding=1, bias=False), torch.nn.BatchNorm2d(c), torch.nn.ReLU(),
                       torch.nn.MaxPool2d(2)]
            c_in = c
        self.encoder = torch.nn.Sequential(*layers)
        D = CHANNELS[-1]
        self.project = torch.nn.Linear(D, ENC)
        self.init_h = torch.nn.Linear(ENC, DEC)
        self.init_c = torch.nn.Linear(ENC, DEC)
        self.embed = torch.nn.Embedding(VOCAB, EMBED, padding_idx=PAD)
        self.W1 = torch.nn.Parameter(torch.empty(ATT, DEC))
        self.W2 = torch.nn.Parameter(torch.empty(ATT, ENC))
        self.v = torch.nn.Parameter(torch.empty(ATT))
        self.decoder = torch.nn.LSTMCell(EMBED + ENC, DEC)
        self.out_state = torch.nn.Linear(DEC, EMBED)
        self.out_context = torch.nn.Linear(ENC, EMBED)
        self.out = torch.nn.Linear(EMBED, VOCAB)
        self.f_beta = torch.nn.Linear(DEC, 1)

    def named_state(self):
        """(C++ name, tensor) of every parameter and buffer, in the C++ model's order."""
        named = [("encoder." + k, t) for k, t in self.encoder.state_dict(keep_vars=True).items()]
        for module in ("project", "init_h", "init_c"):
            named += [("captioner.%s.%s" % (module, n), p) for n, p in getattr(self, module).named_parameters()]
        named += [("captioner.embed.weight", self.embed.weight)]
        named += [("captioner.attention." + n, getattr(self, n)) for n in ("W1", "W2", "v")]
        named += [("captioner.decoder." + n, p) for n, p in self.decoder.named_parameters()]
        for module in ("out_state", "out_context", "out", "f_beta"):
            named += [("captioner.%s.%s" % (module, n), p) for n, p in getattr(self, module).named_parameters()]
        return named

    def named_parameters_cpp(self):
        return [(n, t) for n, t in self.named_state() if isinstance(t, torch.nn.Parameter)]

    def annotations(self, images):
        x = self.encoder(images)  # [B, D, R, C]
        b, d, r, c = x.shape
        return x.permute(0, 2, 3, 1).reshape(b, r * c, d)  # [B, R, C, D] -> [B, R*C, D], cell j = r * C + c

    def start(self, images):
        a = self.annotations(images)  # a_j: [B, N, D]
        h = self.project(a)  # h_j: [B, N, ENC]
        summary = h.mean(1)  # [B, ENC]
        return h, h @ self.W2.T, torch.tanh(self.init_h(summary)), torch.tanh(self.init_c(summary)), a

    def step(self, h, keys, s, m, y_prev, hard, cells=None, soft_rows=None):
        """One decoder step from s_{t-1}; cells [B] for hard attention in training (None: argmax)."""
        e = torch.tanh((s @ self.W1.T)[:, None, :] + keys) @ self.v  # e_tj: [B, N]
        a, log_a = torch.softmax(e, -1), torch.log_softmax(e, -1)
        entropy = -(a * log_a).sum(-1)  # [B]
        choice_log_prob = None
        chosen = a
        if hard:
            if cells is None:
                cells = a.argmax(-1)
            chosen = F.one_hot(cells.clamp(min=0), a.shape[1]).to(a.dtype)  # [B, N]
            choice_log_prob = (chosen * log_a).sum(-1)  # log a_{t,k}: [B]
            if soft_rows is not None:  # an image read soft: c_t from a_t itself, no choice made
                chosen = soft_rows[:, None] * a + (1 - soft_rows[:, None]) * chosen
                choice_log_prob = choice_log_prob * (1 - soft_rows)
        context = (chosen[:, None, :] @ h)[:, 0]  # c_t: [B, ENC]
        beta = torch.sigmoid(self.f_beta(s))  # [B, 1]
        context = beta * context
        s, m = self.decoder(torch.cat([y_prev, context], 1), (s, m))
        logits = self.out(torch.tanh(y_prev + self.out_state(s) + self.out_context(context)))  # [B, V]
        return s, m, logits, a, chosen, beta[:, 0], entropy, choice_log_prob

    def forward_all(self, images, tgt_in, hard=False, cells=None, soft_rows=None):
        h, keys, s, m, annotations = self.start(images)
        y = self.embed(tgt_in)  # [B, T, E]
        out = {k: [] for k in ("logits", "weights", "used", "gate", "entropy", "choice_log_prob")}
        for t in range(tgt_in.shape[1]):
            s, m, logits, a, chosen, beta, entropy, lp = self.step(
                h, keys, s, m, y[:, t], hard, None if cells is None else cells[:, t], soft_rows)
            for k, v in zip(("logits", "weights", "used", "gate", "entropy", "choice_log_prob"),
                            (logits, a, chosen.detach(), beta, entropy, lp)):
                out[k].append(v)
        out = {k: torch.stack(v, 1) for k, v in out.items() if v[0] is not None}
        out["annotations"] = annotations
        return out


def caption_loss(out, tgt_out, baseline=None, sampled=None):
    """train/grid_loss.hpp's loss; with baseline (hard attention) the REINFORCE surrogate too."""
    Bn, T, V = out["logits"].shape
    mask = (tgt_out != PAD).to(torch.float64)  # [B, T]
    tokens = mask.sum()
    nll = F.cross_entropy(out["logits"].reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD,
                          reduction="none").reshape(Bn, T)
    total = nll.sum()
    attended = (out["weights"] * mask[:, :, None]).sum(1)  # sum_t a_tj over real steps: [B, N]
    penalty = ((1 - attended) ** 2).sum()
    total = total + LAMBDA * penalty
    extra = {"nll": nll.sum() / tokens, "penalty": penalty / Bn}
    if baseline is not None:
        reward = -nll.sum(1).detach()  # log p(y | cells): [B]
        mean_reward = (reward * sampled).sum() / sampled.sum()
        advantage = reward - baseline
        choices = (out["choice_log_prob"] * mask).sum(1)  # log p(k | image): [B]
        weighted = (choices * (advantage * sampled)).sum()
        entropy = (out["entropy"] * mask).sum()
        total = total - LAMBDA_R * weighted - LAMBDA_E * entropy
        extra.update(reward=mean_reward, baseline_after=0.9 * baseline + 0.1 * mean_reward)
    return total / tokens, extra


def build():
    model = ShowAttendTell()
    params = model.named_parameters_cpp()
    set_named_weights(params, 6500)
    with torch.no_grad():
        model.embed.weight[PAD].zero_()  # padding_idx: the row of <pad> is zero, as nn::Embedding keeps it
        # Larger weights in places, so that hard_eval's greedy captions differ between the images and
        # only some of them end before MAX_LEN (with uniform(-0.5, 0.5) everywhere every image gets
        # the same words).
        model.out.weight.mul_(5)
        model.W1.mul_(4)
        model.W2.mul_(4)
        model.out_context.weight.mul_(5)
        model.project.weight.mul_(3)
        model.decoder.weight_ih.mul_(3)
        model.decoder.weight_hh.mul_(3)
        model.out.bias[EOS] += 2.0
        for i, block in enumerate(range(0, len(model.encoder), 4)):  # running statistics of earlier training
            bn = model.encoder[block + 1]
            bn.running_mean.copy_(fixed(bn.running_mean.shape, 6600 + i, -0.5, 0.5, requires_grad=False))
            bn.running_var.copy_(fixed(bn.running_var.shape, 6610 + i, 0.5, 1.5, requires_grad=False))
            bn.num_batches_tracked.fill_(7)
    # The names are the Sequential's own state_dict keys: a PyTorch nn.Sequential of these layers loads them.
    assert [n for n, _ in model.named_state()][:len(model.encoder.state_dict())] == \
        ["encoder." + k for k in model.encoder.state_dict()]
    return model


IMAGES_SEED = 6700
TGT_IN = torch.tensor([[BOS, 3, 4, 5], [BOS, 5, 6, 3], [BOS, 4, PAD, PAD]])
TGT_OUT = torch.tensor([[3, 4, 5, EOS], [5, 6, 3, EOS], [4, EOS, PAD, PAD]])


def state_tensors(model, prefix=""):
    return {prefix + n: t.detach().clone() for n, t in model.named_state()}


def grads(model, images):
    g = {"grad_" + n: p.grad for n, p in model.named_parameters_cpp()}
    g["grad_images"] = images.grad
    return g


def soft_case(w, name, training):
    model = build()
    state = state_tensors(model)
    model.train(training)
    images = fixed((B, C_IN, H, W), IMAGES_SEED)
    out = model.forward_all(images, TGT_IN)
    loss, extra = caption_loss(out, TGT_OUT)
    loss.backward()
    running = {"after_" + n: t.detach() for n, t in model.named_state() if "running" in n or "num_batches" in n}
    w.case(name, images=images, tgt_in=TGT_IN.to(torch.float64), tgt_out=TGT_OUT.to(torch.float64),
           doubly_stochastic=torch.tensor(LAMBDA), state_count=torch.tensor(float(len(state))),
           logits=out["logits"], weights=out["weights"], gate=out["gate"], entropy=out["entropy"], loss=loss,
           nll=extra["nll"], penalty=extra["penalty"], annotations=out["annotations"], **state,
           **grads(model, images), **(running if training else {}))


def hard_train_case(w):
    model = build()
    state = state_tensors(model)
    model.train()
    images = fixed((B, C_IN, H, W), IMAGES_SEED)
    # The cells: sampled from a_t step by step (teacher forced), image 1 read soft (-1), recorded.
    g = torch.Generator().manual_seed(6800)
    soft_rows = torch.tensor([0.0, 1.0, 0.0])
    with torch.no_grad():
        h, keys, s, m, _ = model.start(images)
        y = model.embed(TGT_IN)
        cells = []
        for t in range(TGT_IN.shape[1]):
            e = torch.tanh((s @ model.W1.T)[:, None, :] + keys) @ model.v
            k = torch.multinomial(torch.softmax(e, -1), 1, generator=g)[:, 0]
            k = torch.where(soft_rows > 0, torch.full_like(k, -1), k)
            cells.append(k)
            s, m = model.step(h, keys, s, m, y[:, t], True, k, soft_rows)[:2]
        cells = torch.stack(cells, 1)  # [B, T]
    # The same batch statistics again: the pass above ran in training mode and moved the running ones,
    # which training mode does not read; reset them so that the recorded state is the one loaded.
    with torch.no_grad():
        for n, t in model.named_state():
            t.copy_(state[n])
    out = model.forward_all(images, TGT_IN, hard=True, cells=cells, soft_rows=soft_rows)
    sampled = 1 - soft_rows
    loss, extra = caption_loss(out, TGT_OUT, baseline=BASELINE, sampled=sampled)
    loss.backward()
    w.case("hard_train", images=images, tgt_in=TGT_IN.to(torch.float64), tgt_out=TGT_OUT.to(torch.float64),
           cells=cells.to(torch.float64), doubly_stochastic=torch.tensor(LAMBDA), reinforce=torch.tensor(LAMBDA_R),
           entropy_weight=torch.tensor(LAMBDA_E), baseline=torch.tensor(BASELINE), logits=out["logits"],
           weights=out["weights"], used=out["used"], gate=out["gate"], entropy=out["entropy"],
           choice_log_prob=out["choice_log_prob"], loss=loss, reward=extra["reward"],
           baseline_after=extra["baseline_after"], **state, **grads(model, images))


def hard_eval_case(w):
    model = build()
    state = state_tensors(model)
    model.eval()
    images = fixed((B, C_IN, H, W), IMAGES_SEED)
    with torch.no_grad():
        out = model.forward_all(images, TGT_IN, hard=True)  # cells = argmax_j a_tj
        tokens = torch.full((B, MAX_LEN), -1.0)
        attention = torch.zeros(B, MAX_LEN, H // 4 * (W // 4))
        alpha = torch.zeros_like(attention)
        gates = torch.zeros(B, MAX_LEN)
        log_prob = torch.zeros(B)
        for b in range(B):  # greedy, one image at a time (eval mode: batch norm does not mix images)
            h, keys, s, m, _ = model.start(images[b:b + 1])
            y = torch.tensor([BOS])
            for t in range(MAX_LEN):
                s, m, logits, a, chosen, beta = model.step(h, keys, s, m, model.embed(y), True)[:6]
                lp = torch.log_softmax(logits, -1)[0]
                y = lp.argmax().reshape(1)
                tokens[b, t], log_prob[b] = float(y), log_prob[b] + lp[y]
                attention[b, t], alpha[b, t], gates[b, t] = chosen[0], a[0], beta[0]
                if int(y) == EOS:
                    break
    w.case("hard_eval", images=images, tgt_in=TGT_IN.to(torch.float64), logits=out["logits"], weights=out["weights"],
           used=out["used"], gate=out["gate"], tokens=tokens, log_prob=log_prob, attention=attention, alpha=alpha,
           gates=gates, max_len=torch.tensor(float(MAX_LEN)), **state)


def main():
    w = Writer("show_attend_tell")
    soft_case(w, "soft_train", training=True)
    soft_case(w, "soft_eval", training=False)
    hard_train_case(w)
    hard_eval_case(w)
    w.save()


if __name__ == "__main__":
    main()
