"""Every hint the chapter 08 checks give, by id: reviewed, counted and translated here."""
from __future__ import annotations

HINTS: dict[str, str] = {
    # ch08-training-loop
    "loop.recipe": "Each step: opt.zero_grad(); loss = ((model(X) - y) ** 2).mean() (or "
                   "F.mse_loss(model(X), y)); loss.backward(); opt.step(); "
                   "losses.append(loss.item()).",
    "loop.list": "Append loss.item() after every step and return the list.",
    "loop.floats": "Append loss.item(), not the Variable loss: a Variable keeps its whole graph "
                   "alive.",
    "loop.after": "These are the losses after each update; record the loss computed before "
                  "opt.step().",
    "loop.no-zero": "Gradients piled up across steps: call opt.zero_grad() before every "
                    "backward.",
    # ch08-sequential
    "seq.init": "Call super().__init__() first, then register each module with "
                "setattr(self, str(i), module).",
    "seq.register-list": "Register each module by assignment, setattr(self, str(i), module), so "
                         "that Module's __setattr__ files it in _modules; a plain list hides "
                         "them from the walk (no parameters, no train/eval).",
    "seq.register-name": "Use the position as the name: setattr(self, str(i), module).",
    "seq.same": "Register the modules themselves, in the order given.",
    "seq.forward": "x = module(x) for each module in self._modules.values(), then return x.",
    "seq.reverse": "The modules run in reverse order: apply them in the order they were given "
                   "(m0 first).",
    "seq.last": "Only the last module's output on the input comes out: reassign x = m(x) in the "
                "loop, so each module gets the previous module's output.",
    "seq.len": "__len__ returns len(self._modules).",
    "seq.index": "__getitem__(i) returns list(self._modules.values())[i], so that negative "
                 "indices count from the end as for a list.",
    # ch08-dropout
    "drop.recipe": "keep = generator.random(x.shape) >= p; return x * Variable(keep / (1 - p)) "
                   "(in x's dtype), so that autograd records the product.",
    "drop.keep-prob": "The mask keeps an element with probability 1 - p: keep = "
                      "generator.random(x.shape) >= p (with < p you keep a fraction p).",
    "drop.scale-missing": "Scale what is kept by 1/(1 - p), so that the expected output equals "
                          "the input and evaluation mode needs no rescaling. ",
    "drop.scale-wrong": "Scale by 1/(1 - p), not by p or 1 - p. ",
    "drop.graph": "Multiply the Variable x by a Variable mask; do not compute on x.data.",
    "drop.grad": "The gradient is the mask times 1/(1 - p): build the output as "
                 "x * Variable(mask).",
    "drop.eval": "In evaluation mode (self.training is False) return the input unchanged: no "
                 "mask and no scaling.",
    "drop.p0": "With p = 0 nothing is dropped: return the input.",
    "drop.p1": "With p = 1 everything is dropped (and 1/(1 - p) would divide by zero): "
               "return x * 0.0.",
}
