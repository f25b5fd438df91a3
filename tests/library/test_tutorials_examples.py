"""PyTorch's tutorial "Learning PyTorch with Examples", run on autograd_lab and on PyTorch.

Each program below is the tutorial's code with one change: the module arrives as the argument
``torch`` (``Seeded(al)`` or ``Seeded(torch)``, see ``_oracle.py``) instead of ``import torch``,
and ``import torch.nn.functional as F`` / ``from torch import nn, optim`` become attribute
lookups on it. Two deliberate differences from the tutorial text, both for the comparison:
``dtype = torch.float64`` (the tutorial uses float32), and the number of steps is an argument
(the tutorial's count is the default) so that long loops run shorter here. Random starting values
come from one seeded stream, the same for both libraries. What the programs share (the sine data,
the training loop, the two ways of updating the weights, polynomial_nn's model) comes from
``_tutorials.py``, which makes the same calls; each program spells out what is its own.
"""
from __future__ import annotations

import random

import pytest

from .._oracle import assert_same, needs_torch, run_both
from ._tutorials import (by_hand, cubic, linear_params, polynomial_linear, scalar_parameters,
                         sgd_on_sine, sine, train, with_optimizer)

pytestmark = needs_torch


# ---------------------------------------------------------------- polynomial_autograd.py
def polynomial_autograd(torch, steps=2000):
    dtype = torch.float64
    device = torch.device("cpu")
    # Create Tensors to hold input and outputs.
    # By default, requires_grad=False, which indicates that we do not need to
    # compute gradients with respect to these Tensors during the backward pass.
    x, y = sine(torch, device=device, dtype=dtype)

    # Create random Tensors for weights. For a third order polynomial, we need
    # 4 weights: y = a + b x + c x^2 + d x^3
    # Setting requires_grad=True indicates that we want to compute gradients with
    # respect to these Tensors during the backward pass.
    a = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    b = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    c = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    d = torch.randn((), device=device, dtype=dtype, requires_grad=True)

    learning_rate = 1e-6

    def loss_of():
        # Forward pass: compute predicted y using operations on Tensors.
        y_pred = a + b * x + c * x ** 2 + d * x ** 3

        # Compute and print loss using operations on Tensors.
        # Now loss is a Tensor of shape (1,)
        # loss.item() gets the scalar value held in the loss.
        return (y_pred - y).pow(2).sum()

    # Use autograd to compute the backward pass, then manually update weights using gradient
    # descent under torch.no_grad() and zero the gradients (by_hand).
    losses = train(steps, loss_of, by_hand(torch, [a, b, c, d], learning_rate))

    result = f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3'
    return {"losses": losses, "params": [a.item(), b.item(), c.item(), d.item()], "printed": bool(result)}


def test_polynomial_autograd():
    ours, theirs = run_both(polynomial_autograd)
    assert_same(ours, theirs)
    assert theirs["losses"][-1] < theirs["losses"][0]


# ---------------------------------------------------------------- polynomial_custom_function.py
def polynomial_custom_function(torch, steps=2000):
    class LegendrePolynomial3(torch.autograd.Function):
        """
        We can implement our own custom autograd Functions by subclassing
        torch.autograd.Function and implementing the forward and backward passes
        which operate on Tensors.
        """

        @staticmethod
        def forward(ctx, input):
            """
            In the forward pass we receive a Tensor containing the input and return
            a Tensor containing the output. ctx is a context object that can be used
            to stash information for backward computation. You can cache tensors for
            use in the backward pass using the ``ctx.save_for_backward`` method. Other
            objects can be stored directly as attributes on the ctx object, such as
            ``ctx.my_object = my_object``. Check out `Extending torch.autograd`_
            for further details.
            """
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            """
            In the backward pass we receive a Tensor containing the gradient of the loss
            with respect to the output, and we need to compute the gradient of the loss
            with respect to the input.
            """
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    dtype = torch.float64
    device = torch.device("cpu")

    # Create Tensors to hold input and outputs.
    # By default, requires_grad=False, which indicates that we do not need to
    # compute gradients with respect to these Tensors during the backward pass.
    x, y = sine(torch, device=device, dtype=dtype)

    # Create random Tensors for weights. For this example, we need
    # 4 weights: y = a + b * P3(c + d * x), these weights need to be initialized
    # not too far from the correct result to ensure convergence.
    # Setting requires_grad=True indicates that we want to compute gradients with
    # respect to these Tensors during the backward pass.
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

    names = set()
    learning_rate = 5e-6

    def loss_of():
        # To apply our Function, we use Function.apply method. We alias this as 'P3'.
        P3 = LegendrePolynomial3.apply

        # Forward pass: compute predicted y using operations; we compute
        # P3 using our custom autograd operation.
        y_pred = a + b * P3(c + d * x)
        names.add(type(y_pred.grad_fn).__name__)

        # Compute and print loss
        return (y_pred - y).pow(2).sum()

    # Use autograd to compute the backward pass; update weights using gradient descent.
    losses = train(steps, loss_of, by_hand(torch, [a, b, c, d], learning_rate))

    return {"losses": losses, "params": [a.item(), b.item(), c.item(), d.item()]}


