"""The traced architectures reproduce the parameter counts their
publications and reference implementations state (torchvision's
``sum(p.numel() for p in model.parameters())``, Caffe's BVLC models), so the
limits derived from them count the right networks."""

from __future__ import annotations

import imagenet_sizes as s


def test_published_parameter_counts() -> None:
    assert s.vgg19().params == 143_667_240  # torchvision vgg19
    assert s.squeezenet("1.0").params == 1_248_424  # torchvision squeezenet1_0
    assert s.squeezenet("1.1").params == 1_235_496  # torchvision squeezenet1_1
    assert s.alexnet().params == 60_965_224  # Caffe bvlc_alexnet


def test_resnet50_counts_batchnorm_statistics() -> None:
    # torchvision resnet50 has 25,557,032 trainable parameters; an ONNX
    # file also stores each BatchNorm's running mean and variance.
    n = s.resnet50()
    assert n.params == 25_557_032 + 53_120
    assert n.nodes > 150


def test_defaults_admit_every_net() -> None:
    # The limits package defaults (limits/limits.go).
    elements, graph_elements, work, onnx_elements = 1 << 27, 1 << 26, 1 << 35, 160 << 20
    for f in s.NETS:
        n = f()
        assert n.largest <= elements, n.name
        assert n.node_elems <= graph_elements, n.name
        assert n.work <= work, n.name
        assert n.params <= onnx_elements, n.name
