# seed edit: definitions copied from cell In [21] so this script runs alone
import torch

### Part I. device
if torch.cuda.is_available():
    device = torch.device("cuda:0")
else:
    device = torch.device("cpu")
# seed edit: end of copied definitions

### Step 1. Data Preparation
# input tensor
x = torch.ones(
                8,
                dtype=torch.float32,
                requires_grad=True,
                device=device,
                )
# output tensor
y = torch.zeros(
                10,
                dtype=torch.float32,
                requires_grad=True,
                device=device,
                )
# weights
W = torch.randn(
                (8, 10),
                dtype=torch.float32,
                requires_grad=True,
                device=device,
                )
# bias vector
b = torch.randn(10,
                dtype=torch.float32,
                requires_grad=True,
                device=device,
                ) 


### Step 2. Calculate
z = torch.matmul(x, W) + b # output
z.requires_grad_(True)
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

### Step 3. 
loss.backward()
print(x.grad)
print(W.grad)
print(b.grad)
print(y.grad)
