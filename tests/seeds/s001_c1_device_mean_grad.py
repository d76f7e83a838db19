import torch

### Part I. device
if torch.cuda.is_available():
    device = torch.device("cuda:0")
else:
    device = torch.device("cpu")

print(device)

### Part II. example code
## Step 1. define how to calculate
x = torch.ones(
            (2, 2),
            device=device,
            requires_grad=True,
            dtype=torch.float32,
            )

# y.grad_fn = AddBackward
y = x + 2
# z.grad_fn = MultiBackward
z = y * y  * 3  # element-wise multiplcation
# out.grad_fn = MeanBackward
output = z.mean()
print("out (a scaler) = ", output.item())

## Step 2. calculate the `derivatives of out with respect to x`: dout/dx
output.backward()
print("dout/dx = ", x.grad)
