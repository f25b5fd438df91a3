"""PyTorch's autograd tutorials and docs examples, run on autograd_lab and on PyTorch in float64.

"Automatic Differentiation with torch.autograd" (autogradqs), the 60-minute blitz's autograd
page, "Extending torch.autograd" (LinearFunction in both styles, MulConstant, MyCube, the Linear
module), "Double Backward with Custom Functions", the docstring examples of
``torch.autograd.Function`` and of ``torch.autograd.functional``.

Each program is the documentation's code with the module handed in as ``torch`` (see
``_oracle.Seeded``: same code, same seeded random values on both libraries). Printing is replaced
by returning what was printed; the comparison is ``assert_same`` (float64, rtol 1e-9).
"""
from __future__ import annotations


from .._oracle import assert_same, needs_torch, run_both

pytestmark = needs_torch


# ---------------------------------------------------------------- autogradqs_tutorial.py
def autogradqs(torch):
    out = {}
    x = torch.ones(5)  # input tensor
    y = torch.zeros(3)  # expected output
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    out["grad_fns"] = (z.grad_fn is not None, loss.grad_fn is not None)

    loss.backward()
    out["w.grad"], out["b.grad"] = w.grad, b.grad

    z = torch.matmul(x, w) + b
    out["requires_grad"] = [z.requires_grad]
    with torch.no_grad():
        z = torch.matmul(x, w) + b
    out["requires_grad"].append(z.requires_grad)

    z = torch.matmul(x, w) + b
    z_det = z.detach()
    out["requires_grad"].append(z_det.requires_grad)

    inp = torch.eye(4, 5, requires_grad=True)
    out_ = (inp + 1).pow(2).t()
    out_.backward(torch.ones_like(out_), retain_graph=True)
    out["first call"] = inp.grad.clone()
    out_.backward(torch.ones_like(out_), retain_graph=True)
    out["second call"] = inp.grad.clone()
    inp.grad.zero_()
    out_.backward(torch.ones_like(out_), retain_graph=True)
    out["call after zeroing gradients"] = inp.grad
    return out


def test_autogradqs():
    ours, theirs = run_both(autogradqs)
    assert_same(ours, theirs)
    assert theirs["requires_grad"] == [True, False, False]


