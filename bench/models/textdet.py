"""A text detector shaped like DBNet with a MobileNet backbone (random
weights): MobileNetV2's features at strides 4, 8, 16 and 32, an FPN decoder
(1x1 laterals, nearest 2x upsampling and adds, 3x3 smoothing convs, each
level upsampled to stride 4 and concatenated) and DBNet's probability head,
whose two 2x2 stride-2 ConvTransposes bring the map back to full resolution.
"""

import torch
import torchvision
from torch import nn

from common import ModelSpec
from resnet50 import calibrate_batch_norm


class TextDetector(nn.Module):
    def __init__(self, width: float = 1.0, inner: int = 96):
        super().__init__()
        features = torchvision.models.mobilenet_v2(weights=None, width_mult=width).features
        # MobileNetV2's blocks up to each stride: 4 (index 3), 8 (6), 16 (13), 32 (18).
        self.stages = nn.ModuleList([features[:4], features[4:7], features[7:14], features[14:18]])
        channels = [self._channels(s) for s in self.stages]
        self.laterals = nn.ModuleList([nn.Conv2d(c, inner, 1, bias=False) for c in channels])
        self.smooth = nn.ModuleList([nn.Conv2d(inner, inner // 4, 3, padding=1, bias=False) for _ in channels])
        head = inner // 4
        self.head = nn.Sequential(
            nn.Conv2d(inner, head, 3, padding=1, bias=False),
            nn.BatchNorm2d(head),
            nn.ReLU(inplace=True),
            nn.ConvTranspose2d(head, head, 2, stride=2),
            nn.BatchNorm2d(head),
            nn.ReLU(inplace=True),
            nn.ConvTranspose2d(head, 1, 2, stride=2),
            nn.Sigmoid(),
        )

    @staticmethod
    def _channels(stage: nn.Module) -> int:
        convs = [m for m in stage.modules() if isinstance(m, nn.Conv2d)]
        return convs[-1].out_channels

    def forward(self, image):
        maps = []
        x = image
        for stage in self.stages:
            x = stage(x)
            maps.append(x)
        lat = [conv(m) for conv, m in zip(self.laterals, maps)]
        # Top-down: each level gets the coarser one, upsampled.
        for i in range(len(lat) - 2, -1, -1):
            lat[i] = lat[i] + nn.functional.interpolate(lat[i + 1], scale_factor=2.0, mode="nearest")
        levels = []
        for i, (conv, m) in enumerate(zip(self.smooth, lat)):
            y = conv(m)
            if i > 0:
                y = nn.functional.interpolate(y, scale_factor=float(2 ** i), mode="nearest")
            levels.append(y)
        return self.head(torch.cat(levels, dim=1))


def make(small: bool = False, seed: int = 0) -> ModelSpec:
    torch.manual_seed(seed)
    if small:
        model = TextDetector(width=0.5, inner=32)
        shape = (2, 3, 128, 128)
    else:
        model = TextDetector()
        shape = (1, 3, 640, 640)
    calibrate_batch_norm(model, (2,) + shape[1:])
    # Random weights leave the logits within a few hundredths of 0, every
    # probability near 0.5; scaled up, the map spans (0, 1) and a test of
    # it compares something.
    with torch.no_grad():
        model.head[-2].weight.mul_(30.0)
    image = torch.randn(*shape)
    return ModelSpec(
        name="textdet",
        module=model,
        inputs={"input": image},
        output_names=["probability"],
        dynamic_axes={"input": {0: "batch"}, "probability": {0: "batch"}},
    )