# ---------------------------------------------------------------- polynomial_nn.py
def polynomial_nn(torch, steps=2000):
    # Create Tensors to hold input and outputs; the output y is a linear function of
    # (x, x^2, x^3), so prepare the tensor xx = (x, x^2, x^3) and use the nn package to
    # define the model, Sequential(Linear(3, 1), Flatten(0, 1)), and the loss function,
    # MSELoss(reduction='sum') (polynomial_linear).
    xx, y, model, loss_fn = polynomial_linear(torch)

    learning_rate = 1e-6

    def update(loss):
        # Zero the gradients before running the backward pass.
        model.zero_grad()

        # Backward pass: compute gradient of the loss with respect to all the learnable
        # parameters of the model. Internally, the parameters of each Module are stored
        # in Tensors with requires_grad=True, so this call will compute gradients for
        # all learnable parameters in the model.
        loss.backward()

        # Update the weights using gradient descent. Each parameter is a Tensor, so
        # we can access its gradients like we did before.
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad

    # Forward pass: compute predicted y by passing x to the model (Module objects override the
    # __call__ operator so you can call them like functions); the loss function returns a
    # Tensor containing the loss.
    losses = train(steps, lambda: loss_fn(model(xx), y), update)
    # The first layer of `model` holds the fitted weight and bias (linear_params).
    return {"losses": losses, "params": linear_params(model)}


# ---------------------------------------------------------------- polynomial_optim.py
def polynomial_optim(torch, steps=2000):
    # Prepare the input tensor (x, x^2, x^3); use the nn package to define our model and
    # loss function.
    xx, y, model, loss_fn = polynomial_linear(torch)

    # Use the optim package to define an Optimizer that will update the weights of
    # the model for us. Here we will use RMSprop; the optim package contains many other
    # optimization algorithms. The first argument to the RMSprop constructor tells the
    # optimizer which Tensors it should update.
    learning_rate = 1e-3
    optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)

    # Forward pass: compute predicted y by passing x to the model, and the loss. Before the
    # backward pass, use the optimizer object to zero all of the gradients for the variables
    # it will update; then the backward pass, and the optimizer's step (with_optimizer).
    losses = train(steps, lambda: loss_fn(model(xx), y), with_optimizer(optimizer))
    return {"losses": losses, "params": linear_params(model)}


# ---------------------------------------------------------------- polynomial_module.py
def polynomial_module(torch, steps=2000):
    class Polynomial3(torch.nn.Module):
        def __init__(self):
            """
            In the constructor we instantiate four parameters and assign them as
            member parameters.
            """
            super().__init__()
            scalar_parameters(torch, self, "abcd")  # self.a = nn.Parameter(torch.randn(())), ...

        def forward(self, x):
            """
            In the forward function we accept a Tensor of input data and we must return
            a Tensor of output data. We can use Modules defined in the constructor as
            well as arbitrary operators on Tensors.
            """
            return cubic(self, x)  # self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            """
            Just like any class in Python, you can also define custom method on PyTorch modules
            """
            return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3'

    # Construct our model by instantiating the class defined above
    model = Polynomial3()

    # Fit it to y = sin(x) with MSELoss(reduction='sum') and an SGD Optimizer over
    # model.parameters(): the learnable parameters (defined with torch.nn.Parameter).
    losses = sgd_on_sine(torch, model, steps, lr=1e-6)

    return {"losses": losses, "result": [float(v) for v in model.string()[4:].replace(" x^3", "")
                                         .replace(" x^2", "").replace(" x", "").split(" + ")]}


# ---------------------------------------------------------------- dynamic_net.py
def dynamic_net(torch, steps=30000):
    class DynamicNet(torch.nn.Module):
        def __init__(self):
            """
            In the constructor we instantiate five parameters and assign them as members.
            """
            super().__init__()
            scalar_parameters(torch, self, "abcde")  # self.a = nn.Parameter(torch.randn(())), ...

        def forward(self, x):
            """
            For the forward pass of the model, we randomly choose either 4, 5
            and reuse the e parameter to compute the contribution of these orders.

            Since each forward pass builds a dynamic computation graph, we can use normal
            Python control-flow operators like loops or conditional statements when
            defining the forward pass of the model.

            Here we also see that it is perfectly safe to reuse the same parameter many
            times when defining a computational graph.
            """
            y = cubic(self, x)
            for exp in range(4, random.randint(4, 6)):
                y = y + self.e * x ** exp
            return y

        def string(self):
            """
            Just like any class in Python, you can also define custom method on PyTorch modules
            """
            return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?'

    # Construct our model by instantiating the class defined above
    model = DynamicNet()

    # Fit it to y = sin(x) with MSELoss(reduction='sum'). Training this strange model with
    # vanilla stochastic gradient descent is tough, so we use momentum. (The loss is kept
    # every 200 steps.)
    random.seed(0)  # the test's addition: the same random depths on both libraries
    losses = sgd_on_sine(torch, model, steps, every=200, lr=1e-8, momentum=0.9)

    return {"losses": losses, "params": [p.item() for p in model.parameters()], "string": bool(model.string())}


# ---------------------------------------------------------------- each program on both libraries
@pytest.mark.parametrize("program,steps", [
    (polynomial_custom_function, 2000),
    (polynomial_nn, 2000),
    # Equal to the last bit or two for 1300 steps; after that RMSprop circles the minimum with
    # steps of about lr whatever the gradient's size, and rounding differences of 1e-16 in the
    # sums grow to visible ones (both libraries then wander around the same loss, about 9).
    (polynomial_optim, 1300),
    (polynomial_module, 2000),
    (dynamic_net, 1000),
], ids=lambda value: getattr(value, "__name__", str(value)))
def test_program_gives_the_same_on_both_libraries(program, steps):
    ours, theirs = run_both(program, steps=steps)
    assert_same(ours, theirs)
