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
}
