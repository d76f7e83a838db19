import numpy as np
import torch
from torch.autograd import Variable


a = Variable(torch.FloatTensor([[1,2,3],[4,5,6]]), requires_grad=True) 

# add this tensor for the "weights" or external gradient
w = torch.FloatTensor([[1,1,1],[1,1,1]])

out = a * a
out.backward(w)
print(a.grad)
