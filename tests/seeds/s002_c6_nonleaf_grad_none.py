import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2
z = y**3

w = torch.FloatTensor([1.0, 1.0])

#y.backward(w, retain_graph=True)             # the tensor provide to .backward acts as the weights
#print(x.grad)

z.backward(w, retain_graph=True)
print(y.grad)
print(x.grad)

z.backward(w, retain_graph=True)
print(y.grad)
print(x.grad)

# why y is None?
