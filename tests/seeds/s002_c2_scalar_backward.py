import torch
# Creating the graph
x = torch.tensor(1.0, requires_grad = True)
z = x ** 3
z.backward()        # Computes the gradient 
print(x.grad.data)  # Prints '3' which is dz/dx 
