# https://www.javatpoint.com/gradient-with-pytorch
import torch

x = torch.tensor([2.0, 2.0], requires_grad=True) # independent variable
z = torch.tensor([4.0, 4.0], requires_grad=True) # independent variable

y = x**2 + z**3  
# Its partial derivatives are:
#    dy/dx = 2x;     
#    dy/dz = 3z^2; 

w = torch.FloatTensor([1.0, 1.0])  # weights

y.backward(w, retain_graph=True)
print(x.grad)
print(z.grad)

y.backward(w, retain_graph=True)
print(x.grad)
print(z.grad)

y.backward(w, retain_graph=True)
print(x.grad)
print(z.grad)

# at every pass, the derivative is accumulated
# there is no second derivative calculated
