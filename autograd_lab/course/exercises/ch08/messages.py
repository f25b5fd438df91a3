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
    # the optimizers (ch08-sgd-momentum, ch08-adam)
    "optim.unchanged": "Update the parameter's data in place, under al.no_grad(): "
                       "p -= lr * d_p (or p.data -= ...). Rebinding p = p - ... changes only "
                       "your local name. If params came from a generator, keep list(params): a "
                       "generator can be walked only once.",
    "optim.replaced": "Keep the Parameter objects; change their data in place.",
    "optim.leaf": "Do the update under al.no_grad() (or on p.data), so it is not recorded.",
    "optim.zero-grad": "for p in self.params: p.grad = None (the default in PyTorch 2).",
    # ch08-sgd-momentum
    "sgd.recipe": "Per parameter p with a gradient: d = p.grad.data + weight_decay * p.data; if "
                  "momentum: b = d.copy() on the first step, else b = momentum * b + d, and "
                  "d = b; then p.data -= lr * d. Skip parameters whose grad is None.",
    "sgd.init": "The constructor is {name}(params, lr, momentum=0.0, weight_decay=0.0); keep "
                "params as a list.",
    "sgd.skip": "Skip a parameter whose .grad is None (no update, its buffer unchanged); its "
                "first step with a gradient starts its buffer. ",
    "sgd.ema": "This is an average, b = mu * b + (1 - mu) * g. PyTorch's momentum adds the "
               "whole gradient: b = mu * b + g.",
    "sgd.no-memory": "The velocity does not carry over between steps: keep one buffer per "
                     "parameter in the optimizer (e.g. self.buffers) and update it in place.",
    "sgd.wd-after": "Weight decay belongs in the gradient, before the buffer: "
                    "g = g + weight_decay * p, then b = mu * b + g.",
    "sgd.no-wd": "weight_decay is ignored: add weight_decay * p to the gradient first.",
    # ch08-adam
    "adam.recipe": "Per parameter with a gradient g: t += 1; m = beta1 * m + (1 - beta1) * g; "
                   "v = beta2 * v + (1 - beta2) * g * g; m_hat = m / (1 - beta1**t); "
                   "v_hat = v / (1 - beta2**t); p.data -= lr * m_hat / (sqrt(v_hat) + eps). "
                   "m and v start at zeros, one pair (and one t) per parameter.",
    "adam.init": "The constructor is {name}(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8); "
                 "keep params as a list.",
    "adam.no-correction": "The bias correction is missing: divide m by (1 - beta1**t) and v by "
                          "(1 - beta2**t); without it the first steps are far too small.",
    "adam.eps-inside": "eps belongs outside the square root: sqrt(v_hat) + eps.",
    "adam.global-t": "Count steps per parameter: a parameter skipped in a step (grad None) does "
                     "not advance its own t. Keep t in that parameter's state.",
    "adam.first-only": "Both moments need their correction: m_hat = m / (1 - beta1**t) and "
                       "v_hat = v / (1 - beta2**t).",
    "adam.t-plus-one": "The bias correction is one step ahead: on a parameter's first step t is "
                       "1, so m_hat = m / (1 - beta1**1). Start t at 0 and add 1 before the "
                       "correction, once per step.",
    # ch08-module
    "module.init": "Call super().__init__() first; __setattr__ must store the value too "
                   "(object.__setattr__(self, name, value)).",
    "module.walk": "named_parameters walks named_modules(prefix) and, for each module, yields "
                   "its own _parameters under f\"{module_name}.{param_name}\" (just the "
                   "parameter name for the top module).",
    "module.prefix": "The names lack the module's prefix: a child's parameter is named "
                     "'body.p0', not 'p0'. ",
    "module.children": "Only the top module's own parameters are listed: recurse into the "
                       "child modules registered in _modules. ",
    "module.twice": "A parameter appears twice: keep a set of the ids already yielded and skip "
                    "a parameter seen before (a shared layer is one parameter). ",
    "module.order": "The order differs: registration keeps assignment order (a dict does), and "
                    "the walk goes depth first: a module's own parameters, then each child's in "
                    "the order the children were assigned.",
    "module.objects": "Yield the Parameter objects themselves, not copies or their data.",
    "module.parameters": "parameters() is named_parameters() without the names.",
    "module.store": "__setattr__ ends with object.__setattr__(self, name, value) for every "
                    "value.",
    "module.named-modules": "yield prefix, self; then for each child in _modules: yield from "
                            "child.named_modules(prefix + '.' + name, or just name at the top).",
    "module.unregister": "A name holds one thing at a time: when a name is assigned a value "
                         "that is not a Parameter, remove it from _parameters (and from _modules "
                         "when it is not a Module); a new Parameter or Module under an old name "
                         "keeps its place.",
    "module.zero-none": "Set p.grad = None, not zeros (PyTorch 2's default: backward then "
                        "starts a fresh gradient). ",
    "module.zero-walk": "Walk self.parameters(), so that children's parameters are reached "
                        "too. ",
    "module.zero": "for p in self.parameters(): p.grad = None.",
    "module.train-walk": "Walk self.modules() (the model and everything inside it) and set "
                         "m.training = mode on each, not only on self.",
    "module.train-self": "End train() with `return self`, so that model = Net().train() works.",
    "module.train-back": "train(mode=True): the default switches back to training mode.",
    "module.state-dict": "state_dict returns {dotted name: p.data.copy()} over "
                         "named_parameters().",
    "module.state-names": "Build the dict from self.named_parameters(): {name: p.data.copy()}.",
    "module.state-arrays": "Store p.data.copy(), the numpy array, not the Parameter itself.",
    "module.snapshot": "Save copies (p.data.copy()): a state_dict is a snapshot, and the "
                       "optimizer changes p.data in place at every step.",
    "module.load": "load_state_dict(state) copies state[name] into each parameter: "
                   "p.data[...] = state[name].",
    "module.load-values": "Copy each state[name] into the parameter of that name.",
    "module.load-in-place": "Copy in place, p.data[...] = state[name]: an optimizer built "
                            "before the load holds these arrays' owners, and "
                            "p.data = state[name] would also tie the model to the dict, so "
                            "training would change the saved state.",
    "module.load-tied": "Copy the values in (p.data[...] = state[name]); do not keep the dict's "
                        "arrays.",
    "module.load-keys": "Compare the names first: when set(state) differs from the model's "
                        "parameter names, raise KeyError naming both, so that a state_dict of "
                        "another architecture is refused.",
    "module.load-shapes": "Check each array's shape against the parameter's and raise "
                          "ValueError naming both: numpy would broadcast some wrong shapes into "
                          "the parameter without a word.",
    # ch08-linear
    "linear.init-call": "Call super().__init__() first, then assign Parameter objects to "
                        "self.weight and self.bias (or self.bias = None when bias=False).",
    "linear.module": "Write `class {name}(Module):`.",
    "linear.names": "Only nn.Parameter values are registered: self.weight = "
                    "nn.Parameter(array), assigned in this order, after super().__init__().",
    "linear.shape": "weight is (out_features, in_features), as in PyTorch, so that forward is "
                    "x @ weight.T; bias is (out_features,).",
    "linear.requires-grad": "nn.Parameter(...) requires grad by default; do not pass "
                            "requires_grad=False.",
    "linear.no-bias": "With bias=False register no bias: self.bias = None.",
    "linear.forward": "forward returns x @ self.weight.T + self.bias.",
    "linear.transpose": "Use weight.T: weight is (out, in).",
    "linear.graph": "Compute with Variables (x @ self.weight.T + self.bias), not with their "
                    "numpy .data, so that the graph is recorded.",
    "linear.weight-grad": "Let autograd do it: build the output from self.weight with Variable "
                          "operations.",
    "linear.init": "Draw both from rng.uniform(-k, k, size=...) with k = 1 / sqrt(in_features)",
    "linear.normal": "A normal distribution has no bound: use a uniform one. ",
    "linear.centred": "U(0, 1) only gives positive weights. ",
    "linear.fan-in": "k uses fan_in, the number of inputs (in_features), not out_features. ",
    "linear.bias": "PyTorch draws the bias from the same U(-k, k) (zeros would also train, but "
                   "this exercise follows PyTorch).",
    "linear.seed-mine": "Draw weight and bias with init_uniform, from the module's generator "
                        "(which manual_seed resets), not from a new default_rng() or np.random.",
    "linear.seed-given": "Make one generator per layer, rng = np.random.default_rng(seed), and "
                         "draw weight and bias from it.",
}
