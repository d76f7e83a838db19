# This will happen if we provide x as argument of .backward()
import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2

w = torch.FloatTensor([1.0, 1.0])

y.backward(x)             # the tensor provide to .backward acts as the weights
# seed edit: the notebook displayed the bare trailing expression `x.grad`
print(x.grad)                    
# out: tensor([2., 8.])   # x as an argument outputs the wrong derivatives
