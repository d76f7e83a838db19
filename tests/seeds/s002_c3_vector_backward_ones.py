import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2

y.backward(torch.FloatTensor([1.0, 1.0])) # the tensor provide to .backward acts as a weight
# seed edit: the notebook displayed the bare trailing expression `x.grad`
print(x.grad)
