"""The seeds' one-layer network: logits, binary cross-entropy, backward, gradients.

Written for PyTorch; run it on ember with ``python -m ember run examples/seed_network.py``.
"""
import torch

torch.manual_seed(0)
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
print(device)

x = torch.ones(8, dtype=torch.float32, requires_grad=True, device=device)   # input
y = torch.zeros(10, dtype=torch.float32, requires_grad=True, device=device)  # target
W = torch.randn((8, 10), dtype=torch.float32, requires_grad=True, device=device)
b = torch.randn(10, dtype=torch.float32, requires_grad=True, device=device)

z = torch.matmul(x, W) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print("loss:", loss)
print("z.grad_fn:", z.grad_fn, "->", z.grad_fn.next_functions)

loss.backward()
print("dloss/dx =", x.grad)
print("dloss/db =", b.grad)
print("dloss/dy =", y.grad)
print("W.grad has shape", W.grad.shape, "and every row equals dloss/db:",
      bool((W.grad == b.grad).all()))
