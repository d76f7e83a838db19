"""Train a small CNN (or, with --mlp, an MLP) on scikit-learn's handwritten digits.

A plain PyTorch training script: run it on ember with

    python -m ember run examples/train_digits.py [--mlp] [--epochs N] [--out DIR]

or under PyTorch with ``python examples/train_digits.py``. The 1,797 8x8 digit images ship
with scikit-learn (nothing is downloaded). It prints progress, then writes the loss/accuracy
curves as a PNG and the trained weights with ``torch.save``.
"""
import argparse
import os

import matplotlib
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch.utils.data import DataLoader, TensorDataset
from tqdm import tqdm

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)   # 16 x 4 x 4
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)   # 32 x 2 x 2
        return self.fc(x.flatten(1))


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def load_data(seed):
    digits = load_digits()
    x = torch.tensor(digits.images / 16.0, dtype=torch.float32).unsqueeze(1)  # N x 1 x 8 x 8
    y = torch.tensor(digits.target, dtype=torch.long)
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    test, train = perm[:360], perm[360:]
    return TensorDataset(x[train], y[train]), TensorDataset(x[test], y[test])


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(dim=1) == y).sum().item()
            total += len(y)
    model.train()
    return correct / total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mlp", action="store_true", help="train an MLP instead of the CNN")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--out", default="out", help="where the plot and weights are written")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    train_set, test_set = load_data(args.seed)
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True,
                              generator=torch.Generator().manual_seed(args.seed))
    test_loader = DataLoader(test_set, batch_size=256)
    model = mlp() if args.mlp else CNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.3)

    losses, accuracies = [], []
    for epoch in range(1, args.epochs + 1):
        total = 0.0
        bar = tqdm(train_loader, desc=f"epoch {epoch:2d}/{args.epochs}", leave=False)
        for x, y in bar:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(y)
            bar.set_postfix(loss=f"{loss.item():.3f}")
        scheduler.step()
        losses.append(total / len(train_set))
        accuracies.append(evaluate(model, test_loader))
        print(f"epoch {epoch:2d}  loss {losses[-1]:.4f}  test accuracy {accuracies[-1]:.2%}")

    os.makedirs(args.out, exist_ok=True)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax1.plot(range(1, args.epochs + 1), losses)
    ax1.set(xlabel="epoch", ylabel="training loss", title="loss")
    ax2.plot(range(1, args.epochs + 1), accuracies)
    ax2.set(xlabel="epoch", ylabel="test accuracy", title="accuracy")
    fig.tight_layout()
    name = "mlp" if args.mlp else "cnn"
    plot_path = os.path.join(args.out, f"digits_{name}.png")
    weights_path = os.path.join(args.out, f"digits_{name}.weights")
    fig.savefig(plot_path, dpi=100)
    torch.save(model.state_dict(), weights_path)
    print(f"final test accuracy {accuracies[-1]:.2%}")
    print(f"wrote {plot_path} and {weights_path}")


if __name__ == "__main__":
    main()
