"""ResNet-50 (torchvision architecture, random weights)."""

import torch
import torchvision

from common import ModelSpec


def calibrate_batch_norm(model: torch.nn.Module, shape, steps: int = 3) -> None:
    """Fills BatchNorm running statistics from random batches so that the
    exported (folded) scales and shifts are not all identities."""
    model.train()
    with torch.no_grad():
        for _ in range(steps):
            model(torch.randn(*shape))
    model.eval()


def make(small: bool = False, seed: int = 0) -> ModelSpec:
    torch.manual_seed(seed)
    if small:
        # Same bottleneck blocks, one per stage, at a low resolution.
        model = torchvision.models.resnet.ResNet(torchvision.models.resnet.Bottleneck, [1, 1, 1, 1],
                                                 num_classes=100)
        shape = (2, 3, 64, 64)
    else:
        model = torchvision.models.resnet50(weights=None)
        shape = (1, 3, 224, 224)
    calibrate_batch_norm(model, (8,) + shape[1:])
    image = torch.randn(*shape)
    return ModelSpec(
        name="resnet50",
        module=model,
        inputs={"input": image},
        output_names=["logits"],
        dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
    )
