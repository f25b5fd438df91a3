"""autograd_lab: a PyTorch-style automatic differentiation library, built in a course."""
