"""PyTorch reference values for the optimizers (tests/nn/test_optim.cpp).

Two parameters, w [3, 4] and b [4], take 5 steps. Before each step the
gradients are set to recorded values, clip_grad_norm_(max_norm=1) is applied
(the gradients are scaled so that some steps are clipped and some are not),
then optimizer.step(). At step 3 b has no gradient, so it must be skipped
(its Adam step count does not advance). Recorded: the gradients given, the
norm clip_grad_norm_ returned, and both parameters after every step.
Also the learning rates of StepLR and CosineAnnealingLR over 25 steps.
Run: /usr/bin/python3 tools/reference/nn_optim.py
"""
import torch

from common import Writer, fixed

w = Writer("nn_optim")

STEPS = 5
SCALES = [0.3, 2.0, 0.5, 3.0, 0.1]  # gradient scale per step: norms above and below max_norm = 1
MAX_NORM = 1.0

OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01),
    "sgd_nesterov": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8, weight_decay=0.02, nesterov=True),
    "adam": lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1, foreach=False),
    "adam_default": lambda p: torch.optim.Adam(p, foreach=False),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.02, betas=(0.85, 0.99), eps=1e-7, weight_decay=0.05, foreach=False),
    "adamw_default": lambda p: torch.optim.AdamW(p, foreach=False),
}

w0 = fixed((3, 4), 1, requires_grad=False)
b0 = fixed((4,), 2, requires_grad=False)
w.case("init", w=w0, b=b0)
grads = []
for k in range(STEPS):
    gw = fixed((3, 4), 10 + k, requires_grad=False) * SCALES[k]
    gb = None if k == 2 else fixed((4,), 20 + k, requires_grad=False) * SCALES[k]
    grads.append((gw, gb))
    w.case("grads_%d" % k, w=gw, **({} if gb is None else {"b": gb}))

for name, make in OPTIMIZERS.items():
    pw = w0.clone().requires_grad_(True)
    pb = b0.clone().requires_grad_(True)
    opt = make([pw, pb])
    for k, (gw, gb) in enumerate(grads):
        opt.zero_grad(set_to_none=True)
        pw.grad = gw.clone()
        pb.grad = None if gb is None else gb.clone()
        total = torch.nn.utils.clip_grad_norm_([pw, pb], MAX_NORM)
        opt.step()
        w.case("%s_%d" % (name, k), w=pw, b=pb, total_norm=total)

# Learning-rate schedules: the lr after construction and after each of 25 scheduler steps.
for name, make in (("step_lr", lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5)),
                   ("cosine_lr", lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=10, eta_min=0.01))):
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    sched = make(opt)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(25):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    w.case(name, lr=torch.tensor(lrs))

w.save()
