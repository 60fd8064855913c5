# Level 2 task: ConvTranspose2d(128->64, k2x2, stride 2) -> + input skip -> ReLU -> GroupNorm(8 groups).
# Sizes: x (64, 128, 64, 64), skip (64, 64, 128, 128) -> output (64, 64, 128, 128) (float32).
import torch
import torch.nn as nn

batch_size = 64
in_channels = 128
out_channels = 64
height = 64
width = 64
kernel_size = 2
stride = 2
num_groups = 8


class Model(nn.Module):
    """ConvTranspose2d(128->64, k2x2, stride 2), then + input skip, ReLU, GroupNorm(8 groups)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, num_groups):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride)
        self.gn = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x, skip):
        x = self.conv(x)
        x = x + skip
        x = torch.relu(x)
        x = self.gn(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    skip = torch.randn(batch_size, out_channels, 2 * height, 2 * width)
    return [x, skip]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, num_groups]
