# seed edit: definitions copied from cell In [21] so this script runs alone
import torch

### Part I. device
if torch.cuda.is_available():
    device = torch.device("cuda:0")
else:
    device = torch.device("cpu")
# seed edit: end of copied definitions

x = torch.tensor(
            [1, 2],
            device=device,
            requires_grad=True,
            dtype=torch.float32,
            )

y = torch.empty(3)
y[0] = x[0]**2
y[1] = x[0]**2 + 5*x[1]**2
y[2] = 3*x[1]
print("y = ", y)

v = torch.ones(
            3, 
            device=device,
            requires_grad=True,
            dtype=torch.float32,
            )

y.backward(v)
print("x.grad = ", x.grad)
