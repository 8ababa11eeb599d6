"""MobileNetV2 (torchvision architecture, random weights)."""

import torch
import torchvision

from common import ModelSpec
from resnet50 import calibrate_batch_norm


def make(small: bool = False, seed: int = 0) -> ModelSpec:
    torch.manual_seed(seed)
    if small:
        model = torchvision.models.mobilenet_v2(weights=None, width_mult=0.5, num_classes=100)
        shape = (2, 3, 96, 96)
    else:
        model = torchvision.models.mobilenet_v2(weights=None)
        shape = (1, 3, 224, 224)
    calibrate_batch_norm(model, (8,) + shape[1:])
    image = torch.randn(*shape)
    return ModelSpec(
        name="mobilenetv2",
        module=model,
        inputs={"input": image},
        output_names=["logits"],
        dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
    )