# ---------------------------------------------------------------- blitz/autograd_tutorial.py
def blitz_autograd(torch):
    out = {}
    a = torch.tensor([2., 3.], requires_grad=True)
    b = torch.tensor([6., 4.], requires_grad=True)
    Q = 3 * a ** 3 - b ** 2
    external_grad = torch.tensor([1., 1.])
    Q.backward(gradient=external_grad)
    # check if collected gradients are correct
    out["9*a**2 == a.grad"] = (9 * a ** 2 == a.grad)
    out["-2*b == b.grad"] = (-2 * b == b.grad)

    x = torch.rand(5, 5)
    y = torch.rand(5, 5)
    z = torch.rand((5, 5), requires_grad=True)
    a = x + y
    out["a requires grad"] = a.requires_grad
    b = x + z
    out["b requires grad"] = b.requires_grad

    # "Frozen parameters in the DAG": the tutorial's resnet18 (torchvision) replaced by a small
    # model with the same shape of code: a body, and a classifier head named fc
    nn, optim = torch.nn, torch.optim

    class Small(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(8, 16)
            self.fc = nn.Linear(16, 4)

        def forward(self, x):
            return self.fc(self.body(x).relu())

    model = Small()
    # Freeze all the parameters in the network
    for param in model.parameters():
        param.requires_grad = False
    model.fc = nn.Linear(16, 10)
    # Optimize only the classifier
    optimizer = optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    data = torch.rand(3, 8)
    loss = model(data).sum()
    loss.backward()
    optimizer.step()
    out["grads"] = [p.grad for p in model.parameters()]
    out["params"] = [p for p in model.parameters()]
    return out


def test_blitz_autograd():
    ours, theirs = run_both(blitz_autograd)
    assert_same(ours, theirs)
    assert theirs["b requires grad"] and not theirs["a requires grad"]


# ---------------------------------------------------------------- notes/extending: LinearFunction
def linear_backward(ctx, grad_output):
    """The docs' LinearFunction.backward, the same in both styles and in the Linear module."""
    # This is a pattern that is very convenient - at the top of backward
    # unpack saved_tensors and initialize all gradients w.r.t. inputs to
    # None. Thanks to the fact that additional trailing Nones are
    # ignored, the return statement is simple even when the function has
    # optional inputs.
    input, weight, bias = ctx.saved_tensors
    grad_input = grad_weight = grad_bias = None

    # These needs_input_grad checks are optional and there only to
    # improve efficiency. If you want to make your code simpler, you can
    # skip them. Returning gradients for inputs that don't require it is
    # not an error.
    if ctx.needs_input_grad[0]:
        grad_input = grad_output.mm(weight)
    if ctx.needs_input_grad[1]:
        grad_weight = grad_output.t().mm(input)
    if bias is not None and ctx.needs_input_grad[2]:
        grad_bias = grad_output.sum(0)

    return grad_input, grad_weight, grad_bias


def linear_function_combined(torch):
    """The docs' LinearFunction with forward(ctx, ...) ("combined" style), used by the Linear module."""
    class LinearFunctionCombined(torch.autograd.Function):
        @staticmethod
        # ctx is the first argument to forward
        def forward(ctx, input, weight, bias=None):
            # The forward pass can use ctx.
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        # This function has only a single output, so it gets only one gradient
        backward = staticmethod(linear_backward)
    return LinearFunctionCombined


def linear_function_styles(torch):
    Function = torch.autograd.Function

    # Inherit from Function
    class LinearFunction(Function):

        # Note that forward, setup_context, and backward are @staticmethods
        @staticmethod
        def forward(input, weight, bias):
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        # inputs is a Tuple of all of the inputs passed to forward.
        # output is the output of the forward().
        def setup_context(ctx, inputs, output):
            input, weight, bias = inputs
            ctx.save_for_backward(input, weight, bias)

        # This function has only a single output, so it gets only one gradient
        backward = staticmethod(linear_backward)

    LinearFunctionCombined = linear_function_combined(torch)

    # Option 1: alias
    linear = LinearFunction.apply

    out = {}
    for name, fn in (("setup_context", linear), ("combined", LinearFunctionCombined.apply)):
        x = torch.randn(4, 3, requires_grad=True)
        w = torch.randn(2, 3, requires_grad=True)
        b = torch.randn(2, requires_grad=True)
        y = fn(x, w, b)
        (y * y).sum().backward()
        out[name] = [y, x.grad, w.grad, b.grad]
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(2, 3, requires_grad=True)
    LinearFunctionCombined.apply(x, w).sum().backward()  # bias left out: its trailing None is fine
    out["no bias"] = [x.grad, w.grad]

    # gradcheck takes a tuple of tensors as input, check if your gradient
    # evaluated with these tensors are close enough to numerical
    # approximations and returns True if they all verify this condition.
    # (the docs use shapes (20, 20) and (30, 20); smaller here, as PyTorch's gradcheck takes
    # minutes on those on a busy 2-core machine)
    input = (torch.randn(6, 5, dtype=torch.double, requires_grad=True),
             torch.randn(4, 5, dtype=torch.double, requires_grad=True))
    test = torch.autograd.gradcheck(linear, input + (None,), eps=1e-6, atol=1e-4)
    out["gradcheck"] = bool(test)
    return out


def test_extending_linear_function_both_styles():
    ours, theirs = run_both(linear_function_styles)
    assert_same(ours, theirs)
    assert theirs["gradcheck"] is True


# ---------------------------------------------------------------- notes/extending: MulConstant, MyCube
def mul_constant_and_my_cube(torch):
    Function = torch.autograd.Function

    class MulConstant(Function):
        @staticmethod
        def forward(tensor, constant):
            return tensor * constant

        @staticmethod
        def setup_context(ctx, inputs, output):
            # ctx is a context object that can be used to stash information
            # for backward computation
            tensor, constant = inputs
            ctx.constant = constant

        @staticmethod
        def backward(ctx, grad_output):
            # We return as many input gradients as there were arguments.
            # Gradients of non-Tensor arguments to forward must be None.
            return grad_output * ctx.constant, None

    class MyCube(torch.autograd.Function):
        @staticmethod
        def forward(x):
            # We wish to save dx for backward. In order to do so, it must
            # be returned as an output.
            dx = 3 * x ** 2
            result = x ** 3
            return result, dx

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            result, dx = output
            ctx.save_for_backward(x, dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            # In order for the autograd.Function to work with higher-order
            # gradients, we must add the gradient contribution of `dx`,
            # which is grad_dx * 6 * x.
            result = grad_output * dx + grad_dx * 6 * x
            return result

    # Wrap MyCube in a function so that it is clearer what the output is
    def my_cube(x):
        result, dx = MyCube.apply(x)
        return result

    out = {}
    x = torch.randn(5, requires_grad=True)
    y = MulConstant.apply(x, 2.5)
    y.sum().backward()
    out["MulConstant"] = [y, x.grad]

    x = torch.randn(5, requires_grad=True)
    y = my_cube(x)
    g, = torch.autograd.grad(y.sum(), x, create_graph=True)
    gg, = torch.autograd.grad(g.sum(), x)
    out["MyCube"] = [y, g, gg]
    out["gradgradcheck"] = bool(torch.autograd.gradgradcheck(my_cube, (torch.randn(3, requires_grad=True),)))
    return out


def test_extending_mul_constant_and_my_cube():
    ours, theirs = run_both(mul_constant_and_my_cube)
    assert_same(ours, theirs)


# ---------------------------------------------------------------- notes/extending: the Linear module
def linear_module(torch):
    nn = torch.nn
    LinearFunction = linear_function_combined(torch)

    class Linear(nn.Module):
        def __init__(self, input_features, output_features, bias=True):
            super().__init__()
            self.input_features = input_features
            self.output_features = output_features

            # nn.Parameter is a special kind of Tensor, that will get
            # automatically registered as Module's parameter once it's assigned
            # as an attribute. Parameters and buffers need to be registered, or
            # they won't appear in .parameters() (doesn't apply to buffers), and
            # won't be converted when e.g. .cuda() is called. You can use
            # .register_buffer() to register buffers.
            # nn.Parameters require gradients by default.
            self.weight = nn.Parameter(torch.empty(output_features, input_features))
            if bias:
                self.bias = nn.Parameter(torch.empty(output_features))
            else:
                # You should always register all possible parameters, but the
                # optional ones can be None if you want.
                self.register_parameter('bias', None)

            # Not a very smart way to initialize weights
            nn.init.uniform_(self.weight, -0.1, 0.1)
            if self.bias is not None:
                nn.init.uniform_(self.bias, -0.1, 0.1)

        def forward(self, input):
            # See the autograd section for explanation of what happens here.
            return LinearFunction.apply(input, self.weight, self.bias)

        def extra_repr(self):
            # (Optional)Set the extra information about this module. You can test
            # it by printing an object of this class.
            return 'input_features={}, output_features={}, bias={}'.format(
                self.input_features, self.output_features, self.bias is not None
            )

    out = {}
    for bias in (True, False):
        layer = Linear(3, 2, bias=bias)
        x = torch.randn(4, 3)
        y = layer(x)
        y.pow(2).sum().backward()
        out[bias] = [y, [p.grad for p in layer.parameters()], len(list(layer.parameters())),
                     "input_features=3, output_features=2" in repr(layer)]
    return out


def test_extending_linear_module():
    ours, theirs = run_both(linear_module)
    assert_same(ours, theirs)


# ---------------------------------------------------------------- custom_function_double_backward_tutorial.py
def double_backward(torch):
    out = {}

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            # Because we are saving one of the inputs use `save_for_backward`
            # Save non-tensors and non-inputs/non-outputs directly on ctx
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_out):
            # A function support double backward automatically if autograd
            # is able to record the computations performed in backward
            x, = ctx.saved_tensors
            return grad_out * 2 * x

    # Use double precision because finite differencing method magnifies errors
    x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
    out["Square"] = [torch.autograd.gradcheck(Square.apply, x), torch.autograd.gradgradcheck(Square.apply, x)]

    class Exp(torch.autograd.Function):
        # Simple case where everything goes well
        @staticmethod
        def forward(ctx, x):
            # This time we save the output
            result = torch.exp(x)
            # Note that we should use `save_for_backward` here when
            # the tensor saved is an ouptut (or an input).
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_out):
            result, = ctx.saved_tensors
            return result * grad_out

    x = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()
    # Validate our gradients using gradcheck
    out["Exp"] = [torch.autograd.gradcheck(Exp.apply, x), torch.autograd.gradgradcheck(Exp.apply, x)]

    class Sinh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            expx = torch.exp(x)
            expnegx = torch.exp(-x)
            ctx.save_for_backward(expx, expnegx)
            # In order to be able to save the intermediate results, a trick is to
            # include them as our outputs, so that the backward graph is constructed
            return (expx - expnegx) / 2, expx, expnegx

        @staticmethod
        def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
            expx, expnegx = ctx.saved_tensors
            grad_input = grad_out * (expx + expnegx) / 2
            # We cannot skip accumulating these even though we won't use the outputs
            # directly. They will be used later in the second backward.
            grad_input += _grad_out_exp * expx
            grad_input -= _grad_out_negexp * expnegx
            return grad_input

    def sinh(x):
        # Create a wrapper that only returns the first output
        return Sinh.apply(x)[0]

    x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
    out["Sinh"] = [torch.autograd.gradcheck(sinh, x), torch.autograd.gradgradcheck(sinh, x)]
    g, = torch.autograd.grad(sinh(x).sum(), x, create_graph=True)
    out["Sinh grads"] = [g, torch.autograd.grad(g.sum(), x)[0]]

    def cube_forward(x):
        return x**3

    def cube_backward(grad_out, x):
        return grad_out * 3 * x**2

    def cube_backward_backward(grad_out, sav_grad_out, x):
        return grad_out * sav_grad_out * 6 * x

    def cube_backward_backward_grad_out(grad_out, x):
        return grad_out * 3 * x**2

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return cube_forward(x)

        @staticmethod
        def backward(ctx, grad_out):
            x, = ctx.saved_tensors
            return CubeBackward.apply(grad_out, x)

    class CubeBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, grad_out, x):
            ctx.save_for_backward(x, grad_out)
            return cube_backward(grad_out, x)

        @staticmethod
        def backward(ctx, grad_out):
            x, sav_grad_out = ctx.saved_tensors
            dx = cube_backward_backward(grad_out, sav_grad_out, x)
            dgrad_out = cube_backward_backward_grad_out(grad_out, x)
            return dgrad_out, dx

    x = torch.tensor(2., requires_grad=True, dtype=torch.double)
    out["Cube"] = [torch.autograd.gradcheck(Cube.apply, x), torch.autograd.gradgradcheck(Cube.apply, x)]
    return out


