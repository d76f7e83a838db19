# seed edit: definitions copied from cell In [21] so this script runs alone
import torch

### Part I. device
if torch.cuda.is_available():
    device = torch.device("cuda:0")
else:
    device = torch.device("cpu")
# seed edit: end of copied definitions

# Step 1. init torch.tensor x
x = torch.ones(
            (2, 2),
            device=device,
            requires_grad=True,
            dtype=torch.float32,
            )

def calculate_output(x: torch.tensor):
    y = x + 2
    z = y * y * 3   # element-wise multiplication
    output = z.mean()
    output.backward()


# Step 2. first time
calculate_output(x=x)
print("First:\n\tdout/dx = ", x.grad)
print("")


# Step 3. second time
calculate_output(x=x)
print("Second:\n\tdout/dx = ", x.grad)
