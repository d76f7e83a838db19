# this example uses a 5x3 tensor
import numpy as np
import torch

x = np.array([[73, 67, 43],
              [91, 88, 64],
              [87, 134, 58],
              [102, 43, 37],
              [69, 96, 70]], dtype='float32')

x = torch.from_numpy(x)
x.requires_grad = True
print(x)

# this tensor represents the weights
w = torch.ones(5, 3, requires_grad=True) # external gradient

y = x**2

y.backward(w, retain_graph=True)
print(x.grad)
