# seed edit: indented code blocks of the prose (seed lines 12, 14, 18, 22), dedented
x = torch.tensor([0.0, 2.0, 8.0], requires_grad = True)

y = torch.tensor([5.0 , 1.0 , 7.0], requires_grad = True)

z = x * y

z.backward(torch.FloatTensor([1.0, 1.0, 1.0])
