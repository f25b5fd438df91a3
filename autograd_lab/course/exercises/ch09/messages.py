"""Every hint the chapter 09 checks written as ``observe`` and ``judge`` give, by id."""
from __future__ import annotations

HINTS: dict[str, str] = {
    # ch09-batches
    "batches.order": "Make the order once: np.arange(n), or with shuffle "
                     "np.random.default_rng(seed).permutation(n); then slice it into pieces of "
                     "batch_size and index x and y with each piece.",
    "batches.pair": "yield xb, yb: the inputs and the labels of the same samples.",
    "batches.same-length": "Index x and y with the same indices.",
    "batches.together": "Use the SAME index array for x and y, e.g. idx = order[i:i + "
                        "batch_size]; yield x[idx], y[idx]. Shuffling x and y separately breaks "
                        "the pairs.",
    "batches.sizes": "All batches have batch_size samples, except the last one, which gets what "
                     "is left (and there is no empty batch).",
    "batches.drop-last": "Stop at n - n % batch_size when drop_last is True.",
    "batches.in-place": "Shuffle an index array (a permutation), not the data in place "
                        "(np.random.shuffle(x) changes the caller's array).",
    "batches.shuffled-sizes": "Shuffling changes the order, not the sizes.",
    "batches.permutation": "Draw a permutation of all n indices (no repeats, none missing), e.g. "
                           "rng.permutation(n), instead of rng.integers(...).",
    "batches.same-seed": "Make the generator from the seed inside batches: rng = "
                         "np.random.default_rng(seed).",
    "batches.seed": "Use the seed argument: np.random.default_rng(seed).",
    # ch09-shift-pixels
    "shift.copy": "Work on a copy (out = images.copy()) and return it: the loader's samples must "
                  "stay as they are.",
    "shift.shape": "Return all the images, in their order, each of shape (H, W): moved or not.",
    "shift.roll": "np.roll wraps around: the row (or column) that leaves one edge comes back in "
                  "at the other. Fill the edge the image leaves with zeros, e.g. take the slice "
                  "of np.pad(image, 1) that starts at (1 - dy, 1 - dx).",
    "shift.move": "Move the whole image by dy rows and dx columns (each -1, 0 or 1), with zeros "
                  "moved in.",
    "shift.all-moves": "Draw dy and dx separately, each from -1, 0, 1 (rng.integers(-1, 2, "
                       "size=2)): up, down, left, right and the four diagonals all occur.",
    "shift.none": "Choose each image with probability fraction, e.g. rng.random(n) < fraction; "
                  "fraction=0 moves none.",
    "shift.too-many": "Move only the chosen images: each with probability fraction "
                      "(rng.random(n) < fraction).",
    "shift.too-few": "Choose each image with probability fraction and draw its dy and dx from "
                     "-1, 0, 1.",
    "shift.rng": "Draw every random number from the rng argument (rng.random, rng.integers), "
                 "never from np.random, so that a seed repeats a run.",
    # ch09-log-softmax
    "logsoftmax.stable": "Subtract each row's maximum first: z = x - max(x), then log_softmax = "
                         "z - log(sum(exp(z))). exp(z) is at most 1, so nothing overflows.",
    "logsoftmax.axis0": "You normalised along axis 0 (over the batch): the sum of exp was taken "
                        "down each column. Each row is one sample: take the maximum and the sum "
                        "along axis -1 (the classes), with keepdims=True.",
    "logsoftmax.global-max": "You subtracted one maximum for the whole batch (x.max() without an "
                             "axis): in a row whose logits all lie far below it, every exp "
                             "underflows to 0 and log(0) is -inf. Subtract each row's own "
                             "maximum: x.data.max(axis=-1, keepdims=True).",
    "logsoftmax.variable": "Use Variable operations (x - m, .exp(), .sum(axis=..., "
                           "keepdims=True), .log()) so that the result has a grad_fn and "
                           "backward works; do not go through x.data or numpy for the part that "
                           "depends on x.",
    "logsoftmax.return": "Did you forget the `return` statement?",
    "logsoftmax.input": "Compute new Variables (x - m); do not write into x or x.data.",
    "logsoftmax.keepdims": "Reduce with keepdims=True so that the row values broadcast back "
                           "against x: one log-probability per logit.",
    "logsoftmax.no-lse": "You returned x - max(x) without subtracting log(sum(exp(x - max(x)))).",
    "logsoftmax.softmax": "These are probabilities (softmax); return their logarithm.",
    # ch09-train-step
    "step.order": "out = model(x); loss = loss_fn(out, y); loss.backward(); optimizer.step() in "
                  "this order, with optimizer.zero_grad() anywhere before loss.backward(); then "
                  "return loss.item().",
    "step.none": "Return the batch's loss as a float: loss.item().",
    "step.float": "Return loss.item(), not the loss Variable (keeping Variables alive would keep "
                  "their whole graphs in memory).",
    "step.loss": "Return the loss computed in this step, before the update.",
    "step.unchanged": "optimizer.step() found no gradients: it must come after loss.backward(), "
                      "and optimizer.zero_grad() must not come between them (it would clear what "
                      "backward just computed). ",
    "step.zero-grad": "Gradients add up in .grad across backward calls: call "
                      "optimizer.zero_grad() every step, before loss.backward(). ",
    # ch09-class-indices
    "indices.read": "Read the values with np.asarray(getattr(targets, 'data', targets)), check "
                    "them, return them as an int array.",
    "indices.int": "Return t.astype(np.intp): numpy indexes only with integers.",
    "indices.same": "Return the same values in the same order, converted with .astype(np.intp).",
    "indices.message": "Say what was expected and what came, e.g. f'targets must be class "
                       "indices in 0..{C - 1}, got ...'.",
    "indices.ndim": "cross_entropy takes a batch: check logits.ndim == 2 first and raise "
                    "ValueError otherwise.",
    "indices.column": "Targets of shape (N, 1) would broadcast against arange(N) into an (N, N) "
                      "pick of log-probabilities: require t.shape == (N,), N = logits.shape[0], "
                      "and raise ValueError otherwise.",
    "indices.count": "One class index per row of the logits: require t.shape == "
                     "(logits.shape[0],).",
    "indices.negative": "A negative index would silently pick the LAST class (numpy counts from "
                        "the end): raise ValueError when t.min() < 0.",
    "indices.too-big": "The classes are 0..C-1, so C is out of range: raise ValueError when "
                       "t.max() >= logits.shape[1].",
    "indices.whole": "astype(int) would truncate 1.5 to class 1 without a word: raise ValueError "
                     "when np.any(t != np.round(t)).",
    # ch09-cross-entropy
    "ce.shadow": "The notebook's `log_softmax` is now the one-argument function of exercise "
                 "ch09-log-softmax: its cell ran again after section 3's `%%mygrad functional "
                 "activations` cell, and replaced that cell's `log_softmax(x, dim=-1)`, which "
                 "your library's code calls with `dim`. Run the `%%mygrad functional "
                 "activations` cell again (or give your exercise function another name), then "
                 "this cell.",
    "ce.mean": "Average the per-sample losses over the batch: .mean() or .sum() / N.",
    "ce.finite": "Use a stable log_softmax (subtract the row maximum first) and pick the "
                 "target's log-probability; never take log(softmax).",
    "ce.formula": "loss = mean over samples of -log_softmax(logits)[i, targets[i]].",
    "ce.summed": "You summed over the batch; take the mean.",
    "ce.sign": "The sign is wrong: the loss is MINUS the log-probability of the target.",
    "ce.all-classes": "You averaged over all classes; pick only each sample's target class.",
    "ce.gradient": "It should be (softmax(logits) - onehot(targets)) / N; build the loss from "
                   "Variable operations only.",
    # ch09-dataloader
    "loader.generator": "In __init__ make ONE generator, self.rng = np.random.default_rng(seed), "
                        "and pass it to batches(...) in __iter__, so each epoch draws a new "
                        "order.",
    "loader.pair": "yield Variable(xb), yb for each (xb, yb) that batches(...) yields.",
    "loader.variable": "Wrap the inputs, Variable(xb), so that the model can take them; the "
                       "labels stay a numpy array (the loss indexes with them).",
    "loader.store": "Store the arrays as self.X and self.y: fit and evaluate read loader.X and "
                    "loader.y.",
    "loader.len-partial": "The last, partial batch counts too unless drop_last: ceil(n / "
                          "batch_size) = -(-n // batch_size).",
    "loader.len-drop": "With drop_last the partial batch is left out: n // batch_size.",
    "loader.len": "len is the number of batches of an epoch, not the number of samples.",
    "loader.sizes": "Pass batch_size and drop_last on to batches(...).",
    "loader.order": "Pass shuffle on to batches(...).",
    "loader.once": "Shuffle a permutation of the indices, then slice it: batches(...) does that.",
    "loader.together": "Index X and y with the same indices.",
    "loader.same-epochs": "The order is drawn afresh each epoch only if the generator lives on: "
                          "In __init__ make ONE generator, self.rng = np.random.default_rng(seed),"
                          " and pass it to batches(...) in __iter__, so each epoch draws a new "
                          "order. Passing seed itself makes a new generator, with the same first "
                          "draw, every epoch.",
    "loader.same-seed": "Draw only from np.random.default_rng(seed), never from np.random or an "
                        "unseeded generator. In __init__ make ONE generator, self.rng = "
                        "np.random.default_rng(seed), and pass it to batches(...) in __iter__, so "
                        "each epoch draws a new order.",
    "loader.seed": "Make the generator from the seed argument: np.random.default_rng(seed).",
    "loader.transform-arg": "DataLoader takes transform=None as its last argument and stores it "
                            "(self.transform = transform).",
    "loader.transform-X": "Keep self.X as given; the transform runs on each batch in __iter__.",
    "loader.transform-early": "Apply the transform in __iter__, to each batch as it is drawn: run "
                              "once on all of X in __init__, a random transform (a shift) would "
                              "draw only once, and every epoch would see the same images.",
    "loader.transform-count": "Call self.transform(xb) on the inputs of every batch, in __iter__, "
                              "when transform is not None.",
    "loader.transform-inputs": "yield Variable(self.transform(xb)), yb: the transform changes the "
                               "inputs only, never the labels.",
    # ch09-fit
    "fit.callable": "Pass the function itself, without calling it.",
    "fit.signature": "fit(model, loader, optimizer, epochs, loss_fn=cross_entropy, test=None, "
                     "log_every=0, lr_schedule=None)",
    "fit.pair": "return total / len(X), correct / len(X)",
    "fit.call-model": "Call model(Variable(xb)) on each batch of X.",
    "fit.eval-mode": "evaluate must put the model in evaluation mode (model.eval()) before its "
                     "forward passes: in training mode Dropout would zero activations at random "
                     "and the score would be noise.",
    "fit.no-grad": "Run evaluate's forward passes inside `with no_grad():`: nothing is "
                   "differentiated there, and a recorded graph only costs time and memory.",
    "fit.batches": "Walk X in slices X[start:start + batch_size], each sample once.",
    "fit.restore": "Remember the mode before (was_training = model.training) and put it back at "
                   "the end with model.train(was_training): a model that came in evaluation "
                   "mode stays in it, one that came in training mode goes back to training.",
    "fit.mean-loss": "Add each batch's mean loss times its size, then divide by len(X).",
    "fit.batch-means": "You averaged the batches' mean losses: the last batch is smaller, so "
                       "weight each batch's loss by its size (loss.item() * len(yb)) and divide "
                       "the total by len(X).",
    "fit.loss-sum": "This is the sum over the samples; divide by len(X).",
    "fit.accuracy": "Count the samples whose largest logit (out.data.argmax(axis=1)) is their "
                    "label, and divide by len(X).",
    "fit.accuracy-count": "This is the number of right answers; divide by len(X) to get the "
                          "accuracy.",
    "fit.steps": "Each epoch runs train_step on every batch of the loader, once.",
    "fit.train-mode": "Call model.train() at the start of each epoch: the model may come in "
                      "evaluation mode (evaluate, or a caller), and Dropout must be on while "
                      "training.",
    "fit.train-graph": "Only evaluate runs under no_grad; train_step must record the graph that "
                       "loss.backward() walks.",
    "fit.lr-number": "Set optimizer.lr to a number: the value lr_schedule(epoch) returns.",
    "fit.from-zero": "Count the epochs from 0: the first epoch runs at lr_schedule(0).",
    "fit.before": "Set the rate BEFORE the epoch's steps: optimizer.lr = lr_schedule(epoch), "
                  "with epoch counted from 0.",
    "fit.schedule": "At the start of each epoch, when lr_schedule is given, set optimizer.lr = "
                    "lr_schedule(epoch) (epoch = 0, 1, ...).",
    "fit.history": "return history",
    "fit.per-epoch": "Append one value per epoch to each list.",
    "fit.epoch-loss": "Each epoch's training loss is the mean of what train_step returned for "
                      "its batches.",
    "fit.evaluate": "After each epoch's steps, evaluate the model on loader.X, loader.y "
                    "(accuracy) and on test (test_loss, test_accuracy).",
    "fit.keep-lr": "Touch optimizer.lr only when lr_schedule is not None.",
    "fit.no-test": "Evaluate on the test set only when test is given.",
}
