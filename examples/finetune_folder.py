"""Fine-tune the last layer of a ResNet-18 on a small generated ImageFolder, torchvision style.

    python examples/finetune_folder.py [--root DIR] [--epochs N] [--out DIR]

The images are generated into --root (default: a temporary folder, removed at the end); the grid of
evaluated images is written to --out/grid.png (default ./finetune_folder_out).
Written as ordinary PyTorch/torchvision code: only the two imports differ.
"""
import argparse
import os
import tempfile

import numpy as np
from PIL import Image

import funcgrad as torch
import funcgrad.vision as torchvision
from funcgrad import nn
from funcgrad.utils.data import DataLoader
from funcgrad.vision import transforms


def make_folder(root: str, n_per_class: int = 12, size: int = 32) -> None:
    """Three classes that differ in colour and stripe direction, with noise."""
    rng = np.random.default_rng(0)
    for k, name in enumerate(["red_h", "green_v", "blue_d"]):
        os.makedirs(os.path.join(root, name), exist_ok=True)
        for i in range(n_per_class):
            img = rng.integers(0, 60, (size, size, 3)).astype(np.uint8)
            img[..., k] += 150
            yy, xx = np.mgrid[:size, :size]
            stripes = [(yy // 4) % 2, (xx // 4) % 2, ((xx + yy) // 4) % 2][k].astype(bool)
            img[stripes] //= 2
            Image.fromarray(img).save(os.path.join(root, name, f"{i}.png"))


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--root", default=None, help="where to generate the images (default: a temporary folder)")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--out", default=os.path.join(os.getcwd(), "finetune_folder_out"),
                   help="folder for grid.png (default ./finetune_folder_out)")
    args = p.parse_args(argv)
    if args.root is not None:
        return train(args, args.root)
    with tempfile.TemporaryDirectory(prefix="fg_folder_") as root:
        return train(args, root)


def train(args, root: str) -> float:
    torch.manual_seed(0)
    make_folder(root)

    tf = transforms.Compose([transforms.RandomHorizontalFlip(), transforms.ToTensor(),
                             transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    data = torchvision.datasets.ImageFolder(root, transform=tf)
    loader = DataLoader(data, batch_size=12, shuffle=True)

    model = torchvision.models.resnet18()
    model.requires_grad_(False)
    model.fc = nn.Linear(512, len(data.classes))
    opt = torch.optim.SGD(model.fc.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    model.eval()  # the backbone is frozen: BatchNorm keeps its running statistics; only fc learns
    for epoch in range(args.epochs):
        correct = total = 0
        for x, y in loader:
            opt.zero_grad()
            out = model(x)
            loss = loss_fn(out, y)
            loss.backward()
            opt.step()
            correct += int((out.argmax(1) == y).sum())
            total += len(y)
        print(f"epoch {epoch + 1}: loss {float(loss):.4f} train accuracy {correct / total:.3f}")

    with torch.no_grad():
        xs, ys = next(iter(DataLoader(data, batch_size=len(data))))
        acc = float((model(xs).argmax(1) == ys).float().mean())
    print(f"eval accuracy {acc:.3f}")
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    os.makedirs(args.out, exist_ok=True)
    grid = os.path.join(args.out, "grid.png")
    torchvision.utils.save_image(xs[:12] * std + mean, grid, nrow=6)
    print(f"saved {os.path.abspath(grid)}")
    return acc


if __name__ == "__main__":
    main()
