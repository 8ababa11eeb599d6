#!/usr/bin/env python3
"""Trains the small CNN behind the README's first example, on scikit-learn's
bundled 8x8 digits (no download), and exports it for classify_digits.

    /usr/bin/python3 examples/digits/train.py [--out examples/digits]

Writes digits_cnn.onnx (opset 17; input "image" float [N,1,8,8] with pixels
scaled to [0,1]; output "logits" [N,10]), test_images.npy (float32
[N,1,8,8]) and test_labels.npy (int64 [N]): the held-out split, never seen
in training. The seed is fixed, so a rerun with the same torch reproduces
the files. The test split is 15% (270 images) to keep all three files under
100 KB, small enough to commit.
"""

import argparse
import os
import time
from collections import Counter

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 0


class DigitsCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # 8x4x4
            nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 16x2x2
        )
        self.classifier = nn.Linear(16 * 2 * 2, 10)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.features(image), 1))


def accuracy(model: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(images).argmax(dim=1) == labels).float().mean().item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=HERE, help="output folder (default: %(default)s)")
    parser.add_argument("--epochs", type=int, default=60)
    args = parser.parse_args()

    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)  # thread count can change float summation order

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]  # [N,1,8,8] in [0,1]
    labels = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=0.15, random_state=SEED, stratify=labels)
    x_train, y_train = torch.from_numpy(x_train), torch.from_numpy(y_train)
    x_test_t, y_test_t = torch.from_numpy(x_test), torch.from_numpy(y_test)

    model = DigitsCnn()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    shuffle = torch.Generator().manual_seed(SEED)
    start = time.perf_counter()
    for _ in range(args.epochs):
        model.train()
        order = torch.randperm(len(x_train), generator=shuffle)
        for i in range(0, len(order), 64):
            batch = order[i:i + 64]
            optimizer.zero_grad()
            loss_fn(model(x_train[batch]), y_train[batch]).backward()
            optimizer.step()
    model.eval()
    print(f"trained {args.epochs} epochs on {len(x_train)} images in {time.perf_counter() - start:.1f} s")
    print(f"pytorch: train accuracy {accuracy(model, x_train, y_train):.4f}, "
          f"test accuracy {accuracy(model, x_test_t, y_test_t):.4f} "
          f"({int(round(accuracy(model, x_test_t, y_test_t) * len(y_test)))}/{len(y_test)})")

    os.makedirs(args.out, exist_ok=True)
    model_path = os.path.join(args.out, "digits_cnn.onnx")
    torch.onnx.export(model, x_test_t[:1], model_path, input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=17, do_constant_folding=True)
    np.save(os.path.join(args.out, "test_images.npy"), np.ascontiguousarray(x_test))
    np.save(os.path.join(args.out, "test_labels.npy"), np.ascontiguousarray(y_test))

    import onnx
    onnx_model = onnx.load(model_path)
    onnx.checker.check_model(onnx_model)
    ops = Counter(node.op_type for node in onnx_model.graph.node)
    print("ops:", ", ".join(f"{op} x{n}" for op, n in sorted(ops.items())))
    total = 0
    for name in ("digits_cnn.onnx", "test_images.npy", "test_labels.npy"):
        size = os.path.getsize(os.path.join(args.out, name))
        total += size
        print(f"wrote {os.path.join(args.out, name)} ({size} bytes)")
    print(f"total {total} bytes")


if __name__ == "__main__":
    main()
