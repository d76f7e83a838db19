# https://www.javatpoint.com/gradient-with-pytorch
import torch

x = torch.tensor([2.0, 2.0], requires_grad=True) # independent variable
z = torch.tensor([4.0, 4.0], requires_grad=True) # independent variable

y = x**2 + z**3  
# dy/dx = 2x;     
# dy/dz = 3z^2; 


w = torch.FloatTensor([1.0, 1.0])  # weights

y.backward(w)
print(x.grad)
print(z.grad)

try: 
   y.backward(w)
   print(x.grad)
   print(z.grad)
except RuntimeError:
   print("Trying backward a second time when buffers are empty")

try:
    y.backward(w)
except RuntimeError:
    print("Trying backward a second time when buffers are empty")
else: 
    print(x.grad)
    print(z.grad)

# at every pass, the derivative is accumulated
# there is no second derivative calculated
