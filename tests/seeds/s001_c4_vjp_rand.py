# seed edit: definitions copied from cell In [21] so this script runs alone
import torch

### Part I. device
if torch.cuda.is_available():
    device = torch.device("cuda:0")
else:
    device = torch.device("cpu")
# seed edit: end of copied definitions

import torch

x = torch.rand(
            3,
            device=device,
            requires_grad=True,
            dtype=torch.float32,
            )
y = x + 2


# y.backward()
# Abort Error : 
#       RuntimeError: grad can be implicitly created only for scalar outputs

# v: `vector` in `Jacobaian Matrix * vector`
v = torch.rand(
            3,
            device=device,
            requires_grad=True,
            dtype=torch.float32,
            )


y.backward(v)
print(x.grad)
