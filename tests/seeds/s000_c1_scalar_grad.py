import numpy as np
import torch
from torch.autograd import Variable

a = Variable(torch.FloatTensor([4.0]), requires_grad=True) 
out = a * a
out.backward()      # We are not assigning any unary tensor as argument
print(a.grad)
