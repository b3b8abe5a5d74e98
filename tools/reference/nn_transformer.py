"""PyTorch reference values for nn::TransformerEncoderLayer, nn::TransformerDecoderLayer
and nn::Transformer (nn/transformer*.hpp).

Every module is built with batch_first=True and dropout=0.0 and run in TRAINING
mode, so torch 1.13 takes its standard path (not the fused inference "fast path",
which also zeroes padded outputs). Weights are fixed values recorded under
PyTorch's names (self_attn.in_proj_weight, linear1.weight, norm1.bias, ...).
Each case records the inputs, the masks (1.0 = true = may not be attended), the
output, a grad_output, and the gradient of loss = sum(output * grad_output) with
respect to every input (grad_src, grad_tgt, grad_memory) and every weight
(grad_<name>). No attention row is fully masked (PyTorch gives NaN there).

Cases (d_model 8, 2 heads, feed-forward 16, B 2):
  enc_post        encoder layer, post-norm, relu, T 4, src_key_padding_mask from lengths [4, 2]
  enc_pre_causal  encoder layer, norm_first, gelu, T 4, padding [3, 4] and a causal src_mask
  dec_post        decoder layer, post-norm, relu, T 3, S 4, causal tgt_mask, tgt padding
                  from lengths [3, 2], memory padding from lengths [4, 2]
  dec_pre         the same with norm_first and layer_norm_eps 1e-3
  transformer     nn.Transformer, 2 encoder + 2 decoder layers (final norms), S 4, T 3,
                  src/tgt/memory key padding and a causal tgt_mask
"""
import torch

from common import Writer, fixed


def set_weights(module, seed):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            p.copy_(fixed(p.shape, seed + i, -0.5, 0.5, requires_grad=False))
    return {name: p.detach().clone() for name, p in module.named_parameters()}


def grads(module):
    return {"grad_" + name: p.grad for name, p in module.named_parameters()}


def padding(lengths, t):
    return torch.arange(t)[None, :] >= torch.tensor(lengths)[:, None]  # [B, T], True = padded


def causal(t):
    return torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)  # True above the diagonal


def finish(out, seed):
    assert torch.isfinite(out).all()
    grad_output = fixed(out.shape, seed, requires_grad=False)
    (out * grad_output).sum().backward()
    return dict(output=out, grad_output=grad_output)


def encoder_case(w, name, norm_first, activation, lengths, with_causal, seed):
    layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, activation=activation,
                                             batch_first=True, norm_first=norm_first).double()
    layer.train()
    weights = set_weights(layer, seed)
    src = fixed((2, 4, 8), seed + 100)
    kpm = padding(lengths, 4)
    masks = dict(src_key_padding_mask=kpm)
    if with_causal:
        masks["src_mask"] = causal(4)
    r = finish(layer(src, **masks), seed + 101)
    w.case(name, src=src, grad_src=src.grad, **masks, **r, **weights, **grads(layer))


def decoder_case(w, name, norm_first, eps, seed):
    layer = torch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True,
                                             norm_first=norm_first, layer_norm_eps=eps).double()
    layer.train()
    weights = set_weights(layer, seed)
    tgt, memory = fixed((2, 3, 8), seed + 100), fixed((2, 4, 8), seed + 101)
    masks = dict(tgt_mask=causal(3), tgt_key_padding_mask=padding([3, 2], 3),
                 memory_key_padding_mask=padding([4, 2], 4))
    r = finish(layer(tgt, memory, **masks), seed + 102)
    w.case(name, tgt=tgt, memory=memory, grad_tgt=tgt.grad, grad_memory=memory.grad, **masks, **r, **weights,
           **grads(layer))


def transformer_case(w, seed):
    model = torch.nn.Transformer(8, 2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16,
                                 dropout=0.0, batch_first=True).double()
    model.train()
    weights = set_weights(model, seed)
    src, tgt = fixed((2, 4, 8), seed + 500), fixed((2, 3, 8), seed + 501)
    src_pad = padding([4, 3], 4)
    masks = dict(tgt_mask=causal(3), src_key_padding_mask=src_pad, tgt_key_padding_mask=padding([3, 2], 3),
                 memory_key_padding_mask=src_pad)
    r = finish(model(src, tgt, **masks), seed + 502)
    w.case("transformer", src=src, tgt=tgt, grad_src=src.grad, grad_tgt=tgt.grad, **masks, **r, **weights,
           **grads(model))


def main():
    w = Writer("nn_transformer")
    encoder_case(w, "enc_post", False, "relu", [4, 2], False, 10)
    encoder_case(w, "enc_pre_causal", True, "gelu", [3, 4], True, 40)
    decoder_case(w, "dec_post", False, 1e-5, 70)
    decoder_case(w, "dec_pre", True, 1e-3, 100)
    transformer_case(w, 200)
    w.save()


if __name__ == "__main__":
    main()
