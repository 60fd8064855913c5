# Task: y = relu(x @ W^T + b): nn.Linear(1024, 2048) + ReLU on a batch of 2048 (params: weight [out,in], bias [out]).
import torch
import torch.nn as nn

BATCH = 2048
IN_FEATURES = 1024
OUT_FEATURES = 2048


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
