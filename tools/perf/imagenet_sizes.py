#!/usr/bin/env python3
"""Sizes of the ONNX model-zoo ImageNet architectures at batch 1, from their
published layer tables, as tlcheck's limits count them.

For each net: parameters (= elements of all initializers; the ONNX file is
about 4 bytes each), the largest single tensor, the elements of all node
outputs (what ``graph-elements`` counts: every ONNX node becomes at least one
IR node with a declared shape; BatchNorm, ReLU, pools, Add and Concat are
separate nodes as the zoo's files have them), and the declared work
(``work``: per node, parents' elements plus output elements times the
contraction, in_channels/groups x kernel for a conv, in for a Gemm).

No weights are read or downloaded: only the architectures. Run:
``python3 tools/perf/imagenet_sizes.py`` (prints a Markdown table).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Net:
    """Accumulates the counts of one architecture while it is traced."""

    name: str
    params: int = 0
    largest: int = 0
    node_elems: int = 0
    work: int = 0
    nodes: int = 0
    acts: list[int] = field(default_factory=list)

    def node(self, out: int, parents: int, contraction: int = 1) -> None:
        self.nodes += 1
        self.node_elems += out
        self.work += parents + out * contraction
        self.acts.append(out)

    def tensor(self, n: int) -> None:
        self.params += n
        self.largest = max(self.largest, n)


Shape = tuple[int, int, int]  # C, H, W at batch 1


def conv(net: Net, x: Shape, cout: int, k: int, s: int = 1, p: int = 0,
         g: int = 1, bias: bool = True, bn: bool = False, relu: bool = True,
         kw: int | None = None, pw: int | None = None) -> Shape:
    c, h, w = x
    kw = k if kw is None else kw
    pw = p if pw is None else pw
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * pw - kw) // s + 1
    out = cout * oh * ow
    net.tensor(cout * (c // g) * k * kw)
    if bias:
        net.tensor(cout)
    net.node(out, c * h * w, (c // g) * k * kw)
    if bn:
        for _ in range(4):
            net.tensor(cout)
        net.node(out, out)
    if relu:
        net.node(out, out)
    return cout, oh, ow


def pool(net: Net, x: Shape, k: int, s: int, p: int = 0, ceil: bool = False) -> Shape:
    c, h, w = x
    if ceil:
        oh, ow = -(-(h + 2 * p - k) // s) + 1, -(-(w + 2 * p - k) // s) + 1
    else:
        oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    net.node(c * oh * ow, c * h * w, k * k)
    return c, oh, ow


def gap(net: Net, x: Shape) -> Shape:
    c, h, w = x
    net.node(c, c * h * w, h * w)
    return c, 1, 1


def fc(net: Net, n_in: int, n_out: int, relu: bool = False) -> int:
    net.tensor(n_in * n_out)
    net.tensor(n_out)
    net.node(n_out, n_in, n_in)
    if relu:
        net.node(n_out, n_out)
    return n_out


def elems(x: Shape) -> int:
    return x[0] * x[1] * x[2]


def lrn(net: Net, x: Shape) -> None:
    net.node(elems(x), elems(x), 5)


def alexnet() -> Net:
    n = Net("AlexNet (bvlc, 227x227 crops)")
    x = conv(n, (3, 227, 227), 96, 11, 4)
    lrn(n, x)
    x = pool(n, x, 3, 2)
    x = conv(n, x, 256, 5, 1, 2, g=2)
    lrn(n, x)
    x = pool(n, x, 3, 2)
    x = conv(n, x, 384, 3, 1, 1)
    x = conv(n, x, 384, 3, 1, 1, g=2)
    x = conv(n, x, 256, 3, 1, 1, g=2)
    x = pool(n, x, 3, 2)
    v = fc(n, elems(x), 4096, True)
    v = fc(n, v, 4096, True)
    fc(n, v, 1000)
    n.node(1000, 1000)  # softmax
    return n


def zfnet() -> Net:
    n = Net("ZFNet-512")
    x = conv(n, (3, 224, 224), 96, 7, 2, 1)
    lrn(n, x)
    x = pool(n, x, 3, 2, 1)
    x = conv(n, x, 256, 5, 2)
    lrn(n, x)
    x = pool(n, x, 3, 2, 1)
    x = conv(n, x, 384, 3, 1, 1)
    x = conv(n, x, 384, 3, 1, 1)
    x = conv(n, x, 256, 3, 1, 1)
    x = pool(n, x, 3, 2)
    v = fc(n, elems(x), 4096, True)
    v = fc(n, v, 4096, True)
    fc(n, v, 1000)
    n.node(1000, 1000)
    return n


def vgg19() -> Net:
    n = Net("VGG-19")
    x: Shape = (3, 224, 224)
    for reps, c in ((2, 64), (2, 128), (4, 256), (4, 512), (4, 512)):
        for _ in range(reps):
            x = conv(n, x, c, 3, 1, 1)
        x = pool(n, x, 2, 2)
    v = fc(n, elems(x), 4096, True)
    v = fc(n, v, 4096, True)
    fc(n, v, 1000)
    return n


def resnet50() -> Net:
    n = Net("ResNet-50 (v1)")
    x = conv(n, (3, 224, 224), 64, 7, 2, 3, bias=False, bn=True)
    x = pool(n, x, 3, 2, 1)
    for blocks, mid, stride in ((3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)):
        for b in range(blocks):
            s = stride if b == 0 else 1
            y = conv(n, x, mid, 1, 1, 0, bias=False, bn=True)
            y = conv(n, y, mid, 3, s, 1, bias=False, bn=True)
            y = conv(n, y, 4 * mid, 1, 1, 0, bias=False, bn=True, relu=False)
            if b == 0:
                conv(n, x, 4 * mid, 1, s, 0, bias=False, bn=True, relu=False)
            n.node(elems(y), 2 * elems(y))  # add
            n.node(elems(y), elems(y))  # relu
            x = y
    x = gap(n, x)
    fc(n, x[0], 1000)
    return n


def densenet121() -> Net:
    n = Net("DenseNet-121")
    x = conv(n, (3, 224, 224), 64, 7, 2, 3, bias=False, bn=True)
    x = pool(n, x, 3, 2, 1)
    growth = 32
    for i, layers in enumerate((6, 12, 24, 16)):
        for _ in range(layers):
            # BN-ReLU-Conv1x1(4k)-BN-ReLU-Conv3x3(k), then concat
            for _ in range(4):
                n.tensor(x[0])
            n.node(elems(x), elems(x))
            n.node(elems(x), elems(x))
            y = conv(n, x, 4 * growth, 1, bias=False, bn=True)
            y = conv(n, y, growth, 3, 1, 1, bias=False, relu=False)
            x = (x[0] + growth, x[1], x[2])
            n.node(elems(x), elems(x))  # concat
        if i < 3:
            for _ in range(4):
                n.tensor(x[0])
            n.node(elems(x), elems(x))
            n.node(elems(x), elems(x))
            x = conv(n, x, x[0] // 2, 1, bias=False, relu=False)
            x = pool(n, x, 2, 2)
    for _ in range(4):
        n.tensor(x[0])
    n.node(elems(x), elems(x))
    n.node(elems(x), elems(x))
    x = gap(n, x)
    fc(n, x[0], 1000)
    return n


def inception_module(n: Net, x: Shape, c1: int, r3: int, c3: int, r5: int, c5: int, pp: int,
                     bn: bool = False, double3: bool = False, stride: int = 1) -> Shape:
    outs = []
    if c1:
        outs.append(conv(n, x, c1, 1, bias=not bn, bn=bn))
    y = conv(n, x, r3, 1, bias=not bn, bn=bn)
    outs.append(conv(n, y, c3, 3, stride, 1, bias=not bn, bn=bn))
    y = conv(n, x, r5, 1, bias=not bn, bn=bn)
    if double3:
        y = conv(n, y, c5, 3, 1, 1, bias=not bn, bn=bn)
        outs.append(conv(n, y, c5, 3, stride, 1, bias=not bn, bn=bn))
    else:
        outs.append(conv(n, y, c5, 5, 1, 2, bias=not bn, bn=bn))
    if stride == 1:
        y = pool(n, x, 3, 1, 1)
        if pp:
            y = conv(n, y, pp, 1, bias=not bn, bn=bn)
        outs.append(y)
    else:
        outs.append(pool(n, x, 3, 2, 1))
    h, w = outs[0][1], outs[0][2]
    c = sum(o[0] for o in outs)
    n.node(c * h * w, c * h * w)  # concat
    return c, h, w


def googlenet() -> Net:
    n = Net("Inception v1 (GoogLeNet)")
    x = conv(n, (3, 224, 224), 64, 7, 2, 3)
    x = pool(n, x, 3, 2, ceil=True)
    lrn(n, x)
    x = conv(n, x, 64, 1)
    x = conv(n, x, 192, 3, 1, 1)
    lrn(n, x)
    x = pool(n, x, 3, 2, ceil=True)
    for cfg in ((64, 96, 128, 16, 32, 32), (128, 128, 192, 32, 96, 64)):
        x = inception_module(n, x, *cfg)
    x = pool(n, x, 3, 2, ceil=True)
    for cfg in ((192, 96, 208, 16, 48, 64), (160, 112, 224, 24, 64, 64), (128, 128, 256, 24, 64, 64),
                (112, 144, 288, 32, 64, 64), (256, 160, 320, 32, 128, 128)):
        x = inception_module(n, x, *cfg)
    x = pool(n, x, 3, 2, ceil=True)
    for cfg in ((256, 160, 320, 32, 128, 128), (384, 192, 384, 48, 128, 128)):
        x = inception_module(n, x, *cfg)
    x = gap(n, x)
    fc(n, x[0], 1000)
    n.node(1000, 1000)
    return n


def inception_v2() -> Net:
    """BN-Inception (Ioffe and Szegedy 2015, Figure 5 / Table 1)."""
    n = Net("Inception v2 (BN-Inception)")
    x = conv(n, (3, 224, 224), 64, 7, 2, 3, bias=False, bn=True)
    x = pool(n, x, 3, 2, 1)
    x = conv(n, x, 64, 1, bias=False, bn=True)
    x = conv(n, x, 192, 3, 1, 1, bias=False, bn=True)
    x = pool(n, x, 3, 2, 1)
    for cfg in ((64, 64, 64, 64, 96, 32), (64, 64, 96, 64, 96, 64)):
        x = inception_module(n, x, *cfg, bn=True, double3=True)
    x = inception_module(n, x, 0, 128, 160, 64, 96, 0, bn=True, double3=True, stride=2)
    for cfg in ((224, 64, 96, 96, 128, 128), (192, 96, 128, 96, 128, 128), (160, 128, 160, 128, 160, 128),
                (96, 128, 192, 160, 192, 128)):
        x = inception_module(n, x, *cfg, bn=True, double3=True)
    x = inception_module(n, x, 0, 128, 192, 192, 256, 0, bn=True, double3=True, stride=2)
    for cfg in ((352, 192, 320, 160, 224, 128), (352, 192, 320, 192, 224, 128)):
        x = inception_module(n, x, *cfg, bn=True, double3=True)
    x = gap(n, x)
    fc(n, x[0], 1000)
    return n


def squeezenet(version: str) -> Net:
    n = Net(f"SqueezeNet {version}")
    if version == "1.0":
        x = conv(n, (3, 224, 224), 96, 7, 2)
        x = pool(n, x, 3, 2, ceil=True)
        cfg = [(16, 64), (16, 64), (32, 128), "P", (32, 128), (48, 192), (48, 192), (64, 256), "P", (64, 256)]
    else:
        x = conv(n, (3, 224, 224), 64, 3, 2)
        x = pool(n, x, 3, 2, ceil=True)
        cfg = [(16, 64), (16, 64), "P", (32, 128), (32, 128), "P", (48, 192), (48, 192), (64, 256), (64, 256)]
    for c in cfg:
        if c == "P":
            x = pool(n, x, 3, 2, ceil=True)
            continue
        s, e = c
        y = conv(n, x, s, 1)
        a = conv(n, y, e, 1)
        b = conv(n, y, e, 3, 1, 1)
        x = (a[0] + b[0], a[1], a[2])
        n.node(elems(x), elems(x))
    x = conv(n, x, 1000, 1)
    x = gap(n, x)
    n.node(1000, 1000)
    return n


def shufflenet_v2() -> Net:
    """ShuffleNet v2 1.0x (Ma et al. 2018, Table 5)."""
    n = Net("ShuffleNet v2 (1.0x)")
    x = conv(n, (3, 224, 224), 24, 3, 2, 1, bias=False, bn=True)
    x = pool(n, x, 3, 2, 1)
    for reps, c in ((4, 116), (8, 232), (4, 464)):
        for r in range(reps):
            if r == 0:
                a = conv(n, x, x[0], 3, 2, 1, g=x[0], bias=False, bn=True, relu=False)
                a = conv(n, a, c // 2, 1, bias=False, bn=True)
                b = conv(n, x, c // 2, 1, bias=False, bn=True)
                b = conv(n, b, c // 2, 3, 2, 1, g=c // 2, bias=False, bn=True, relu=False)
                b = conv(n, b, c // 2, 1, bias=False, bn=True)
                x = (c, b[1], b[2])
            else:
                half = (c // 2, x[1], x[2])
                n.node(elems(half), elems(x))  # split
                b = conv(n, half, c // 2, 1, bias=False, bn=True)
                b = conv(n, b, c // 2, 3, 1, 1, g=c // 2, bias=False, bn=True, relu=False)
                conv(n, b, c // 2, 1, bias=False, bn=True)
            n.node(elems(x), elems(x))  # concat
            n.node(elems(x), elems(x))  # reshape
            n.node(elems(x), elems(x))  # transpose (channel shuffle)
            n.node(elems(x), elems(x))  # reshape
    x = conv(n, x, 1024, 1, bias=False, bn=True)
    x = gap(n, x)
    fc(n, x[0], 1000)
    return n


NETS = [resnet50, vgg19, densenet121, googlenet, inception_v2, lambda: squeezenet("1.0"),
        lambda: squeezenet("1.1"), shufflenet_v2, alexnet, zfnet]


def main() -> None:
    print("| net | parameters | largest tensor | node-output elements | declared work | nodes |")
    print("|---|---:|---:|---:|---:|---:|")
    for f in NETS:
        n = f()
        print(f"| {n.name} | {n.params:,} | {n.largest:,} | {n.node_elems:,} | {n.work:,} | {n.nodes} |")


if __name__ == "__main__":
    main()
