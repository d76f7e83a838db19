# equivalent example
import numpy as np
import torch
from torch.autograd import Variable

a = Variable(torch.FloatTensor([4.0]), requires_grad=True) 
out = a * a
out.backward(torch.tensor([1.0]))      # assigning a unary tensor as argument 
print(a.grad)