def test_double_backward_with_custom_functions():
    ours, theirs = run_both(double_backward)
    assert_same(ours, theirs)
    assert all(all(v) for k, v in theirs.items() if k != "Sinh grads")


# ---------------------------------------------------------------- torch.autograd.Function docstrings
def function_docstrings(torch):
    Function = torch.autograd.Function
    once_differentiable = torch.autograd.function.once_differentiable
    out = {}

    class Exp(Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            result, = ctx.saved_tensors
            return grad_output * result

    # Use it by calling the apply method:
    input = torch.randn(3, requires_grad=True)
    output = Exp.apply(input)
    output.sum().backward()
    out["Exp"] = [output, input.grad]

    # mark_dirty
    class Inplace(Function):
        @staticmethod
        def forward(ctx, x):
            x_npy = x.numpy()  # x_npy shares storage with x
            x_npy += 1
            ctx.mark_dirty(x)
            return x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_output):
            return grad_output

    a = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()
    b = a * a
    Inplace.apply(a)  # This would lead to wrong gradients!
    # but the engine would not know unless we mark_dirty
    try:
        b.backward()  # RuntimeError: one of the variables needed for gradient
        # computation has been modified by an inplace operation
        out["mark_dirty"] = "no error"
    except RuntimeError as exc:
        out["mark_dirty"] = "modified by an inplace operation" in str(exc)

    # mark_non_differentiable
    class Func(Function):
        @staticmethod
        def forward(ctx, x):
            sorted, idx = x.sort()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, idx)
            return sorted, idx

        @staticmethod
        @once_differentiable
        def backward(ctx, g1, g2):  # still need to accept g2
            x, idx = ctx.saved_tensors
            grad_input = torch.zeros_like(x)
            grad_input.index_add_(0, idx, g1)
            return grad_input

    x = torch.randn(6, requires_grad=True)
    s, idx = Func.apply(x)
    (s * torch.arange(6.0)).sum().backward()
    out["mark_non_differentiable"] = [s, idx, idx.requires_grad, x.grad]

    # set_materialize_grads
    class SimpleFunc(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone(), x.clone()

        @staticmethod
        @once_differentiable
        def backward(ctx, g1, g2):
            return g1 + g2  # No check for None necessary

    # We modify SimpleFunc to handle non-materialized grad outputs
    class Func2(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x.clone(), x.clone()

        @staticmethod
        @once_differentiable
        def backward(ctx, g1, g2):
            x, = ctx.saved_tensors
            grad_input = torch.zeros_like(x)
            if g1 is not None:  # We must check for None now
                grad_input += g1
            if g2 is not None:
                grad_input += g2
            return grad_input

    a = torch.tensor(1., requires_grad=True)
    b, _ = Func2.apply(a)  # induces g2 to be undefined
    (b * 3).backward()
    c, _ = SimpleFunc.apply(a)
    (c * 5).backward()
    out["set_materialize_grads"] = a.grad

    # save_for_backward
    class Func3(Function):
        @staticmethod
        def forward(ctx, x, y, z: int):
            w = x * z
            out = x * y + y * z + w * y
            ctx.save_for_backward(x, y, w, out)
            ctx.z = z  # z is not a tensor
            return out

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_out):
            x, y, w, out = ctx.saved_tensors
            z = ctx.z
            gx = grad_out * (y + y * z)
            gy = grad_out * (x + z + w)
            gz = None
            return gx, gy, gz

    a = torch.tensor(1., requires_grad=True, dtype=torch.double)
    b = torch.tensor(2., requires_grad=True, dtype=torch.double)
    c = 4
    d = Func3.apply(a, b, c)
    d.backward()
    out["save_for_backward"] = [d, a.grad, b.grad]
    # once_differentiable: a second derivative through it is refused
    g, = torch.autograd.grad(Func3.apply(a, b, c), a, create_graph=True)
    try:
        torch.autograd.grad(g, a)
        out["once_differentiable"] = "no error"
    except RuntimeError:
        out["once_differentiable"] = "refused"
    return out


def test_function_docstring_examples():
    ours, theirs = run_both(function_docstrings)
    assert_same(ours, theirs)
    assert theirs["mark_dirty"] is True and theirs["once_differentiable"] == "refused"


# ---------------------------------------------------------------- torch.autograd.functional docstrings
def functional_docstrings(torch):
    jacobian = torch.autograd.functional.jacobian
    hessian = torch.autograd.functional.hessian
    vjp, jvp = torch.autograd.functional.vjp, torch.autograd.functional.jvp
    hvp, vhp = torch.autograd.functional.hvp, torch.autograd.functional.vhp
    out = {}

    def exp_reducer(x):
        return x.exp().sum(dim=1)

    inputs = torch.rand(2, 2)
    out["jacobian"] = jacobian(exp_reducer, inputs)
    j = jacobian(exp_reducer, inputs, create_graph=True)
    out["jacobian create_graph"] = [j, j.requires_grad]

    def exp_adder(x, y):
        return 2 * x.exp() + 3 * y

    inputs = (torch.rand(2), torch.rand(2))
    out["jacobian tuple"] = jacobian(exp_adder, inputs)

    def pow_reducer(x):
        return x.pow(3).sum()

    inputs = torch.rand(2, 2)
    out["hessian"] = hessian(pow_reducer, inputs)

    def pow_adder_reducer(x, y):
        return (2 * x.pow(2) + 3 * y.pow(2)).sum()

    inputs = (torch.rand(2), torch.rand(2))
    out["hessian tuple"] = hessian(pow_adder_reducer, inputs)

    inputs = torch.rand(4, 4)
    v = torch.ones(4)
    out["vjp"] = vjp(exp_reducer, inputs, v)

    def adder(x, y):
        return 2 * x + 3 * y

    inputs = (torch.rand(2), torch.rand(2))
    v = torch.ones(2)
    out["vjp tuple"] = vjp(adder, inputs, v)

    inputs = torch.rand(4, 4)
    v = torch.ones(4, 4)
    out["jvp"] = jvp(exp_reducer, inputs, v)
    out["jvp tuple"] = jvp(adder, (torch.rand(2), torch.rand(2)), (torch.ones(2), torch.ones(2)))

    inputs = torch.rand(2, 2)
    v = torch.ones(2, 2)
    out["hvp"] = hvp(pow_reducer, inputs, v)
    out["vhp"] = vhp(pow_reducer, inputs, v)
    out["hvp tuple"] = hvp(pow_adder_reducer, (torch.rand(2), torch.rand(2)), (torch.ones(2), torch.ones(2)))

    def mixed(x, y):
        return (x.sin() * y ** 2).sum()

    inputs = (torch.rand(3), torch.rand(3))
    out["hessian mixed"] = hessian(mixed, inputs)
    out["hvp mixed"] = hvp(mixed, inputs, (torch.rand(3), torch.rand(3)))
    return out


def test_autograd_functional_docstring_examples():
    ours, theirs = run_both(functional_docstrings)
    assert_same(ours, theirs)
