# seed edit: definitions copied from cells In [21] (torch, device) and In [32] (x, the live x at this point) so this script runs alone
import torch

### Part I. device
if torch.cuda.is_available():
    device = torch.device("cuda:0")
else:
    device = torch.device("cpu")
x = torch.ones(
                8,
                dtype=torch.float32,
                requires_grad=True,
                device=device,
                )
# seed edit: end of copied definitions

# seed edit: fenced ```python block of the prose (seed lines 400-402), dedented
# 代码求 J_1^TJ_2^Tv
out.backward()
result = x.grad()
