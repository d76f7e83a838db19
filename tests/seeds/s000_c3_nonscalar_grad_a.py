import numpy as np
import torch
from torch.autograd import Variable


a = Variable(torch.FloatTensor([[1,2,3], [4,5,6]]), requires_grad=True) 
out = a * a
out.backward(a)
print(a.grad)
