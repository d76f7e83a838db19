# seed edit: definitions copied from the earlier cells of this notebook (In [0]) so this script runs alone
import numpy as np
import torch
# seed edit: end of copied definitions

# From an example on linear regression
x = np.arange(1,16,1)
x = torch.from_numpy(x)
x = x.float()            # torch.Size([15])
print(x.shape)
x = x.view(-1, 3)        # transform tensor to a 5x3 
x.requires_grad = True   # torch.Size([5, 3])
print(x)

# w represents the weights and y the model. very, very simple example
# using size of x, we ensure w has the same size as x
w = torch.ones((x.size()[0], x.size()[1]), requires_grad = True)
y = x**2

y.backward(w)
print(x.grad)
