# Level 2 task: ConvTranspose3d(128->64, k4x4x4, stride 2, pad 1) -> clamp(-0.5, 0.5) -> * 10.0 -> logsumexp over channels.
# Sizes: x (4, 128, 8, 32, 32) -> output (4, 1, 16, 64, 64) (float32).
import torch
import torch.nn as nn

batch_size = 4
in_channels = 128
out_channels = 64
depth = 8
height = 32
width = 32
kernel_size = 4
stride = 2
padding = 1
clamp_min = -0.5
clamp_max = 0.5
scale_factor = 10.0


class Model(nn.Module):
    """ConvTranspose3d(128->64, k4x4x4, stride 2, pad 1), then clamp(-0.5, 0.5), * 10.0, logsumexp over channels."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, clamp_min, clamp_max, scale_factor):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        x = x * self.scale_factor
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, clamp_min, clamp_max, scale_factor]
